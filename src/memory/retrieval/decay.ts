// LD-Agent's time decay (seed 001): an event memory's relevance fades with the time since it
// happened, so among equally good matches the recent ones come first. Traits and segments do not
// fade (a lasting fact stays true until superseded; a passage is the evidence itself). The fused
// score is multiplied by 2^(-age / halfLife) and the ranking re-sorted.
import type { Millis } from '../types';
import type { SearchHit } from './types';

const DAY = 86_400_000;

export function decayed(hits: readonly SearchHit[], now: Millis, halfLifeDays: number, isEvent: (hit: SearchHit) => boolean): SearchHit[] {
  if (!(halfLifeDays > 0)) return [...hits];
  const halfLife = halfLifeDays * DAY;
  const weight = (h: SearchHit) => (isEvent(h) ? Math.pow(2, -Math.max(0, now - h.unit.time) / halfLife) : 1);
  return hits
    .map((h, i) => ({ h, score: h.score.fused * weight(h), i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ h, score }) => ({ ...h, score: { ...h.score, fused: score } }));
}
