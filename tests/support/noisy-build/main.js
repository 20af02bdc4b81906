import { helper } from './helper.js';

console.log(helper);
void import('./lazy.js').then((m) => console.log(m.lazy));
