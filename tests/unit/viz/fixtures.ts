// Small builders of memories and edges for the viz tests.
import type { Edge, Memory, MemoryKind } from '../../../src/memory/types';

export const DAY = 86_400_000;
export const KINDS: MemoryKind[] = ['event', 'user-trait', 'assistant-trait', 'note'];

export function mem(id: string, time: number, kind: MemoryKind = 'event', extra: Partial<Memory> = {}): Memory {
  return { id, kind, text: `memory ${id}`, time, sourceTurnIds: [], sessionId: 's', edited: false, createdAt: time, ...extra };
}

export function edge(id: string, from: string, to: string, relation: Edge['relation'] = 'Cause'): Edge {
  return { id, from, to, relation, origin: 'model', createdAt: 0 };
}
