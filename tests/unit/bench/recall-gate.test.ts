// The recall gate: the LoCoMo retrieval bench's product mode on the shared files may not fall more
// than TOLERANCE below the committed baseline (bench/baselines/recall.json). A change that moves it
// on purpose changes the baseline in a commit of its own that says why. Where the shared data is
// absent (a checkout without ../shared), the gate says so and skips, as the data's README asks.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureRecall, readBaseline, shortfalls, TOLERANCE } from '../../../bench/lib/recall-gate';

const DATA = resolve(__dirname, '../../../../shared/data/locomo');
const present = existsSync(DATA);
if (!present) console.warn(`recall gate skipped: no LoCoMo data at ${DATA}`);

describe.skipIf(!present)('the recall gate (LoCoMo, shared files)', () => {
  it(`turn recall at 300 and 1,000 words within ${TOLERANCE} of the baseline, every memory citing its turns`, async () => {
    const base = readBaseline();
    const now = await measureRecall(DATA);
    expect(now.data).toEqual(base.data);
    expect(shortfalls(now, base)).toEqual([]);
    // A rise is welcome, and worth a new baseline: said, not failed.
    if (now.turn['300'] > base.turn['300'] + TOLERANCE)
      console.warn(`recall at 300 words rose to ${now.turn['300']}: commit a new baseline`);
  }, 600_000);
});

describe('the gate compares what it is given', () => {
  const base = { turn: { '300': 0.78, '1000': 0.867 }, data: [], memories: 1, commit: 'c', why: '' };
  it('fails a fall of more than the tolerance at either budget, and any memory without its turns', () => {
    const now = { turn: { '300': 0.78, '1000': 0.867 }, data: [], memories: 1, memoriesWithoutSources: 0 };
    expect(shortfalls(now, base)).toEqual([]);
    expect(shortfalls({ ...now, turn: { '300': 0.769, '1000': 0.867 } }, base)).toHaveLength(1);
    expect(shortfalls({ ...now, turn: { '300': 0.771, '1000': 0.856 } }, base)).toHaveLength(1);
    expect(shortfalls({ ...now, memoriesWithoutSources: 1 }, base)).toHaveLength(1);
  });
});
