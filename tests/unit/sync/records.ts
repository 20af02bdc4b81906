// Small records shared by the sync tests that write through the IndexedDB repository.
import type { Memory, Session } from '../../../src/memory/types';

export const T = 1_700_000_000_000;
export const session: Session = { id: 's1', title: 's1', startedAt: T, lastActivityAt: T, status: 'ended', endedAt: T };
export const memory = (id: string, text: string): Memory => ({
  id,
  kind: 'event',
  text,
  time: T,
  sourceTurnIds: [],
  sessionId: 's1',
  edited: false,
  createdAt: T,
});
