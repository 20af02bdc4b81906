// The demo's ids, apart from its script: space.ts needs them at startup (to find demo records in
// the user's own memory), while the script itself loads only when the demo is opened.
import type { Id } from '../../memory/types';

export const DEMO_PREFIX = 'demo:';

export const demoSessionId = (n: number): Id => `${DEMO_PREFIX}s${n}`;
