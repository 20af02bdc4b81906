// Hostile input handled: random and garbage model outputs through every reader of model
// output, and through linking and the whole memorise job. Small in-browser models truncate, invent
// names and emit nonsense; a hostile conversation can steer them to emit anything. No exception may
// escape a parser, every result must be well-typed, and the stored graph must keep its invariants.
//
// The number of outputs actually fed in is counted and printed ("outputs fuzzed" in RELIABILITY.md).
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cleanText, extractJson, normaliseRelation, pickArray, readIndex } from '../../../src/memory/llm-output';
import { parseSummary } from '../../../src/memory/ingest/summarise';
import { type TranscriptTurn } from '../../../src/memory/ingest/summary-prompt';
import { parseRelationLabels, RELATION_LABELS } from '../../../src/memory/ingest/labelling';
import { parseTimelineNotes } from '../../../src/memory/recall/refine';
import { parseSegmentation } from '../../../src/memory/ingest/segments/parse';
import { segmentSession } from '../../../src/memory/ingest/segments';
import { linkMemory } from '../../../src/memory/ingest/linking';
import { MemoryGraph } from '../../../src/memory/graph';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { createMemoriseJob, memoryUnit, runMemoriseJob } from '../../../src/memory/ingest/memorise';
import { checkGraphInvariants } from '../../support/invariants';
import { withDefaults } from '../../../src/memory/settings';
import { RELATIONS, type Memory, type MemoryKind, type Session, type Turn } from '../../../src/memory/types';
import type { ChatMessage, Embedder, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';

/**
 * Found by this fuzz: normaliseRelation once looked the model's word up in a plain object
 * literal, so "constructor" came back as Object.prototype.constructor. Fixed (own keys only);
 * the words stay in the fuzz pool and the regression test below.
 */

// ---------------------------------------------------------------------------------------------
// Counting: every raw output handed to a parser or to a model double's caller.
const fuzzed: Record<string, number> = {};
function count(name: string, n = 1): void {
  fuzzed[name] = (fuzzed[name] ?? 0) + n;
}
const totalFuzzed = () => Object.values(fuzzed).reduce((a, b) => a + b, 0);

afterAll(() => {
  // Printed for RELIABILITY.md; the last test also asserts the floor of 10,000.
  console.log(`[trust] model outputs fuzzed: ${totalFuzzed()} ${JSON.stringify(fuzzed)}`);
});

// ---------------------------------------------------------------------------------------------
// Garbage generators.
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
const RELATION_WORDS = [
  ...RELATIONS,
  'None',
  'same topic',
  'hindered_by',
  'CAUSED-BY',
  'xWant',
  'because of',
  'Banana',
  '',
  ' ',
  'null',
  'Changed\u0000',
  'Ca\u200buse',
  'Çhanged',
  '🙂',
  'SameTopicSameTopic',
  'toString',
  '__proto__',
  'hasOwnProperty',
  'constructor',
  'Constructor',
  'con-struc-tor',
];
const hugeNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 0, -0, -1, 2 ** 31, 2 ** 53),
  fc.integer({ min: -1_000, max: 1_000 }),
  fc.double({ noNaN: false }),
);
// Raw number text JSON.parse reads as Infinity or loses precision.
const hugeNumberText = fc.oneof(
  fc.constantFrom('1e999', '-1e999', '99999999999999999999999', '0.0000000000000000000001', '-0', '1E+400', '9'.repeat(400)),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
);
const indexLike = fc.oneof(
  hugeNumber,
  hugeNumberText,
  fc.constantFrom('1', '#2', '[3]', 'candidate 2', 'T1', 't2', 'T0', 'T-1', 'T999', '', 'NaN', 'Infinity', null, true, [], {}),
);
const unicode = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates included
  fc.constantFrom(
    '\u202eevil\u202c',
    '\u0000\u0001\u0002',
    'ＡＢＣ',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    'e\u0301'.repeat(50),
    '\ud800',
    '\udfff\ud800',
    '\ufeff{',
    '“smart” ‘quotes’',
  ),
);
const words = fc.oneof(
  unicode,
  fc.constantFrom('User likes tea', 'User prefers coffee', 'Rex is sick', '   ', '<script>x</script>', 'a'.repeat(5000)),
);

/** Any JSON-ish value, with prototype keys mixed in and unexpected types everywhere. */
const nested: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hugeNumber,
    words,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 4 }),
  ),
})).value;

function protoObject(inner: string): string {
  // Written as text: JSON.parse makes "__proto__" an own key, which is exactly what a model emits.
  return `{"__proto__": {"polluted": true, "labels": [{"candidate": 1, "relation": "Cause"}]}, "constructor": {"prototype": {"polluted": true}}, ${inner}}`;
}

function deep(depth: number, open: string, close: string, core = '1'): string {
  return open.repeat(depth) + core + close.repeat(depth);
}

/** Truncates a text at a random point (a model that hit its token limit). */
const truncated = (valid: fc.Arbitrary<string>) =>
  fc.tuple(valid, fc.nat()).map(([text, at]) => text.slice(0, text.length === 0 ? 0 : at % (text.length + 1)));

/** Wraps JSON the way small models do: prose, fences, trailing text. */
const wrapped = (valid: fc.Arbitrary<string>) =>
  fc
    .tuple(
      valid,
      fc.constantFrom('', 'Sure! ', '```json\n', '```\n', 'Here you go:\n'),
      fc.constantFrom('', '\n```', ' Hope that helps', '}}]]', ','),
    )
    .map(([t, pre, post]) => `${pre}${t}${post}`);

/** Common garbage for any parser, plus parser-specific shapes given as `shaped`. */
function garbage(shaped: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const text = fc.oneof(
    { weight: 3, arbitrary: shaped },
    { weight: 2, arbitrary: truncated(shaped) },
    { weight: 1, arbitrary: wrapped(shaped) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: unicode },
    { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: nested.map((v) => JSON.stringify(v) ?? 'undefined') },
    { weight: 1, arbitrary: shaped.map((s) => protoObject(JSON.stringify(s))) },
    {
      weight: 1,
      arbitrary: fc.tuple(shaped, fc.constantFrom(`"x": 1`, `"labels": 7`, `"events": "nope"`)).map(([s, tail]) => protoObject(tail) + s),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: 4000 }), fc.constantFrom(['[', ']'], ['{"a":', '}'], ['{"labels":[', ']}'], ['[[', ']]']))
        .map(([d, [o, c]]) => deep(d, o, c)),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 6000 }).map((d) => '['.repeat(d)) }, // never closed
    { weight: 1, arbitrary: hugeNumberText },
  );
  // Non-string values too: a runtime that hands back an object, null, a number.
  return fc.oneof(
    { weight: 12, arbitrary: text },
    { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
    { weight: 1, arbitrary: nested },
  );
}

// Shapes close to each call's schema, with wrong types mixed in.
const labelShape = fc
  .record({
    labels: fc.oneof(
      fc.array(
        fc.record(
          {
            candidate: indexLike,
            relation: fc.oneof(fc.constantFrom(...RELATION_WORDS), nested),
            label: fc.constantFrom(...RELATION_WORDS),
            index: indexLike,
          },
          { requiredKeys: [] },
        ),
        { maxLength: 8 },
      ),
      fc.array(fc.constantFrom(...RELATION_WORDS), { maxLength: 8 }),
      nested,
    ),
  })
  .chain((o) =>
    fc.oneof(
      fc.constant(JSON.stringify(o)),
      fc.constant(JSON.stringify(o.labels) ?? 'null'),
      fc.constant(JSON.stringify({ 1: 'Cause', 2: 'sametopic', [-1]: 'Want', 999: 'React' })),
    ),
  );

const sourceListItem = fc.constantFrom('T1', 'T2', 'T3', 't4', '[T2]', 'turn-1', 'ext-9', 'T99', 'T0', 'T-3');
const sourceList = fc.array(fc.oneof(indexLike, sourceListItem), { maxLength: 5 });
const summaryItem = fc.record(
  { text: fc.oneof(words, nested), about: fc.oneof(words, nested), turns: fc.oneof(sourceList, nested) },
  { requiredKeys: [] },
);
const summaryShape = fc
  .record(
    {
      events: fc.oneof(fc.array(fc.oneof(summaryItem, words), { maxLength: 6 }), nested),
      userTraits: fc.oneof(fc.array(summaryItem, { maxLength: 3 }), nested),
      user_traits: fc.array(summaryItem, { maxLength: 2 }),
      assistantTraits: fc.oneof(fc.array(summaryItem, { maxLength: 3 }), nested),
      notes: fc.oneof(
        fc.array(
          fc.record({ context: fc.oneof(words, nested), knowledge: fc.oneof(words, nested), turns: sourceList }, { requiredKeys: [] }),
          { maxLength: 3 },
        ),
        nested,
      ),
      facts: fc.array(words, { maxLength: 3 }),
      // The session's topics (SeCom segments) ride on the same call.
      topics: fc.oneof(
        fc.array(
          fc.record(
            { first: fc.oneof(indexLike, sourceListItem), last: fc.oneof(indexLike, sourceListItem), topic: words },
            { requiredKeys: [] },
          ),
          { maxLength: 6 },
        ),
        fc.array(fc.tuple(sourceListItem, sourceListItem), { maxLength: 4 }),
        nested,
      ),
    },
    { requiredKeys: [] },
  )
  .chain((o) => fc.oneof(fc.constant(JSON.stringify(o)), fc.constant(JSON.stringify(o.events) ?? '[]')));

const notesShape = fc
  .record({
    notes: fc.oneof(
      fc.array(fc.oneof(fc.record({ timeline: indexLike, note: fc.oneof(words, nested) }, { requiredKeys: [] }), words), { maxLength: 6 }),
      nested,
    ),
  })
  .map((o) => JSON.stringify(o));

const segmentShape = fc
  .oneof(
    fc.record({
      segments: fc.array(fc.record({ start: indexLike, end: indexLike, first: indexLike, to: indexLike }, { requiredKeys: [] }), {
        maxLength: 8,
      }),
    }),
    fc.array(fc.tuple(indexLike, indexLike), { maxLength: 8 }),
    fc.record({ result: fc.record({ data: fc.record({ ranges: fc.array(fc.tuple(hugeNumber, hugeNumber), { maxLength: 4 }) }) }) }),
    fc.record({ start: hugeNumber, end: hugeNumber }),
  )
  .map((o) => JSON.stringify(o));

// ---------------------------------------------------------------------------------------------
// Well-typedness checks, shared by the direct and the pipeline fuzz.
const LABELS = new Set<unknown>(RELATION_LABELS);
const KINDS = new Set<MemoryKind>(['event', 'user-trait', 'assistant-trait', 'note']);

function expectStrings(xs: unknown): void {
  expect(Array.isArray(xs)).toBe(true);
  for (const x of xs as unknown[]) expect(typeof x).toBe('string');
}

function expectContiguousCover(ranges: ReadonlyArray<{ first: number; last: number }>, n: number): void {
  if (n === 0) {
    expect(ranges).toEqual([]);
    return;
  }
  expect(ranges.length).toBeGreaterThan(0);
  let next = 0;
  for (const r of ranges) {
    expect(Number.isInteger(r.first) && Number.isInteger(r.last)).toBe(true);
    expect(r.first).toBe(next);
    expect(r.last).toBeGreaterThanOrEqual(r.first);
    next = r.last + 1;
  }
  expect(next).toBe(n);
}

const T0 = Date.UTC(2024, 0, 1);
const DAY = 86_400_000;

function transcript(n: number): TranscriptTurn[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `turn-${i}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    text: i % 2 === 0 ? `I like tea and hiking ${i}` : 'Tell me more.',
    time: T0 + i * 1000,
    externalId: i === 0 ? 'ext-9' : undefined,
  }));
}

const RUNS = { extract: 1500, summary: 2500, labels: 2500, notes: 1500, segments: 2500 };

describe('every parser survives garbage and returns well-typed output', () => {
  it('extractJson, normaliseRelation, readIndex, pickArray, cleanText', () => {
    fc.assert(
      fc.property(garbage(fc.oneof(summaryShape, labelShape, notesShape, segmentShape)), (raw) => {
        count('extractJson+helpers');
        const ex = extractJson(raw);
        expect(typeof ex.found).toBe('boolean');
        expect(typeof ex.repaired).toBe('boolean');
        expectStrings(ex.problems);
        if (ex.found) expect(() => JSON.stringify(ex.value)).not.toThrow();
        else expect(ex.value).toBeUndefined();

        const rel = normaliseRelation(raw);
        expect(LABELS.has(rel.label)).toBe(true);
        const idx = readIndex(raw);
        // Consumers range-check; an index must at least be a number that compares sanely.
        expect(idx === undefined || (typeof idx === 'number' && !Number.isNaN(idx))).toBe(true);
        const arr = pickArray(ex.value, ['labels', 'events', 'notes', '__proto__', 'constructor']);
        expect(arr === undefined || Array.isArray(arr)).toBe(true);
        const clean = cleanText(raw);
        expect(typeof clean).toBe('string');
        expect(clean.length).toBeLessThanOrEqual(600);
      }),
      { numRuns: RUNS.extract },
    );
  });

  it('normaliseRelation maps every relation word into the relation set', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...RELATION_WORDS), fc.string({ maxLength: 20 }), fc.anything({ maxDepth: 1 })), (word) => {
        count('normaliseRelation');
        expect(LABELS.has(normaliseRelation(word).label)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('parseSummary', () => {
    fc.assert(
      fc.property(garbage(summaryShape), fc.integer({ min: 0, max: 6 }), (raw, n) => {
        count('parseSummary');
        const turns = transcript(n);
        const ids = new Set(turns.map((t) => t.id));
        const out = parseSummary(raw, turns);
        expect(typeof out.parsed).toBe('boolean');
        expectStrings(out.problems);
        if (n === 0) expect(out.items).toEqual([]);
        for (const item of out.items) {
          expect(KINDS.has(item.kind)).toBe(true);
          expect(typeof item.text).toBe('string');
          expect(item.text.length).toBeGreaterThan(0);
          expect(item.text.length).toBeLessThanOrEqual(600);
          expect(item.text).toBe(item.text.trim());
          expect(item.subject === undefined || typeof item.subject === 'string').toBe(true);
          expect(item.context === undefined || typeof item.context === 'string').toBe(true);
          expect(item.sourceTurnIds.length).toBeGreaterThan(0);
          expect(new Set(item.sourceTurnIds).size).toBe(item.sourceTurnIds.length);
          for (const id of item.sourceTurnIds) expect(ids.has(id)).toBe(true);
          expect(Number.isFinite(item.time)).toBe(true);
          expect(item.time).toBeGreaterThanOrEqual(T0);
          expect(typeof item.sourceGuessed).toBe('boolean');
        }
        // Topics, when given, are a contiguous cover of the session's turn positions.
        const topics = (out as { topics?: Array<{ first: number; last: number }> }).topics;
        if (topics !== undefined) expectContiguousCover(topics, n);
        // Nothing leaked onto Object.prototype from a "__proto__" key.
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: RUNS.summary },
    );
  });

  it('parseRelationLabels', () => {
    fc.assert(
      fc.property(garbage(labelShape), fc.integer({ min: 0, max: 8 }), (raw, n) => {
        count('parseRelationLabels');
        const out = parseRelationLabels(raw, n);
        expect(out.labels).toHaveLength(n);
        for (const l of out.labels) expect(LABELS.has(l)).toBe(true);
        expectStrings(out.problems);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: RUNS.labels },
    );
  });

  it('parseTimelineNotes', () => {
    fc.assert(
      fc.property(garbage(notesShape), fc.integer({ min: 0, max: 6 }), (raw, n) => {
        count('parseTimelineNotes');
        const out = parseTimelineNotes(raw, n);
        expect(out.notes).toHaveLength(n);
        for (const note of out.notes) {
          expect(note === undefined || typeof note === 'string').toBe(true);
          if (note !== undefined) expect(note.length).toBeLessThanOrEqual(800);
        }
        expectStrings(out.problems);
      }),
      { numRuns: RUNS.notes },
    );
  });

  it('parseSegmentation always returns a contiguous cover of the session', () => {
    fc.assert(
      fc.property(garbage(segmentShape), fc.integer({ min: 0, max: 40 }), (raw, n) => {
        count('parseSegmentation');
        const out = parseSegmentation(raw, n);
        expect(typeof out.usable).toBe('boolean');
        expect(typeof out.repaired).toBe('boolean');
        expectContiguousCover(out.ranges, n);
      }),
      { numRuns: RUNS.segments },
    );
  });

  it('regression: a relation named "constructor" is read as None', () => {
    count('regression', 3);
    expect(normaliseRelation('constructor').label).toBe('None');
    expect(parseRelationLabels('{"labels":[{"candidate":1,"relation":"Constructor"}]}', 1).labels).toEqual(['None']);
  });
});

// ---------------------------------------------------------------------------------------------
// Through linking and the whole job.

/** Answers every JSON call with the next garbage output; chat is never used by the job. */
class GarbageModel implements LanguageModel {
  readonly modelId = 'garbage';
  calls = 0;
  constructor(
    private readonly outputs: readonly unknown[],
    private readonly throwEvery = 0,
  ) {}
  private next(): string {
    const i = this.calls++;
    if (this.throwEvery > 0 && i % this.throwEvery === this.throwEvery - 1) throw new Error('model crashed');
    const out = this.outputs[i % this.outputs.length];
    // A runtime may hand back anything; the port promises a string, so coerce the odd value.
    return typeof out === 'string' ? out : (JSON.stringify(out) ?? String(out));
  }
  async chat(_m: ChatMessage[], _o?: GenerateOptions): Promise<string> {
    count('pipeline-chat');
    return this.next();
  }
  async json(_m: ChatMessage[], _s: JsonSchema, _o?: GenerateOptions): Promise<string> {
    count('pipeline-json');
    return this.next();
  }
}

const anyGarbage = garbage(fc.oneof(summaryShape, labelShape, notesShape, segmentShape));
const toyEmbedder: Embedder = {
  modelId: 'toy',
  dimension: 4,
  embed: async (texts) =>
    texts.map((t) => {
      const v = new Float32Array(4);
      for (let i = 0; i < t.length; i++) v[t.charCodeAt(i) % 4] += 1;
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    }),
};

function memory(id: string, day: number, text: string, kind: MemoryKind = 'event'): Memory {
  return {
    id,
    kind,
    text,
    time: T0 + day * DAY,
    sourceTurnIds: [],
    sessionId: `s${day}`,
    edited: false,
    createdAt: T0 + day * DAY,
    subject: kind === 'event' ? undefined : 'user',
  };
}

describe('linkMemory with a garbage labeller', () => {
  it('plans only valid, older -> newer edges with known relations', async () => {
    const TEXTS = ['User likes tea', 'User prefers coffee', 'User hikes with Rex', 'Rex is sick', 'User likes tea a lot'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.constantFrom(...TEXTS), fc.constantFrom<MemoryKind>('event', 'user-trait')), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.tuple(fc.integer({ min: 0, max: 20 }), fc.constantFrom(...TEXTS), fc.constantFrom<MemoryKind>('event', 'user-trait')),
        fc.array(anyGarbage, { minLength: 1, maxLength: 3 }),
        async (existing, [day, text, kind], outputs) => {
          const mems = existing.map(([d, t, k], i) => memory(`m${i}`, d, t, k));
          const fresh = memory('new', day, text, kind);
          const all = [...mems, fresh];
          const byId = new Map(all.map((m) => [m.id, m]));
          const graph = MemoryGraph.from(all, []);
          const index = createHybridIndex();
          for (const m of all) index.upsert(memoryUnit(m));
          const llm = new GarbageModel(outputs);
          const plan = await linkMemory({
            memory: fresh,
            graph,
            index,
            lookup: (id) => byId.get(id),
            settings: withDefaults({ j: 4 }),
            llm,
            now: T0,
          });
          for (const e of plan.edges) {
            expect(RELATIONS as readonly string[]).toContain(e.relation);
            expect(byId.has(e.from) && byId.has(e.to)).toBe(true);
          }
          for (const c of plan.candidates) expect(LABELS.has(c.label)).toBe(true);
          const updated = new Map(byId);
          for (const m of plan.superseded) updated.set(m.id, m);
          expect(checkGraphInvariants([...updated.values()], plan.edges)).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('runMemoriseJob with a garbage-emitting model keeps the graph invariants', () => {
  const SESSION_TEXTS = [
    'I started guitar lessons',
    'I love green tea',
    'My dog Rex is sick',
    'I switched to coffee',
    'Rex is better now',
    '',
  ];

  async function seed(repo: InMemoryRepository, sessions: string[][]) {
    const jobs = [];
    for (const [i, texts] of sessions.entries()) {
      const id = `s${i}`;
      const time = T0 + i * 10 * DAY;
      const turns: Turn[] = texts.flatMap((text, k) => [
        { id: `${id}:u${k}`, sessionId: id, index: 2 * k, role: 'user' as const, text, time: time + k * 1000, status: 'complete' as const },
        {
          id: `${id}:a${k}`,
          sessionId: id,
          index: 2 * k + 1,
          role: 'assistant' as const,
          text: 'Go on.',
          time: time + k * 1000 + 500,
          status: 'complete' as const,
        },
      ]);
      const session: Session = { id, title: id, startedAt: time, lastActivityAt: time, status: 'ended' };
      const job = createMemoriseJob(id, time + 5000);
      await repo.apply({ sessions: [session], turns, jobs: [job] });
      jobs.push(job);
    }
    return jobs;
  }

  it('after every run: invariants hold, relations are known, no duplicates, segments cover each session', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom(...SESSION_TEXTS), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.oneof(anyGarbage, summaryShape, labelShape, segmentShape), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(0, 0, 3, 5),
        async (sessions, outputs, relationAware, withEmbedder, throwEvery) => {
          const repo = new InMemoryRepository();
          const jobs = await seed(repo, sessions);
          const llm = new GarbageModel(outputs, throwEvery);
          const settings = withDefaults({ relationAwareLinking: relationAware, maxStepAttempts: 2, lexicalSimilarityThreshold: 0.1, j: 3 });
          for (const job of jobs) {
            const index = createHybridIndex();
            for (const m of repo.memories.values()) index.upsert(memoryUnit(m));
            const out = await runMemoriseJob(job, {
              repo,
              llm,
              index,
              settings,
              now: () => T0 + 999,
              embedder: withEmbedder ? toyEmbedder : undefined,
              segmenter: ({ turns, ...rest }) => segmentSession(turns, rest),
            });
            runs++;
            expect(['done', 'failed']).toContain(out.status);
            // Invariants after every single run, not just at the end.
            const memories = [...repo.memories.values()];
            const edges = [...repo.edges.values()];
            expect(checkGraphInvariants(memories, edges)).toEqual([]);
            for (const e of edges) expect(RELATIONS as readonly string[]).toContain(e.relation);
            const keys = memories.map((m) => `${m.kind}|${m.subject}|${m.text.toLowerCase()}`);
            expect(new Set(keys).size).toBe(keys.length);
            for (const m of memories) {
              expect(KINDS.has(m.kind)).toBe(true);
              expect(m.sourceTurnIds.every((t) => t.startsWith(`${m.sessionId}:`))).toBe(true);
            }
            if (out.status === 'done') {
              const turns = await repo.listTurns(job.sessionId!);
              const live = turns.filter((t) => t.text.trim() !== '');
              const segs = [...repo.segments.values()]
                .filter((s) => s.sessionId === job.sessionId)
                .sort((a, b) => a.firstTurn - b.firstTurn);
              expect(segs.flatMap((s) => s.turnIds)).toEqual(live.map((t) => t.id));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    console.log(`[trust] memorise jobs run on garbage: ${runs}`);
  });

  it('fuzzed at least 10,000 model outputs in all', () => {
    expect(totalFuzzed()).toBeGreaterThanOrEqual(10_000);
  });
});
