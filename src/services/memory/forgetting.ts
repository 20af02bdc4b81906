// One act of forgetting reaches every copy of a fact: the memories, the lines they were
// drawn from, the replies that drew on them, the passages holding any of those (rebuilt by the
// store), their vectors and the live index, in one change; the undo brings all of it back. What it
// will take is asked first (`preview`) and shown to the user in words before it acts.
import type { AppliedChange, ChangeSet, LineReads, Repository } from '../../ports';
import type { Id, Memory } from '../../memory/types';
import type { MemoryGraph } from '../../memory/graph';
import { deleteMemories } from '../../memory/corrections';
import { linePatches, linesByChat, planForget, type ForgetPlan } from '../../memory/forget/plan';
import { hasLines } from '../../memory/forget/lines';

/** What a forget takes, for the words the user reads before it acts (src/app/forget-words.ts). */
export interface ForgetPreview {
  memories: Array<{ id: Id; text: string }>;
  /** Lines per chat: the user's messages and the replies, each kept in its chat and marked forgotten. */
  chats: Array<{ sessionId: Id; yours: number; replies: number }>;
  /** Passages of past chats that held any of the lines (recalled without them from now on). */
  passages: number;
}

export interface ForgetHost {
  repo: Repository & LineReads;
  live(): { memories: ReadonlyMap<Id, Memory>; graph: MemoryGraph };
  /** Writes and mirrors the change (and has the rebuilt passages embedded again: MemoryService). */
  applyLive(change: ChangeSet): Promise<AppliedChange>;
}

export class Forgetting {
  constructor(private readonly host: ForgetHost) {}

  private plan(ids: readonly Id[], lineIds: readonly Id[]): Promise<ForgetPlan> {
    const { repo } = this.host;
    return planForget(
      ids,
      {
        memories: this.host.live().memories,
        getTurns: (x) => repo.getTurns(x),
        listTurns: (x) => repo.listTurns(x),
        listTurnsDrewOn: (x) => repo.listTurnsDrewOn(x),
        listSegmentsOfTurn: (x) => repo.listSegmentsOfTurn(x),
      },
      lineIds,
    );
  }

  async preview(ids: readonly Id[], lineIds: readonly Id[] = []): Promise<ForgetPreview> {
    const plan = await this.plan(ids, lineIds);
    return {
      memories: plan.memories.map((m) => ({ id: m.id, text: m.text })),
      chats: linesByChat(plan),
      passages: plan.passages.filter(hasLines).length,
    };
  }

  /**
   * Forgets the memories (and the messages `lineIds`) and every copy of them, with `also` in the
   * same change (a chat's answer saying so). Returns the change that undoes it all, or undefined
   * when none of them exists.
   */
  async forget(ids: readonly Id[], also: ChangeSet = {}, lineIds: readonly Id[] = []): Promise<ChangeSet | undefined> {
    const live = this.host.live();
    const plan = await this.plan(ids, lineIds);
    const d = deleteMemories(
      plan.memories.map((m) => m.id),
      live.memories,
      live.graph,
    ) ?? { change: {}, undo: {} };
    if (plan.memories.length === 0 && plan.lines.length === 0) return undefined;
    const gone = d.change.deleteMemories ?? [];
    // The memories' search vectors come back with them (a passage's are made again from its words).
    const vectors = (await Promise.all(gone.map((id) => this.host.repo.listVectorsOfUnit(id)))).flat();
    const at = Date.now();
    const marks = linePatches(plan, at);
    await this.host.applyLive({
      ...also,
      ...d.change,
      // Remembered as deleted: a memorise job run again (a chat imported again) does not bring it back.
      tombstones: gone.map((id) => ({ kind: 'memory' as const, id, deletedAt: at })),
      turnPatches: [...(also.turnPatches ?? []), ...marks.forget],
    });
    const undo: ChangeSet = {
      ...d.undo,
      deleteTombstones: gone.map((id) => ['memory', id] as ['memory', Id]),
      turnPatches: marks.undo,
    };
    return vectors.length > 0 ? { ...undo, vectors } : undo;
  }
}
