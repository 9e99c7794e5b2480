// An HTTP proxy in front of the reference server that relays every answer as it came, except
// one: armed with a plan, it mutates the k-th answer it relays (counting from 0 since it was
// armed). It also keeps what it relayed, so a dry run sizes the cases.
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mutate, type Answer, type Mutation } from './mutate.js';

export interface Plan {
  k: number;
  mutation: Mutation;
  pick: number;
}

export interface Relayed {
  /** `GET /v2/accounts?page[limit]=5 -> 200`, as the upstream answered it. */
  line: string;
  /** As the upstream answered it (absent until it has). */
  answer?: Answer;
}

const HOP = ['connection', 'keep-alive', 'transfer-encoding'];

function without<T>(headers: Record<string, T>, names: readonly string[]): Record<string, T> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)));
}

export class AnswerProxy {
  readonly url: string;
  readonly #server: Server;
  readonly #agent = new Agent({ keepAlive: true });
  readonly #upstream: URL;
  #plan?: Plan;
  #relayed: Relayed[] = [];
  #mutated?: { line: string; what: string };

  private constructor(server: Server, upstream: string) {
    this.#server = server;
    this.#upstream = new URL(upstream);
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(upstream: string): Promise<AnswerProxy> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const proxy = new AnswerProxy(server, upstream);
    server.on('request', (req, res) => proxy.#relay(req, res));
    return proxy;
  }

  /** Starts a case: answers count from 0 again; with a plan, its k-th answer is mutated. */
  arm(plan?: Plan): void {
    this.#plan = plan;
    this.#relayed = [];
    this.#mutated = undefined;
  }

  /** What was relayed since `arm`, in order. */
  get relayed(): readonly Relayed[] {
    return this.#relayed;
  }

  /** The answer the plan mutated, once it has gone out. */
  get mutated(): { line: string; what: string } | undefined {
    return this.#mutated;
  }

  #relay(req: IncomingMessage, res: ServerResponse): void {
    const n = this.#relayed.length;
    const slot: Relayed = { line: `${req.method} ${req.url}` };
    // Numbered on arrival: the suite runs with concurrency 1, so arrival order is answer order.
    this.#relayed.push(slot);
    const headers = without(req.headers, HOP);
    const up = request(
      { host: this.#upstream.hostname, port: this.#upstream.port, method: req.method, path: req.url, headers, agent: this.#agent },
      (upRes) => {
        const chunks: Buffer[] = [];
        upRes.on('data', (c: Buffer) => chunks.push(c));
        upRes.on('end', () => {
          const answer: Answer = {
            status: upRes.statusCode ?? 502,
            // The length is recomputed for a body the plan may change.
            headers: without(upRes.headers, [...HOP, 'content-length']),
            body: Buffer.concat(chunks),
          };
          slot.line += ` -> ${answer.status}`;
          slot.answer = answer;
          const plan = this.#plan;
          const changed = plan?.k === n ? mutate(answer, plan.mutation, plan.pick) : undefined;
          if (changed) this.#mutated = { line: slot.line, what: changed.what };
          send(res, changed?.answer ?? answer);
        });
        upRes.on('error', (err) => res.destroy(err));
      },
    );
    // A relay that fails shows as a broken connection (an error outcome), never as an answer.
    up.on('error', (err) => res.destroy(err));
    req.pipe(up);
  }

  async close(): Promise<void> {
    this.#agent.destroy();
    await new Promise<void>((r) => {
      this.#server.close(() => r());
      this.#server.closeAllConnections();
    });
  }
}

function send(res: ServerResponse, a: Answer): void {
  const bodiless = a.status === 204 || a.status === 304 || a.status < 200;
  res.writeHead(a.status, bodiless ? a.headers : { ...a.headers, 'content-length': a.body.length });
  res.end(bodiless ? undefined : a.body);
}
