import { describe, expect, it } from 'vitest';
import { refuse } from '../../../relay/limits.mjs';
import { storeUnavailable } from '../../../relay/store-pg.mjs';
import { refusalWords } from '../../../src/services/sync/relay-refusal';

describe("the relay's refusals in the app's words", () => {
  // Every refusal the relay can give (relay/limits.mjs) has its own words: a new one without fails here.
  const all = [...Object.values(refuse).map((make) => make(3 * 1024 * 1024)), storeUnavailable()];

  it.each(all.map((r) => [r.reason, r] as const))('%s', (_reason, r) => {
    const words = refusalWords(r.status, { reason: r.reason, error: r.message, ...r.extra });
    expect(words).not.toMatch(/^The relay answered/);
    expect(words).toMatch(/^[A-Z].*\.$/);
  });

  it('says how full and for how long, and falls back to the status for a reason it does not know', () => {
    expect(refusalWords(507, { reason: 'room-full', limit: 256 * 1024 * 1024 })).toBe(
      'Your relay is full: your sync room holds its limit of 256 MiB. Changes stay on this device; whoever runs the relay can give it more room.',
    );
    expect(refusalWords(429, { reason: 'too-many-posts', retryAfter: 42 })).toBe(
      'Your relay is busy: it takes no more changes from here for 42 seconds.',
    );
    expect(refusalWords(418, { reason: 'teapot' })).toBe('The relay answered 418.');
    expect(refusalWords(500, undefined)).toBe('The relay answered 500.');
  });
});
