// Adding a turn at the end of a session that another tab may be writing to as well.
import type { ChangeSet, Repository } from '../../ports';
import type { Turn } from '../../memory/types';

/**
 * Stores `turn` at the end of its session and returns the session's turns with it. The index
 * comes from the store (another tab may have added turns), and a clash at an index (unique in the
 * store) is retried a few times.
 */
export async function appendTurn(
  repo: Pick<Repository, 'listTurns' | 'apply'>,
  turn: Turn,
  existing: boolean,
  change: (t: Turn) => ChangeSet,
): Promise<Turn[]> {
  for (let attempt = 0; ; attempt++) {
    const turns = existing ? await repo.listTurns(turn.sessionId) : [];
    const t = { ...turn, index: turns.length };
    try {
      await repo.apply(change(t));
      return [...turns, t];
    } catch (e) {
      if (attempt >= 3 || !isConstraintError(e)) throw e;
      existing = true;
    }
  }
}

function isConstraintError(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x && depth < 4; depth++) {
    if ((x as { name?: unknown }).name === 'ConstraintError') return true;
    x = (x as { cause?: unknown }).cause;
  }
  return false;
}
