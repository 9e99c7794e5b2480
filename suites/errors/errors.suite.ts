import { registerChecks } from '../register.js';
import { checksOf } from '../index.js';

registerChecks((settings) => checksOf('errors', settings.pagination));
