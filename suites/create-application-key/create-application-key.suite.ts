import { registerChecks } from '../register.js';
import { checksOf } from '../index.js';

registerChecks((settings) => checksOf('create-application-key', settings.pagination));
