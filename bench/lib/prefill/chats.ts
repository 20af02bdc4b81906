// The chats bench:prefill replays, each with memory in play:
// - synthetic chats of 50 and 200 turns (a turn: the person's message and the reply), after two
//   earlier sessions memorised through the real job (eight facts, three of them changed a week
//   later); every fourth message touches one of those facts, and every tenth states a fact of the
//   chat itself (a colleague and what they do), asked about later;
// - each shared LoCoMo conversation: its first half of sessions memorised through the real job
//   (bench/lib/locomo-ingest.ts, LoCoMo's observations as the memories), then the user's lines of
//   the later sessions played as one continuing chat, each answered by the scripted reply.
// Probes are the in-chat recall checks of bench:fit: a question asked aside (not sent to the
// engines whose cache is measured) 10 turns after a chat fact ("near"), at the chat's end about
// every chat fact ("far"), and at the end about what the earlier sessions hold ("memory").
import { enforce } from '../../../tests/support/standin';
import { ModelDouble } from '../../../tests/support/model-double';
import { locomoSessionRecords, type LocomoConversation } from '../../../src/memory/locomo';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { segmentUnit } from '../../../src/memory/retrieval/units';
import { withDefaults } from '../../../src/memory/settings';
import type { Id, Millis, Session, Turn } from '../../../src/memory/types';
import { ingestLocomo } from '../locomo-ingest';
import { questionsOf } from '../locomo-report';
import { emptyWorld, memorise, type World } from '../fit/world';

export type ProbeKind = 'near' | 'far' | 'memory';

export interface Probe {
  kind: ProbeKind;
  /** Asked after the reply of this turn (0-based). */
  after: number;
  question: string;
  /** Turn ids whose text answers it. */
  evidence: Id[];
}

export interface UserLine {
  id: Id;
  text: string;
  time: Millis;
}

export interface ChatPlan {
  kind: string;
  /** In words, for the report. */
  about: string;
  memory: Pick<World, 'index' | 'graph' | 'memories'>;
  lines: UserLine[];
  probes: Probe[];
}

/** Turns the near probe waits after its evidence: 10 turns of bench:fit, 5 of the person's messages. */
const NEAR_AFTER = 5;

const DAY = 86_400_000;

const PAST: Array<{ text: string; probe: string; touch: string }> = [
  {
    text: 'My sister Ingrid lives in Bergen and visits me every Christmas.',
    probe: 'When does my sister Ingrid visit?',
    touch: 'Ingrid called from Bergen today about Christmas.',
  },
  {
    text: "I work as a nurse on the children's ward at the hospital.",
    probe: 'Where do I work as a nurse?',
    touch: 'A long shift on the ward again, the children were restless.',
  },
  {
    text: 'My dog Pepper is afraid of thunderstorms.',
    probe: 'What is my dog Pepper afraid of?',
    touch: 'Pepper hid under the bed again when the storm came.',
  },
  {
    text: 'I am training for the Oslo half marathon in September.',
    probe: 'Which race am I training for?',
    touch: 'My legs are sore from the long marathon training run.',
  },
  {
    text: "My favourite food is my grandmother's fish soup.",
    probe: 'What is my favourite food?',
    touch: 'I tried to cook fish soup like my grandmother did.',
  },
  {
    text: 'I am learning to play the cello on Tuesday evenings.',
    probe: 'Which instrument am I learning?',
    touch: 'The cello lesson on Tuesday went better than I feared.',
  },
  {
    text: 'I grow tomatoes on the small balcony of my flat.',
    probe: 'What do I grow on my balcony?',
    touch: 'The tomatoes on the balcony are finally turning red.',
  },
  {
    text: 'I am allergic to peanuts.',
    probe: 'What am I allergic to?',
    touch: 'A colleague offered me cake and I had to ask about peanuts.',
  },
];
const CHANGED = [
  'Pepper is not afraid of thunderstorms anymore since the training.',
  'I stopped working on the ward and now teach nursing students.',
  'I moved my tomatoes from the balcony to a garden plot.',
];
const COLLEAGUES = ['Marit', 'Tobias', 'Sigrid', 'Anders', 'Liv', 'Henrik', 'Astrid', 'Jonas', 'Frida', 'Eirik', 'Solveig', 'Magnus'];
const HOBBIES = [
  'bakes sourdough bread every Friday',
  'plays the trumpet in a brass band',
  'restores old motorbikes',
  'keeps bees on the hospital roof',
  'swims in the fjord all winter',
  'collects vinyl records of Nordic jazz',
  'builds model ships in bottles',
  'paints watercolours of lighthouses',
  'climbs frozen waterfalls',
  'brews cider from wild apples',
  'writes crime novels at night',
  'grows chillies in a greenhouse',
];
const EVERYDAY = [
  'Today I cleaned the kitchen and read a chapter of a mystery novel.',
  'The bus was late again so I walked part of the way home.',
  'I am thinking about what to cook for dinner this weekend.',
  'It rained all afternoon and I stayed inside with a blanket.',
  'I watched a documentary about whales and could not stop thinking about it.',
  'My neighbour is renovating and the drilling started at seven.',
  'I finally answered all my emails and feel lighter.',
  'I bought new running shoes and they feel strange.',
  'Work was calm for once and I left early.',
  'I want to plan a short trip somewhere by train.',
];

function session(id: string, lines: string[], start: Millis): { session: Session; turns: Turn[] } {
  const turns: Turn[] = lines.flatMap((text, i) => [
    { id: `${id}:u${i}`, sessionId: id, index: 2 * i, role: 'user' as const, text, time: start + i * 120_000, status: 'complete' as const },
    {
      id: `${id}:a${i}`,
      sessionId: id,
      index: 2 * i + 1,
      role: 'assistant' as const,
      text: 'Thank you for telling me.',
      time: start + i * 120_000 + 60_000,
      status: 'complete' as const,
    },
  ]);
  const last = turns.at(-1)!.time;
  return { session: { id, title: id, startedAt: start, lastActivityAt: last, endedAt: last, status: 'ended' }, turns };
}

/** Two earlier sessions memorised through the real job: the eight facts, then three of them changed. */
export async function syntheticMemory(): Promise<{ world: World; factTurns: Id[] }> {
  const world = emptyWorld();
  const llm = enforce(new ModelDouble({ judge: true, traits: true }), 'webgpu-4096');
  const start = Date.UTC(2025, 0, 6, 18);
  const first = session('past1', [...PAST.map((f) => f.text), EVERYDAY[0]!, EVERYDAY[1]!], start);
  await memorise(world, first.session, first.turns, llm, withDefaults());
  const second = session('past2', [...CHANGED, EVERYDAY[2]!], start + 7 * DAY);
  await memorise(world, second.session, second.turns, llm, withDefaults());
  for (const s of await world.repo.listSegments()) world.index.upsert(segmentUnit(s));
  return { world, factTurns: PAST.map((_, i) => `past1:u${i}`) };
}

/** A chat of `turns` of the person's messages on top of the synthetic memory. */
export function syntheticPlan(turns: number, memory: { world: World; factTurns: Id[] }): ChatPlan {
  const start = Date.UTC(2025, 1, 3, 9);
  const lines: UserLine[] = [];
  const probes: Probe[] = [];
  for (let i = 0; i < turns; i++) {
    const id = `chat${turns}:u${i}`;
    let text: string;
    if (i % 10 === 2) {
      const c = ((i - 2) / 10) % COLLEAGUES.length;
      text = `By the way, my colleague ${COLLEAGUES[c]} ${HOBBIES[c]}.`;
      const question = `What did I tell you about my colleague ${COLLEAGUES[c]}?`;
      if (i + NEAR_AFTER < turns) probes.push({ kind: 'near', after: i + NEAR_AFTER, question, evidence: [id] });
      probes.push({ kind: 'far', after: turns - 1, question, evidence: [id] });
    } else if (i % 4 === 3) text = PAST[((i - 3) / 4) % PAST.length]!.touch;
    else text = `${EVERYDAY[i % EVERYDAY.length]} (${i + 1})`;
    lines.push({ id, text, time: start + i * 5 * 60_000 });
  }
  PAST.forEach((f, i) => probes.push({ kind: 'memory', after: turns - 1, question: f.probe, evidence: [memory.factTurns[i]!] }));
  return {
    kind: `synthetic-${turns}`,
    about: `synthetic chat of ${turns} turns, 8 remembered facts (3 changed), a chat fact every 10 turns`,
    memory: memory.world,
    lines,
    probes,
  };
}

/** A LoCoMo conversation: its earlier half memorised, the user's lines of the later half replayed. */
export async function locomoPlan(conv: LocomoConversation, name: string): Promise<ChatPlan> {
  const half = Math.floor(conv.sessions.length / 2);
  const ingested = await ingestLocomo({ ...conv, sessions: conv.sessions.slice(0, half) }, `${name}m`);
  const index = createHybridIndex();
  for (const m of ingested.memories) index.upsert(memoryUnit(m));
  for (const s of ingested.segments) index.upsert(segmentUnit(s));
  const memory = { index, graph: ingested.graph, memories: new Map(ingested.memories.map((m) => [m.id, m])) };
  const later = conv.sessions.slice(half).flatMap((s) => locomoSessionRecords(conv, s, `${name}c`).turns);
  const users = later.filter((t) => t.role === 'user');
  const lines = users.map((t) => ({ id: t.id, text: t.text, time: t.time }));
  const at = new Map(users.map((t, i) => [t.externalId!, i]));
  const probes: Probe[] = [];
  const last = lines.length - 1;
  // Questions on the earlier sessions: memory. On the person's own lines of the replayed ones: the chat.
  for (const q of questionsOf(ingested))
    if (q.evidence.length > 0) probes.push({ kind: 'memory', after: last, question: q.query, evidence: q.evidence });
  for (const q of conv.qa.filter((x) => x.category >= 1 && x.category <= 4)) {
    const idx = q.evidence.map((d) => at.get(d));
    if (idx.length === 0 || idx.some((i) => i === undefined)) continue;
    const evidence = idx.map((i) => lines[i!]!.id);
    const upto = Math.max(...(idx as number[])) + NEAR_AFTER;
    if (upto < last) probes.push({ kind: 'near', after: upto, question: q.question, evidence });
    probes.push({ kind: 'far', after: last, question: q.question, evidence });
  }
  return {
    kind: `locomo-${name}`,
    about: `LoCoMo ${name}: sessions 1-${half} memorised (${ingested.memories.length} memories), the user's ${lines.length} lines of sessions ${half + 1}-${conv.sessions.length} replayed`,
    memory,
    lines,
    probes,
  };
}
