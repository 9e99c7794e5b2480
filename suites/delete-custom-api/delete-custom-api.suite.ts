import { registerChecks } from '../register.js';
import { deleteChecks } from './checks.js';

registerChecks(deleteChecks);
