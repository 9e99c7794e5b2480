// Every list check's rule, held to one answer: how the exploration (explore.ts), the readings of
// an illegal request (illegal.ts) and the traffic the suite observes (suites/observed.ts) judge
// what they see. The rules are the checks' own (each check's `page`, written beside its fixed
// probes, which call it too): a rule written once is judged everywhere.
import { listChecks } from './checks.js';
import { Answer, type PageFinding } from './answer.js';
import { predict, type ListModel, type ListQuery, type Prediction } from './model.js';
import type { ListPage } from './pages.js';

export interface Disagreement {
  /** The check whose rule the answer breaks. */
  checkId: string;
  /** What the answer should have been and what it was, in words. */
  message: string;
  expected: string;
  actual: string;
  /** Rests on the model's knowledge of the records (withdrawn if the list turns out to have changed). */
  byModel: boolean;
}

/** The rule of list.params.invalid, for an answer to invalid paging parameters. */
const INVALID = listChecks.find((c) => c.illegal)!;

/**
 * The list checks that judge traffic they did not send: those with a rule for one answer (and
 * list.offset.traversal, which observed traffic also shows across the pages of one query), and
 * list.params.invalid, whose rule judges a request with invalid paging parameters: what `--list`
 * marks as judged from traffic.
 */
export const OBSERVED_LIST_CHECKS: ReadonlySet<string> = new Set([...listChecks.filter((c) => c.page && !c.needsModel).map((c) => c.id), INVALID.id]);

/**
 * Holds one answer to `q` to every list check's rule. Returns what it broke, each under the check
 * of its rule, the most basic cause first; an empty list where the answer agrees, or where
 * nothing can be judged of it (a refusal of a request the target does not support). `examined`,
 * when given, gets the id of every check whose rule bore on the answer, broken or not.
 *
 * With a model that knows no record (observerModel) and the prediction OPAQUE, it judges what
 * one answer shows by itself: how judged traffic is held to the same rules.
 */
export function judge(
  m: ListModel,
  q: ListQuery,
  page: ListPage,
  predicted: (q: ListQuery) => Prediction = (x) => predict(m, x),
  examined?: Set<string>,
): Disagreement[] {
  const a = new Answer(m, q, page, predicted);
  const found: Array<PageFinding & { checkId: string }> = [];
  // Every check's rule, read from the check as it stands, in the order of the catalogue.
  for (const c of listChecks) {
    const own = c.page?.(a);
    if (own === undefined) continue;
    examined?.add(c.id);
    for (const f of own) found.push({ ...f, checkId: c.id });
  }
  // Stable: within a phase, the catalogue's order.
  found.sort((x, y) => x.phase - y.phase);
  return found.map((f) => ({ checkId: f.checkId, message: f.message, expected: f.expected, actual: f.actual, byModel: f.byModel ?? false }));
}

/** An answer to invalid paging parameters (`what`), held to list.params.invalid's rule. */
export function judgeInvalid(page: ListPage, what: string): Disagreement | undefined {
  const f = INVALID.illegal!(page, what);
  return f && { checkId: INVALID.id, message: f.message, expected: f.expected, actual: f.actual, byModel: false };
}
