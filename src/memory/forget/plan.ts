// What one act of forgetting takes ("forget means forget"): every copy of the facts the
// user forgets (memories, or messages asked for directly), found by lookups (the source turns each memory names, the `byDrewOn` index of
// replies, the `byTurn` index of passages, the chat a line was said in), never by a scan of the store.
//   - the memories asked for, and memories made from the same lines that repeat them;
//   - the lines they were drawn from (their source turns) and the answers to those lines;
//   - replies that drew on them: asked with the memory retrieved or in a timeline (always), or
//     with it only in the persona bank, a passage or earlier in the same chat, when they repeat it;
//   - again for every line found: the passages holding it and the replies drawn from those.
// Pure: the service asks, shows the plan in words, then writes it in one change (forgetChange).
import type { TurnPatch } from '../../ports';
import type { Id, Memory, Millis, Segment, Turn, UsedMemory } from '../types';
import { repeatsFact } from './repeats';

export interface ForgetReads {
  /** The live memories by id. */
  memories: ReadonlyMap<Id, Memory>;
  getTurns(ids: Id[]): Promise<Turn[]>;
  listTurns(sessionId: Id): Promise<Turn[]>;
  listTurnsDrewOn(id: Id): Promise<Turn[]>;
  listSegmentsOfTurn(turnId: Id): Promise<Segment[]>;
}

export interface ForgetPlan {
  /** The memories that go: those asked for first, then copies made from the same lines. */
  memories: Memory[];
  /** What the lines' marks name: the memories, and the messages asked for directly (by their own id). */
  by: Id[];
  /** The lines marked forgotten (already forgotten ones too: this forget adds itself to their mark). */
  lines: Turn[];
  /** Passages holding any of the lines: rebuilt without them. */
  passages: Segment[];
}

/** Whether a reply was asked with this memory retrieved for it (not only in the persona bank). */
function retrievedFor(u: UsedMemory | undefined, id: Id): boolean {
  if (!u) return false;
  return (
    u.memoryIds.includes(id) ||
    u.timelines.some((t) => t.memoryIds.includes(id)) ||
    u.scores.some((s) => s.unitId === id) ||
    (u.reflectedOn ?? []).includes(id)
  );
}

const isReply = (t: Turn) => t.role === 'assistant' && t.command === undefined;

/** `lineIds`: the user's messages to forget themselves (a fact not memorised, or memorised in other words). */
export async function planForget(ids: readonly Id[], reads: ForgetReads, lineIds: readonly Id[] = []): Promise<ForgetPlan> {
  const asked = ids.map((id) => reads.memories.get(id)).filter((m): m is Memory => m !== undefined);
  const memories = new Map(asked.map((m) => [m.id, m]));
  const said = lineIds.length > 0 ? await reads.getTurns([...lineIds]) : [];
  const facts = [...asked.map((m) => m.text), ...said.map((t) => t.text)];
  const repeats = (text: string) => repeatsFact(text, facts);
  const lines = new Map<Id, Turn>();
  const passages = new Map<Id, Segment>();
  const queue: Turn[] = [];
  const add = (t: Turn) => {
    if (lines.has(t.id)) return;
    lines.set(t.id, t);
    queue.push(t);
  };
  const chats = new Map<Id, Promise<Turn[]>>();
  const chat = (sessionId: Id) => {
    let p = chats.get(sessionId);
    if (!p) chats.set(sessionId, (p = reads.listTurns(sessionId)));
    return p;
  };

  // The lines each memory was drawn from (and those asked for), and what answered them (written from those words).
  for (const sources of [...asked.map((m) => m.sourceTurnIds), said.map((t) => t.id)]) {
    for (const t of await reads.getTurns(sources)) {
      add(t);
      const answer = (await chat(t.sessionId)).find((x) => x.index === t.index + 1);
      if (t.role === 'user' && answer?.role === 'assistant') add(answer);
    }
  }
  // Memories made from the same lines that say the same thing are copies of it.
  for (const m of reads.memories.values()) {
    if (!memories.has(m.id) && m.sourceTurnIds.some((id) => lines.has(id)) && repeats(m.text)) memories.set(m.id, m);
  }
  // Replies that drew on a forgotten memory.
  for (const m of memories.values()) {
    for (const r of await reads.listTurnsDrewOn(m.id)) {
      if (isReply(r) && ([r, ...(r.versions ?? [])].some((v) => retrievedFor(v.usedMemory, m.id)) || repeats(r.text))) add(r);
    }
  }
  // Each line found: its passages and the replies drawn from them, and the later replies of its
  // chat (which had it in their prompt) that repeat it.
  while (queue.length > 0) {
    const line = queue.pop()!;
    for (const s of await reads.listSegmentsOfTurn(line.id)) {
      if (passages.has(s.id)) continue;
      passages.set(s.id, s);
      for (const r of await reads.listTurnsDrewOn(s.id)) if (isReply(r) && repeats(r.text)) add(r);
    }
    for (const r of await chat(line.sessionId)) if (isReply(r) && r.index > line.index && repeats(r.text)) add(r);
  }
  const by = [...memories.keys(), ...said.map((t) => t.id)];
  return { memories: [...memories.values()], by, lines: [...lines.values()], passages: [...passages.values()] };
}

/** The patches that mark the plan's lines as forgotten by its memories, and those that undo it. */
export function linePatches(plan: ForgetPlan, at: Millis): { forget: TurnPatch[]; undo: TurnPatch[] } {
  const { by } = plan;
  return {
    forget: plan.lines.map((t) => ({ id: t.id, forget: { at, by } })),
    undo: plan.lines.map((t) => ({ id: t.id, unforget: by })),
  };
}

/** How many lines of each chat go, by who said them, in the order the chats were met. */
export function linesByChat(plan: Pick<ForgetPlan, 'lines'>): Array<{ sessionId: Id; yours: number; replies: number }> {
  const out = new Map<Id, { sessionId: Id; yours: number; replies: number }>();
  for (const t of plan.lines) {
    const c = out.get(t.sessionId) ?? { sessionId: t.sessionId, yours: 0, replies: 0 };
    if (t.role === 'user') c.yours++;
    else c.replies++;
    out.set(t.sessionId, c);
  }
  return [...out.values()];
}
