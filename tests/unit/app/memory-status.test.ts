import { describe, expect, it } from 'vitest';
import { learnedFrom, sessionMemoryStatus } from '../../../src/app/chat/memory-status';
import type { JobSnapshot } from '../../../src/services/jobs';
import type { Memory, Session } from '../../../src/memory/types';

const session = (status: Session['status']): Session => ({ id: 's1', title: 't', startedAt: 1, lastActivityAt: 2, status });
const job = (step: string, progress = '', status: JobSnapshot['status'] = 'running'): JobSnapshot => ({
  id: 'j',
  sessionId: 's1',
  status,
  step,
  progress,
  label: '',
});
const mem = (id: string, sessionId: string, extra: Partial<Memory> = {}): Memory => ({
  id,
  kind: 'user-trait',
  text: id,
  time: 1,
  sourceTurnIds: [],
  sessionId,
  edited: false,
  createdAt: 1,
  ...extra,
});

describe('sessionMemoryStatus', () => {
  it('names the step, n of m, while memorising', () => {
    expect(sessionMemoryStatus(session('ended'), [job('link', '2/5')])).toMatchObject({
      label: 'memorising 3/4',
      detail: 'Memorising this chat: step 3 of 4, linking them to what it knew (2 of 5).',
    });
    expect(sessionMemoryStatus(session('ended'), [job('summarise')]).detail).toMatch(/step 1 of 4, summarising/);
    expect(sessionMemoryStatus(session('ended'), [job('done', '0/1')]).detail).toBe('Memorising this chat: step 4 of 4, finishing.');
  });

  it('says waiting, failed, not remembered (memory creation off) and remembered', () => {
    expect(sessionMemoryStatus(session('ended'), [job('summarise', '', 'pending')]).label).toBe('waiting to memorise');
    expect(sessionMemoryStatus(session('ended'), [{ ...job('link', '', 'failed'), lastError: 'boom' }]).detail).toMatch(/failed: boom/);
    expect(sessionMemoryStatus(session('ended'), []).tone).toBe('off');
    expect(sessionMemoryStatus(session('memorised'), []).label).toBe('remembered');
    expect(sessionMemoryStatus(session('open'), []).label).toBe('open');
  });
});

describe('learnedFrom', () => {
  it("lists the session's memories and the traits it changed", () => {
    const memories = [
      mem('tea', 's0', { supersededBy: 'coffee', time: 0 }),
      mem('coffee', 's1', { time: 5 }),
      mem('walk', 's1', { kind: 'event', time: 3 }),
      mem('other', 's2'),
    ];
    const l = learnedFrom('s1', memories);
    expect(l.memories.map((m) => m.id)).toEqual(['walk', 'coffee']);
    expect(l.changed.map((c) => [c.before.id, c.after.id])).toEqual([['tea', 'coffee']]);
    expect(learnedFrom('nope', memories)).toEqual({ memories: [], changed: [] });
  });
});
