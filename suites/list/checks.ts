import { limitChecks } from './limits.js';
import type { WrittenListCheck } from './list-check.js';
import { metaChecks } from './meta.js';
import { orderChecks } from './order.js';
import { traversalChecks } from './traversal.js';

export const listChecks: WrittenListCheck[] = [...metaChecks, ...limitChecks, ...orderChecks, ...traversalChecks];
