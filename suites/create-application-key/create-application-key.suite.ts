import { registerChecks } from '../register.js';
import { createChecks } from './checks.js';

registerChecks(createChecks);
