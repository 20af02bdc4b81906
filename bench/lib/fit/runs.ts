// The three measurements of bench:fit (bench/fit.ts): every builder under each engine profile,
// tokens before a reply's first token against recall, and the pipeline under injected faults.
import { enforce } from '../../../tests/support/standin';
import { ModelDouble } from '../../../tests/support/model-double';
import { checkGraphInvariants } from '../../../tests/support/invariants';
import { segmentSession } from '../../../src/memory/ingest/segments';
import { locomoSessionRecords, type LocomoConversation } from '../../../src/memory/locomo';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { runTeaFarm } from '../../../src/memory/eval/teafarm';
import { RefineCache } from '../../../src/memory/recall/refine';
import { prepareTurn, type DialogueTurn } from '../../../src/memory/recall/turn';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { segmentUnit } from '../../../src/memory/retrieval/units';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import { memorylessPreparer } from '../../../src/services/chat/reply-prompt';
import { ITEM_CHARS } from '../../../src/memory/ingest/summary-prompt';
import type { Id, Session, Turn } from '../../../src/memory/types';
import { ingestLocomo, type Ingested } from '../locomo-ingest';
import { questionsOf } from '../locomo-report';
import { TaggedModel, type TaggedCall } from './tagged';
import { coverage, emptyWorld, memorise, memoriseLocomo, syntheticChat, wholeConversation, type World } from './world';

const RECALL_WORDS = 300;
/** Questions asked per conversation when replies are only there to exercise the builder. */
const REPLY_QUESTIONS = 40;

function tagged(profile: string, faults?: { rate: number; seed: number }): TaggedModel {
  return new TaggedModel(enforce(new ModelDouble({ judge: true, traits: true }), profile, faults ? { faults } : {}));
}

async function reply(
  llm: TaggedModel,
  world: Pick<World, 'index' | 'graph' | 'memories'>,
  dialogue: DialogueTurn[],
  settings: MemorySettings,
  now: number,
) {
  llm.phase = 'reply';
  const prepared = await prepareTurn({
    dialogue,
    now,
    index: world.index,
    graph: world.graph,
    memoriesById: world.memories,
    llm,
    settings,
    refineCache: new RefineCache(),
    seed: 1,
  });
  await llm.chat(prepared.messages, { maxTokens: prepared.maxTokens });
  return prepared;
}

export interface CoverageRow {
  session: string;
  users: number;
  first: number;
  last: number;
}

export interface BuilderRun {
  calls: TaggedCall[];
  coverage: CoverageRow[];
  failedJobs: number;
}

/** Every builder over the LoCoMo conversations and synthetic long chats, under one profile. */
export async function builderRun(profile: string, convs: LocomoConversation[], log: (s: string) => void): Promise<BuilderRun> {
  const llm = tagged(profile);
  const settings = withDefaults({ refineWhenUnsure: false });
  const rows: CoverageRow[] = [];
  let failedJobs = 0;
  let first: World | undefined;
  for (const [ci, conv] of convs.entries()) {
    llm.phase = 'summary';
    const world = await memoriseLocomo(conv, `c${ci}`, llm, withDefaults());
    first ??= world;
    failedJobs += world.outcomes.filter((o) => o.status !== 'done').length;
    llm.phase = 'segmentation';
    for (const s of conv.sessions) await segmentSession(locomoSessionRecords(conv, s, `c${ci}`).turns, { llm });
    llm.phase = 'teafarm';
    await runTeaFarm({
      llm,
      index: world.index,
      graph: world.graph,
      memoriesById: world.memories,
      settings,
      now: Math.max(...world.turns.map((t) => t.time)) + 86_400_000,
      questions: 3,
      conditions: ['full', 'no-memory'],
    });
    const now = Math.max(...world.turns.map((t) => t.time)) + 86_400_000;
    for (const q of conv.qa.filter((x) => x.category >= 1 && x.category <= 4).slice(0, REPLY_QUESTIONS))
      await reply(llm, world, [{ role: 'user', text: q.question }], settings, now);
    // The whole conversation as one long session (a long imported chat).
    const whole = wholeConversation(conv, `whole${ci}`);
    // Its own world: the same lines memorised per session would count as duplicates here.
    const wholeWorld = emptyWorld();
    llm.phase = 'summary';
    const out = await memorise(wholeWorld, whole.session, whole.turns, llm, withDefaults({ relationAwareLinking: false }));
    if (out.status !== 'done') failedJobs++;
    rows.push({ session: `LoCoMo conversation ${ci + 1} as one session`, ...coverage(wholeWorld, whole.turns) });
    log(`${profile}: conversation ${ci + 1} done (${llm.tagged.length} calls)`);
  }
  for (const n of [50, 200]) {
    const chat = syntheticChat(`chat${n}`, n, 300, Date.UTC(2025, 0, 1));
    const world = { ...first!, memories: new Map(first!.memories) };
    // The reply at every tenth user turn, with memory and without.
    for (let k = 0; k < chat.turns.length; k += 20) {
      const dialogue = chat.turns.slice(0, k + 1).map((t) => ({ id: t.id, role: t.role, text: t.text, time: t.time }));
      await reply(llm, world, dialogue, settings, chat.turns[k]!.time);
      llm.phase = 'memoryless';
      const plain = await memorylessPreparer(() => undefined).prepare({
        session: chat.session,
        history: chat.turns.slice(0, k + 1),
        now: chat.turns[k]!.time,
        llm,
        signal: new AbortController().signal,
      });
      await llm.chat(plain.messages, { maxTokens: plain.maxTokens });
    }
    llm.phase = 'summary';
    const out = await memorise(world, chat.session, chat.turns, llm, withDefaults({ relationAwareLinking: false }));
    if (out.status !== 'done') failedJobs++;
    rows.push({ session: `synthetic chat of ${n} turns, 300-word replies`, ...coverage(world, chat.turns) });
  }
  return { calls: llm.tagged, coverage: rows, failedJobs };
}

export interface ReplyStart {
  gate: 'always' | 'when unsure';
  turns: number;
  /** Turns that made the call before the reply. */
  called: number;
  tokensMedian: number;
  tokensP90: number;
  recall: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/** Tokens read and written before the reply's first token, with the call before it always or only when unsure. */
export async function replyStart(profile: string, ingested: Ingested[]): Promise<ReplyStart[]> {
  const out: ReplyStart[] = [];
  for (const gate of ['always', 'when unsure'] as const) {
    const llm = tagged(profile);
    const tokens: number[] = [];
    let recall = 0;
    let n = 0;
    let called = 0;
    for (const c of ingested) {
      const index = createHybridIndex();
      for (const m of c.memories) index.upsert(memoryUnit(m));
      for (const s of c.segments) index.upsert(segmentUnit(s));
      const world = { index, graph: c.graph, memories: new Map(c.memories.map((m) => [m.id, m])) };
      const now = c.end + 86_400_000;
      const settings = withDefaults({ refineWhenUnsure: gate === 'when unsure', contextBudgetWords: RECALL_WORDS });
      for (const q of questionsOf(c)) {
        const before = llm.tagged.length;
        const p = await reply(llm, world, [{ role: 'user', text: q.query }], settings, now);
        if (llm.tagged.slice(before).some((x) => x.builder === 'refinement')) called++;
        tokens.push(p.tokensBeforeReply);
        const have = new Set(p.units.flatMap((u) => u.sourceTurnIds));
        recall += q.evidence.filter((e) => have.has(e)).length / q.evidence.length;
        n++;
      }
    }
    out.push({
      gate,
      turns: n,
      called,
      tokensMedian: quantile(tokens, 0.5),
      tokensP90: quantile(tokens, 0.9),
      recall: recall / Math.max(1, n),
    });
  }
  return out;
}

export interface FaultRun {
  profile: string;
  rate: number;
  jobs: number;
  failedJobs: number;
  /** Facts lost: turns a memory named without faults that no memory names with them. */
  lostFacts: number;
  /** Turns some memory names in this run. */
  namedTurns: number;
  /** Records that break an invariant or a limit. */
  corrupted: number;
  traitsRetired: number;
  faultsFired: number;
  recall: number;
}

/** The pipeline memorising the LoCoMo conversations with faults injected at `rate`, against the same run without. */
export async function faultRun(
  profile: string,
  rate: number,
  convs: LocomoConversation[],
  clean?: World[],
): Promise<{ row: FaultRun; worlds: World[] }> {
  const llm = tagged(profile, rate > 0 ? { rate, seed: 7 } : undefined);
  const worlds: World[] = [];
  let recall = 0;
  let n = 0;
  for (const [ci, conv] of convs.entries()) {
    llm.phase = 'summary';
    const world = await memoriseLocomo(conv, `c${ci}`, llm, withDefaults());
    worlds.push(world);
    const segments = await world.repo.listSegments();
    const index = createHybridIndex();
    for (const m of world.memories.values()) index.upsert(memoryUnit(m));
    for (const s of segments) index.upsert(segmentUnit(s));
    const now = Math.max(...world.turns.map((t) => t.time)) + 86_400_000;
    for (const q of conv.qa.filter((x) => x.category >= 1 && x.category <= 4)) {
      const evidence = q.evidence.map((d) => world.turnIdOf.get(d)).filter((x): x is Id => !!x);
      if (evidence.length === 0) continue;
      const p = await reply(
        llm,
        { ...world, index },
        [{ role: 'user', text: q.question }],
        withDefaults({ contextBudgetWords: RECALL_WORDS }),
        now,
      );
      const have = new Set(p.units.flatMap((u) => u.sourceTurnIds));
      recall += evidence.filter((e) => have.has(e)).length / evidence.length;
      n++;
    }
  }
  const named = (ws: World[]) => new Set(ws.flatMap((w) => [...w.memories.values()].flatMap((m) => m.sourceTurnIds)));
  const lost = clean ? [...named(clean)].filter((id) => !named(worlds).has(id)).length : 0;
  let corrupted = 0;
  let retired = 0;
  for (const w of worlds) {
    const turnsOf = new Map<Id, Set<Id>>();
    for (const t of w.turns) (turnsOf.get(t.sessionId) ?? turnsOf.set(t.sessionId, new Set()).get(t.sessionId)!).add(t.id);
    const memories = [...w.memories.values()];
    corrupted += checkGraphInvariants(memories, await w.repo.listEdges()).length;
    corrupted += memories.filter(
      (m) =>
        m.text.trim() === '' ||
        m.text.length > ITEM_CHARS ||
        m.sourceTurnIds.length === 0 ||
        m.sourceTurnIds.some((id) => !turnsOf.get(m.sessionId)?.has(id)),
    ).length;
    retired += memories.filter((m) => (m.kind === 'user-trait' || m.kind === 'assistant-trait') && m.supersededBy !== undefined).length;
  }
  const fired = Object.values(llm.inner.faultCounts).reduce((a, b) => a + (b ?? 0), 0);
  return {
    row: {
      profile,
      rate,
      jobs: worlds.reduce((a, w) => a + w.outcomes.length, 0),
      failedJobs: worlds.reduce((a, w) => a + w.outcomes.filter((o) => o.status !== 'done').length, 0),
      lostFacts: lost,
      namedTurns: named(worlds).size,
      corrupted,
      traitsRetired: retired,
      faultsFired: fired,
      recall: recall / Math.max(1, n),
    },
    worlds,
  };
}

export { ingestLocomo, type Session, type Turn };

export interface ChatRecallRow {
  profile: string;
  where: string;
  questions: number;
  recall: number;
}

/**
 * What a reply in a long chat still sees of the chat itself: each LoCoMo conversation as one chat
 * and each question asked in it, with no memory at all, so only the chat's own turns can carry the
 * evidence. "Near": asked ten turns after its last evidence turn (a short distance, as at turn 5);
 * "far": asked at the end of the whole conversation (hundreds of turns later), with the earlier
 * exchanges recalled (earlierInChat) and without (the newest turns only).
 */
export async function chatRecall(profile: string, convs: LocomoConversation[]): Promise<ChatRecallRow[]> {
  const llm = tagged(profile);
  const empty = { index: createHybridIndex(), graph: emptyWorld().graph, memories: new Map() };
  const rows: ChatRecallRow[] = [];
  for (const [where, settings, far] of [
    ['near (10 turns after the evidence)', withDefaults(), false],
    ['far (end of the chat), earlier exchanges recalled', withDefaults(), true],
    ['far (end of the chat), newest turns only', withDefaults({ earlierInChat: false }), true],
  ] as const) {
    let recall = 0;
    let n = 0;
    for (const [ci, conv] of convs.entries()) {
      const { turns } = wholeConversation(conv, `chat${ci}`);
      const at = new Map(turns.map((t, i) => [t.externalId, i]));
      for (const q of conv.qa.filter((x) => x.category >= 1 && x.category <= 4)) {
        const idx = q.evidence.map((d) => at.get(d)).filter((x): x is number => x !== undefined);
        if (idx.length === 0) continue;
        const upto = far ? turns.length : Math.min(turns.length, Math.max(...idx) + 11);
        const dialogue: DialogueTurn[] = [
          ...turns.slice(0, upto).map((t) => ({ id: t.id, role: t.role, text: t.text, time: t.time })),
          { role: 'user', text: q.question, time: turns[upto - 1]!.time + 60_000 },
        ];
        const p = await reply(llm, empty, dialogue, settings, turns[upto - 1]!.time + 120_000);
        const seen = new Set([...dialogue.slice(-p.chat.recent).map((t) => t.id), ...p.chat.earlierTurnIds]);
        recall += idx.filter((i) => seen.has(turns[i]!.id)).length / idx.length;
        n++;
      }
    }
    rows.push({ profile, where, questions: n, recall: recall / Math.max(1, n) });
  }
  return rows;
}
