// The worlds bench:fit runs the builders in: LoCoMo conversations memorised session by session
// through the real job (summary, labelling, segments), synthetic long chats, and what the reply
// builder is asked on each. Every model call goes through a TaggedModel under an engine profile.
import { InMemoryRepository } from '../../../tests/support/in-memory-repository';
import { MemoryGraph } from '../../../src/memory/graph';
import { createMemoriseJob, runMemoriseJob, type MemoriseOutcome } from '../../../src/memory/ingest/memorise';
import { segmentSession } from '../../../src/memory/ingest/segments';
import type { TurnRange } from '../../../src/memory/ingest/segments/parse';
import { locomoSessionRecords, type LocomoConversation } from '../../../src/memory/locomo';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import type { HybridIndex } from '../../../src/memory/retrieval/types';
import type { MemorySettings } from '../../../src/memory/settings';
import type { Id, Memory, Session, Turn } from '../../../src/memory/types';
import type { LanguageModel } from '../../../src/ports';

export interface World {
  repo: InMemoryRepository;
  graph: MemoryGraph;
  index: HybridIndex;
  memories: Map<Id, Memory>;
  turns: Turn[];
  outcomes: MemoriseOutcome[];
  /** dia_id -> turn id (LoCoMo). */
  turnIdOf: Map<string, Id>;
}

export function emptyWorld(): World {
  return {
    repo: new InMemoryRepository(),
    graph: new MemoryGraph(),
    index: createHybridIndex(),
    memories: new Map(),
    turns: [],
    outcomes: [],
    turnIdOf: new Map(),
  };
}

/** Stores a session with its memorise job and runs the job to its end, as the app's runner does. */
export async function memorise(
  world: World,
  session: Session,
  turns: Turn[],
  llm: LanguageModel,
  settings: MemorySettings,
): Promise<MemoriseOutcome> {
  const now = () => session.lastActivityAt + 1;
  const job = createMemoriseJob(session.id, now());
  await world.repo.apply({ sessions: [session], turns, jobs: [job] });
  world.turns.push(...turns);
  for (const t of turns) if (t.externalId) world.turnIdOf.set(t.externalId, t.id);
  const deps = {
    repo: world.repo,
    llm,
    index: world.index,
    graph: world.graph,
    memories: world.memories,
    settings,
    segmenter: ({ turns: ts, ranges, signal }: { turns: readonly Turn[]; ranges: readonly TurnRange[]; signal?: AbortSignal }) =>
      segmentSession(ts, { ranges, signal }),
    now,
  };
  let out = await runMemoriseJob(job, deps);
  // The app's runner takes a failed job up again later: once more here, then it counts as failed.
  if (out.status === 'failed') out = await runMemoriseJob(out.job, deps);
  world.outcomes.push(out);
  return out;
}

/** A LoCoMo conversation memorised session by session. */
export async function memoriseLocomo(
  conv: LocomoConversation,
  prefix: string,
  llm: LanguageModel,
  settings: MemorySettings,
): Promise<World> {
  const world = emptyWorld();
  for (const s of conv.sessions) {
    const { session, turns } = locomoSessionRecords(conv, s, prefix);
    await memorise(world, session, turns, llm, settings);
  }
  return world;
}

const FILLER = ['the', 'garden', 'river', 'coffee', 'walked', 'quietly', 'yesterday', 'because', 'evening', 'market', 'bread', 'window'];

/** A chat of `n` turns: each user line a fact of its own, each reply `replyWords` words. */
export function syntheticChat(id: string, n: number, replyWords: number, start: number): { session: Session; turns: Turn[] } {
  const turns: Turn[] = Array.from({ length: n }, (_, i) => {
    const user = i % 2 === 0;
    const text = user
      ? `On day ${i} I went to ${['Bergen', 'Oslo', 'Lyon', 'Porto'][i % 4]} and bought a ${['kite', 'lamp', 'book', 'chair'][i % 4]} called Item${i}.`
      : Array.from({ length: replyWords }, (_, k) => FILLER[(k * 5 + i) % FILLER.length]).join(' ');
    return {
      id: `${id}:t${i}`,
      sessionId: id,
      index: i,
      role: user ? 'user' : 'assistant',
      text,
      time: start + i * 60_000,
      status: 'complete',
    };
  });
  const last = turns.at(-1)!.time;
  return { session: { id, title: id, startedAt: start, lastActivityAt: last, endedAt: last, status: 'ended' }, turns };
}

/** The whole of a LoCoMo conversation as one long session (a long imported chat). */
export function wholeConversation(conv: LocomoConversation, id: string): { session: Session; turns: Turn[] } {
  const turns: Turn[] = conv.sessions.flatMap((s) => locomoSessionRecords(conv, s, id).turns);
  turns.forEach((t, i) => Object.assign(t, { id: `${id}:w${i}`, sessionId: id, index: i }));
  const first = turns[0]!.time;
  const last = turns.at(-1)!.time;
  return { session: { id, title: id, startedAt: first, lastActivityAt: last, endedAt: last, status: 'ended' }, turns };
}

/** Share of the user lines of the first and the last tenth that some memory names as a source. */
export function coverage(world: World, turns: readonly Turn[]): { first: number; last: number; users: number } {
  const named = new Set([...world.memories.values()].flatMap((m) => m.sourceTurnIds));
  const users = turns.filter((t) => t.role === 'user');
  const tenth = Math.max(1, Math.ceil(users.length / 10));
  const share = (part: Turn[]) => part.filter((t) => named.has(t.id)).length / part.length;
  return { first: share(users.slice(0, tenth)), last: share(users.slice(-tenth)), users: users.length };
}
