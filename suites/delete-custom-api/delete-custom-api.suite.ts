import { registerChecks } from '../register.js';
import { checksOf } from '../index.js';

registerChecks((settings) => checksOf('delete-custom-api', settings.pagination));
