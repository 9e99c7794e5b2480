import { registerChecks } from '../register.js';
import { errorChecks } from './checks.js';

registerChecks(errorChecks);
