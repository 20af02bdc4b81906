// Saving a streaming reply as it grows: at most every `everyMs`, in order, so that a closed tab
// loses at most that much of it; a failed save is reported, never thrown into the stream.
import { clampText } from '../../memory/limits';
import { errorText } from '../../errors';
import type { Repository } from '../../ports';
import type { Id, Millis, Session, Turn } from '../../memory/types';

export interface ReplySaverOptions {
  /** Where to save; undefined for a temporary chat (nothing is stored). */
  repo: Repository | undefined;
  now: () => Millis;
  everyMs: number;
  onError: (message: string) => void;
}

export class ReplySaver {
  private saving: Promise<void> = Promise.resolve();
  private lastSave: Millis;

  constructor(private readonly opts: ReplySaverOptions) {
    this.lastSave = opts.now();
  }

  /** The reply grew: save it if the last save is old enough. */
  grew(turn: Turn): void {
    if (this.opts.now() - this.lastSave < this.opts.everyMs) return;
    this.lastSave = this.opts.now();
    void this.save(turn);
  }

  /** The reply ended (complete, stopped or failed): save it, after any save still under way. */
  last(turn: Turn): Promise<void> {
    return this.save(turn);
  }

  private save(turn: Turn): Promise<void> {
    const repo = this.opts.repo;
    if (!repo) return this.saving;
    this.saving = this.saving
      .then(async () => void (await repo.apply({ turns: [{ ...turn, text: clampText(turn.text) }] })))
      .catch((e: unknown) => this.opts.onError(`Could not save the reply: ${errorText(e)}`));
    return this.saving;
  }
}

/**
 * After a reply: the turn as the store holds it (it may have lost notes built from a memory deleted
 * or edited meanwhile, src/memory/derived.ts) and its session with the activity time moved on; no
 * session when the chat was deleted meanwhile (a rename during the reply stays).
 */
export async function touchAfterReply(
  repo: Repository,
  turnId: Id,
  sessionId: Id,
  now: Millis,
  onError: (message: string) => void = () => undefined,
): Promise<{ saved?: Turn; session?: Session }> {
  const [[saved], stored] = await Promise.all([repo.getTurns([turnId]), repo.getSession(sessionId)]);
  if (!stored) return { saved };
  const session = { ...stored, lastActivityAt: now };
  // Reported, not thrown: a full disk must not leave the chat looking busy with a reply.
  await repo.apply({ sessions: [session] }).catch((e: unknown) => onError(`Could not save the chat: ${errorText(e)}`));
  return { saved, session };
}
