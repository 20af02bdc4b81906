// LD-Agent's time decay: event memories fade with age, traits and segments do not; off at 0.
import { describe, expect, it } from 'vitest';
import { decayed } from '../../../src/memory/retrieval/decay';
import type { SearchHit } from '../../../src/memory/retrieval/types';

const DAY = 86_400_000;
const now = 1_000 * DAY;
const hit = (id: string, daysAgo: number, fused: number, kind: 'memory' | 'segment' = 'memory'): SearchHit => ({
  unit: { id, kind, text: id, time: now - daysAgo * DAY, sessionId: 's', sourceTurnIds: [] },
  score: { unitId: id, unitKind: kind, fused },
});

describe('decayed', () => {
  const hits = [
    hit('old-event', 400, 0.03),
    hit('new-event', 10, 0.025),
    hit('old-trait', 400, 0.028),
    hit('old-seg', 400, 0.027, 'segment'),
  ];
  const isEvent = (h: SearchHit) => h.unit.id.endsWith('event');

  it("halves an event memory's score per half-life and re-ranks; traits and segments keep theirs", () => {
    const r = decayed(hits, now, 100, isEvent);
    expect(r.map((h) => h.unit.id)).toEqual(['old-trait', 'old-seg', 'new-event', 'old-event']);
    expect(r.find((h) => h.unit.id === 'old-event')!.score.fused).toBeCloseTo(0.03 * 2 ** -4, 8);
    expect(r.find((h) => h.unit.id === 'new-event')!.score.fused).toBeCloseTo(0.025 * 2 ** -0.1, 8);
    expect(r.find((h) => h.unit.id === 'old-trait')!.score.fused).toBe(0.028);
  });

  it('changes nothing when off, and never boosts a memory from the future', () => {
    expect(decayed(hits, now, 0, isEvent)).toEqual(hits);
    const future = [hit('future-event', -5, 0.01)];
    expect(decayed(future, now, 30, isEvent)[0]!.score.fused).toBe(0.01);
  });
});
