import { describe, expect, it } from 'vitest';
import { ReplySaver } from '../../../src/services/chat/reply-saver';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { Turn } from '../../../src/memory/types';

/** A repository holding the session the reply belongs to. */
async function repoWithSession(): Promise<InMemoryRepository> {
  const repo = new InMemoryRepository();
  await repo.apply({ sessions: [{ id: 's1', title: 'A chat', startedAt: 0, lastActivityAt: 0, status: 'open' }] });
  return repo;
}

const turn = (text: string): Turn => ({ id: 't1', sessionId: 's1', index: 0, role: 'assistant', text, time: 0, status: 'streaming' });

describe('ReplySaver', () => {
  it('saves a growing reply at most every everyMs, and always at the end', async () => {
    const repo = await repoWithSession();
    const clock = { t: 1000 };
    const writes: string[] = [];
    const apply = repo.apply.bind(repo);
    repo.apply = async (c) => {
      writes.push(c.turns?.[0]?.text ?? '');
      return apply(c);
    };
    const saver = new ReplySaver({ repo, now: () => clock.t, everyMs: 250, onError: () => undefined });
    saver.grew(turn('a')); // 0 ms since the start: not yet
    clock.t += 100;
    saver.grew(turn('a b')); // 100 ms: not yet
    clock.t += 200;
    saver.grew(turn('a b c')); // 300 ms: saved
    clock.t += 10;
    saver.grew(turn('a b c d')); // 10 ms after that save: not yet
    await saver.last({ ...turn('a b c d e'), status: 'complete' });
    expect(writes).toEqual(['a b c', 'a b c d e']);
    expect((await repo.getTurns(['t1']))[0]).toMatchObject({ text: 'a b c d e', status: 'complete' });
  });

  it('stores nothing for a temporary chat', async () => {
    const saver = new ReplySaver({ repo: undefined, now: () => 0, everyMs: 0, onError: () => undefined });
    saver.grew(turn('a'));
    await expect(saver.last(turn('a b'))).resolves.toBeUndefined();
  });

  it('reports a failed save and goes on saving', async () => {
    const repo = await repoWithSession();
    const errors: string[] = [];
    let fail = true;
    const apply = repo.apply.bind(repo);
    repo.apply = async (c) => {
      if (fail) {
        fail = false;
        throw new Error('QuotaExceededError: the disk is full');
      }
      return apply(c);
    };
    const saver = new ReplySaver({ repo, now: () => 1000, everyMs: 0, onError: (m) => errors.push(m) });
    saver.grew(turn('a'));
    await saver.last(turn('a b'));
    expect(errors).toEqual([expect.stringMatching(/^Could not save the reply: .*disk is full/)]);
    expect((await repo.getTurns(['t1']))[0].text).toBe('a b');
  });
});
