// Small builders of memories and edges for the viz tests.
import type { MemoryGraph } from '../../../src/memory/graph';
import type { Edge, Memory, MemoryKind } from '../../../src/memory/types';

export const DAY = 86_400_000;
export const KINDS: MemoryKind[] = ['event', 'user-trait', 'assistant-trait', 'note'];

export function mem(id: string, time: number, kind: MemoryKind = 'event', extra: Partial<Memory> = {}): Memory {
  return { id, kind, text: `memory ${id}`, time, sourceTurnIds: [], sessionId: 's', edited: false, createdAt: time, ...extra };
}

export function edge(id: string, from: string, to: string, relation: Edge['relation'] = 'Cause'): Edge {
  return { id, from, to, relation, origin: 'model', createdAt: 0 };
}

/** Components as the memory graph's union-find sees them: the oracle for viz/components.ts. */
export function graphComponents(memories: readonly Memory[], graph: MemoryGraph): string[][] {
  const groups = new Map<string, string[]>();
  for (const m of memories) {
    const root = graph.componentId(m.id) ?? m.id;
    const g = groups.get(root);
    if (g) g.push(m.id);
    else groups.set(root, [m.id]);
  }
  return [...groups.values()];
}
