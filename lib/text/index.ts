// Text: what came from a target made safe to show, and the word a user most likely meant.
export { closest, didYouMean, errorWord, gist, inert, isHtml, printable } from './text.js';
