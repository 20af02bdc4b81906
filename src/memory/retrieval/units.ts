// Retrievable units for segments and single turns (memories: memoryUnit in ingest/memorise.ts).
import type { Segment, Turn } from '../types';
import type { IndexedUnit } from './types';

/** A raw segment: the prompt gets the original words, the index the denoised copy. */
export function segmentUnit(s: Segment): IndexedUnit {
  return {
    id: s.id,
    kind: 'segment',
    text: s.text,
    indexText: s.indexText,
    time: s.time,
    sessionId: s.sessionId,
    sourceTurnIds: s.turnIds,
  };
}

/**
 * A single turn (the baseline unit of the retrieval benchmark). The speaker's name is indexed with
 * the words, as memories keep the names of the people they are about.
 */
export function turnUnit(t: Turn, speaker: string = t.role): IndexedUnit {
  return {
    id: t.id,
    kind: 'turn',
    text: `${speaker}: ${t.text}`,
    time: t.time,
    sessionId: t.sessionId,
    sourceTurnIds: [t.id],
  };
}
