import type { WrittenCheck } from '../../lib/runner/index.js';
import { nameChecks } from './names.js';
import { memberCaseCheck, openShapeCheck, rejectionChecks } from './rejections.js';
import { responseChecks } from './response.js';

export const createChecks: WrittenCheck[] = [...responseChecks, ...nameChecks, ...rejectionChecks, memberCaseCheck, openShapeCheck];
