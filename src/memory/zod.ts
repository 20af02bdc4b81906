// zod, configured once for the app: no probe of `eval` (the Content Security Policy refuses it and
// the browser would report a violation on every start). Import z from here, not from 'zod'.
import { z } from 'zod';

z.config({ jitless: true });

export { z };
