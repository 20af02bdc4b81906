// A remote write (sync) reaches this tab's live memory as the change it wrote, mirrored into the
// index and graph, not as a reload of every record (about 3 s of the page's thread per remote edit
// at 100k memories: BENCHMARKS.md, "Sync in Chromium"). Without the change, the tab still reloads.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { T, memory, session } from '../sync/records';

const channels: BroadcastChannel[] = [];
afterEach(() => channels.splice(0).forEach((c) => c.close()));

async function setUp() {
  const repo = new InMemoryRepository();
  await repo.apply({
    sessions: [session],
    memories: [memory('m1', 'lives in Lisbon'), memory('m2', 'has a cat')],
  });
  const service = new MemoryService(
    repo,
    new SettingsService(repo),
    () => undefined,
    () => undefined,
  );
  await service.load();
  const reads = vi.spyOn(repo, 'listMemories');
  let graphs = 0;
  service.on('graph', () => graphs++);
  const other = new BroadcastChannel('tealeaf-memory');
  channels.push(other);
  const heard = (n: number) =>
    vi.waitFor(() => {
      if (graphs < n) throw new Error('no graph event yet');
    });
  return { repo, service, reads, other, heard, graphs: () => graphs };
}

describe('a remote change in the live memory', () => {
  it('is mirrored from the change it carries: added, edited, deleted, linked; nothing read again', async () => {
    const { service, reads, other, heard } = await setUp();
    // Three parts in a burst, as a first sync brings them: the views hear once.
    other.postMessage({ type: 'memory-changed', change: { dropped: [], memories: [memory('m3', 'moved to Porto')] } });
    other.postMessage({
      type: 'memory-changed',
      change: { dropped: [], memories: [{ ...memory('m1', 'lives in Porto now'), edited: true }] },
    });
    other.postMessage({
      type: 'memory-changed',
      change: {
        dropped: [],
        deleteMemories: ['m2'],
        edges: [{ id: 'e1', from: 'm1', to: 'm3', relation: 'Cause', origin: 'model', createdAt: T }],
      },
    });
    await heard(1);
    expect([...service.memories.keys()].sort()).toEqual(['m1', 'm3']);
    expect(service.memories.get('m1')?.text).toBe('lives in Porto now');
    expect(service.graph.getEdge('e1')?.to).toBe('m3');
    expect(service.graph.has('m2')).toBe(false);
    // Retrieval sees it: the index holds the new text, not the old one, and not the deleted memory.
    expect(service.index.has('m3')).toBe(true);
    expect(service.index.has('m2')).toBe(false);
    expect(reads).not.toHaveBeenCalled();
  });

  it('a message without a change (another tab, a delete-all) still reads the store again', async () => {
    const { repo, service, reads, other, heard } = await setUp();
    await repo.apply({ memories: [memory('m4', 'written by another tab')] });
    other.postMessage({ type: 'memory-changed' });
    await heard(1);
    expect(reads).toHaveBeenCalled();
    expect(service.memories.has('m4')).toBe(true);
  });
});
