// Demo records an earlier version loaded into the user's own memory are found
// and removed in one change, and nothing of the user's own goes with them.
import { describe, expect, it } from 'vitest';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { buildDemo, DEMO_PREFIX } from '../../../src/services/demo/demo';
import { findLegacyDemo } from '../../../src/services/space';
import type { Memory } from '../../../src/memory/types';

describe('findLegacyDemo', () => {
  it('finds nothing in a memory without demo records', async () => {
    expect(await findLegacyDemo(new InMemoryRepository())).toBeUndefined();
  });

  it("removes every demo record and keeps the user's own, links to the demo included", async () => {
    const repo = new InMemoryRepository();
    const demo = buildDemo(Date.UTC(2025, 0, 1));
    await repo.apply({ sessions: demo.sessions, turns: demo.turns, memories: demo.memories, edges: demo.edges });
    const own: Memory = {
      id: 'mem:own',
      kind: 'user-trait',
      text: 'You grow tomatoes.',
      time: Date.UTC(2025, 0, 2),
      sourceTurnIds: ['turn:1'],
      sessionId: 'ses:1',
      edited: false,
      createdAt: Date.UTC(2025, 0, 2),
    };
    await repo.apply({
      sessions: [{ id: 'ses:1', title: 'Tomatoes', startedAt: own.time, lastActivityAt: own.time, status: 'memorised' }],
      turns: [{ id: 'turn:1', sessionId: 'ses:1', index: 0, role: 'user', text: 'I grow tomatoes', time: own.time, status: 'complete' }],
      memories: [own],
      // A real memory linked to a demo one (the old demo shared the graph with real memories).
      edges: [
        { id: 'edge:demo->own', from: `${DEMO_PREFIX}m:tea`, to: own.id, relation: 'SameTopic', origin: 'model', createdAt: own.time },
      ],
    });

    const found = await findLegacyDemo(repo);
    expect(found).toMatchObject({ sessions: demo.sessions.length, memories: demo.memories.length });
    await repo.apply(found!.change);

    expect((await repo.listSessions()).map((s) => s.id)).toEqual(['ses:1']);
    expect((await repo.listMemories()).map((m) => m.id)).toEqual(['mem:own']);
    expect(await repo.listEdges()).toEqual([]);
    expect(await repo.listTurns('ses:1')).toHaveLength(1);
    for (const s of demo.sessions) expect(await repo.listTurns(s.id)).toEqual([]);
    expect(await findLegacyDemo(repo)).toBeUndefined();
  });
});
