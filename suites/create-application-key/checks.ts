import type { Check } from '../../lib/check.js';
import { nameChecks } from './names.js';
import { openShapeCheck, rejectionChecks } from './rejections.js';
import { responseChecks } from './response.js';

export const createChecks: Check[] = [...responseChecks, ...nameChecks, ...rejectionChecks, openShapeCheck];
