// Shared by the store tests: a fresh in-memory IndexedDB per test and an exact dump of a database.
import 'fake-indexeddb/auto'; // idb checks instanceof against the global IDB classes
import { IDBFactory } from 'fake-indexeddb';
import fc from 'fast-check';
import { RELATIONS } from '../../../src/memory/types';
import type {
  BranchTurn,
  Edge,
  Memory,
  Segment,
  Session,
  Setting,
  Tombstone,
  Turn,
  TurnVersion,
  UsedMemory,
  VectorRecord,
} from '../../../src/memory/types';
import { openTealeafDb } from '../../../src/store/db';
import type { OpenTealeafDbOptions, TealeafDb } from '../../../src/store/db';
import { STORE_NAMES } from '../../../src/store/schema';
import { MAX_TIME, MIN_TIME } from '../../../src/memory/limits';

export function freshFactory(): IDBFactory {
  return new IDBFactory();
}

export function openFresh(options: OpenTealeafDbOptions = {}): Promise<TealeafDb> {
  return openTealeafDb({ factory: freshFactory(), ...options });
}

function hex(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
}

/**
 * Every record of every store (or of `names`), in key order, as text: equal dumps mean
 * byte-identical data.
 */
export async function dump(db: TealeafDb, names: readonly (typeof STORE_NAMES)[number][] = STORE_NAMES): Promise<string> {
  const tx = db.transaction([...names]);
  const all = await Promise.all(names.map((name) => tx.objectStore(name).getAll()));
  return JSON.stringify(Object.fromEntries(names.map((n, i) => [n, all[i]])), (_k, v: unknown) => {
    if (v instanceof Float32Array) return { f32: hex(v) };
    if (typeof v === 'number' && !Number.isFinite(v)) return `number:${String(v)}`;
    if (v === undefined) return '<undefined>';
    return v;
  });
}

// ---------------------------------------------------------------------------------------------
// Generators of valid data. Ids get a positional prefix so they are unique, plus arbitrary text
// (any Unicode, lone surrogates included) to exercise encoding.

// Mostly short text; now and then one longer than the old 100,000-character backup limit (a long
// pasted message), which the app stores and so must export and import again.
const longText = fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }).map((s) => s.repeat(Math.ceil(120_000 / s.length)));
const anyText = fc.string({ unit: 'binary', maxLength: 30 });
/** Text fields (messages, memories, passages, titles): any text, sometimes a very long one. */
const bodyText = fc.oneof({ arbitrary: anyText, weight: 40 }, { arbitrary: longText, weight: 1 });
// Ordinary times, and the extremes JavaScript's Date can still represent.
const time = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 4_102_444_800_000 }), weight: 8 },
  { arbitrary: fc.constantFrom(MIN_TIME, MAX_TIME), weight: 1 },
  { arbitrary: fc.integer({ min: MIN_TIME, max: MAX_TIME }), weight: 1 },
);
const score = fc.double({ min: 0, max: 1, noNaN: true });
const idSuffix = fc.string({ unit: 'binary', maxLength: 8 });

export interface Dataset {
  sessions: Session[];
  turns: Turn[];
  memories: Memory[];
  edges: Edge[];
  segments: Segment[];
  settings: Setting[];
  vectors: VectorRecord[];
  tombstones: Tombstone[];
}

const usedMemoryArb = (ids: string[]): fc.Arbitrary<UsedMemory> => {
  const pick = ids.length > 0 ? fc.constantFrom(...ids) : fc.constant('m-none');
  return fc.record(
    {
      memoryIds: fc.array(pick, { maxLength: 3 }),
      segmentIds: fc.array(
        anyText.map((s) => `g-${s}`),
        { maxLength: 2 },
      ),
      timelines: fc.array(
        fc.record({
          memoryIds: fc.array(pick, { maxLength: 3 }),
          relations: fc.array(fc.constantFrom(...RELATIONS), { maxLength: 2 }),
          through: pick,
        }),
        { maxLength: 2 },
      ),
      refined: fc.array(anyText, { maxLength: 2 }),
      scores: fc.array(
        fc.record(
          {
            unitId: pick,
            unitKind: fc.constantFrom('memory' as const, 'segment' as const, 'turn' as const),
            lexical: score,
            dense: score,
            fused: score,
            lexicalRank: fc.nat(50),
            denseRank: fc.nat(50),
            topic: fc.double({ min: 0, max: 1, noNaN: true }),
            topicRank: fc.nat(50),
          },
          { requiredKeys: ['unitId', 'unitKind', 'fused'] },
        ),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ['memoryIds', 'segmentIds', 'timelines', 'scores'] },
  );
};

const statusArb = fc.constantFrom('complete' as const, 'streaming' as const, 'interrupted' as const, 'stopped' as const, 'error' as const);

/** Other versions of a turn (an edit, a regeneration), as turn-versions.ts keeps them. */
const versionsArb = (ids: string[]): fc.Arbitrary<TurnVersion[]> =>
  fc.array(
    fc.record(
      { text: bodyText, time, status: statusArb, modelId: anyText, usedMemory: usedMemoryArb(ids) },
      { requiredKeys: ['text', 'time', 'status'] },
    ),
    { maxLength: 2 },
  );

/** Turns put away in branches, flat, each naming the version it followed. */
const branchesArb = (ids: string[], prefix: string): fc.Arbitrary<BranchTurn[]> =>
  fc
    .array(
      fc.record(
        {
          role: fc.constantFrom('user' as const, 'assistant' as const),
          text: bodyText,
          time,
          status: statusArb,
          modelId: anyText,
          usedMemory: usedMemoryArb(ids),
          externalId: anyText,
          versions: versionsArb(ids),
          shown: fc.nat(3),
          follows: fc.record({ turnId: anyText, version: fc.nat(3) }),
          suffix: idSuffix,
        },
        { requiredKeys: ['role', 'text', 'time', 'status', 'follows', 'suffix'] },
      ),
      { maxLength: 2 },
    )
    .map((bs) => bs.map(({ suffix, ...b }, i): BranchTurn => ({ ...b, id: `${prefix}b${i}-${suffix}` })));

const settingValue = fc.oneof(
  anyText,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 4 }),
  fc.record({ model: anyText, k: fc.nat(100), on: fc.boolean() }),
);

/**
 * A consistent dataset, as the app can store it: turns and segments point at sessions, edges,
 * supersededBy and vectors at memories, (session, index) unique.
 */
export function datasetArb(prefix = 'x', max = 5): fc.Arbitrary<Dataset> {
  return fc
    .record({
      sessionSuffixes: fc.array(idSuffix, { maxLength: max }),
      memorySuffixes: fc.array(idSuffix, { maxLength: max * 2 }),
    })
    .chain(({ sessionSuffixes, memorySuffixes }) => {
      const sessionIds = sessionSuffixes.map((s, i) => `${prefix}s${i}-${s}`);
      const memoryIds = memorySuffixes.map((s, i) => `${prefix}m${i}-${s}`);
      const sessionPick = sessionIds.length > 0 ? fc.constantFrom(...sessionIds) : fc.constant(`${prefix}s-none`);
      const sessions = fc.tuple(
        ...sessionIds.map((id) =>
          fc.record(
            {
              id: fc.constant(id),
              title: bodyText,
              startedAt: time,
              lastActivityAt: time,
              endedAt: time,
              status: fc.constantFrom('open' as const, 'ended' as const, 'memorised' as const),
              endReason: fc.constantFrom('button' as const, 'new-chat' as const, 'idle' as const, 'import' as const),
              deviceId: fc.constantFrom('0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210'),
            },
            { requiredKeys: ['id', 'title', 'startedAt', 'lastActivityAt', 'status'] },
          ),
        ),
      );
      const turns = fc
        .tuple(
          ...sessionIds.map((sessionId, si) =>
            fc
              .array(
                fc.record(
                  {
                    role: fc.constantFrom('user' as const, 'assistant' as const),
                    text: bodyText,
                    time,
                    status: statusArb,
                    modelId: anyText,
                    usedMemory: usedMemoryArb(memoryIds),
                    externalId: anyText,
                    versions: versionsArb(memoryIds),
                    shown: fc.nat(3),
                    branches: branchesArb(memoryIds, `${prefix}${si}.`),
                    suffix: idSuffix,
                  },
                  { requiredKeys: ['role', 'text', 'time', 'status', 'suffix'] },
                ),
                { maxLength: 4 },
              )
              .map((ts) =>
                ts.map(({ suffix, ...t }, index): Turn => ({ ...t, id: `${prefix}t${si}.${index}-${suffix}`, sessionId, index })),
              ),
          ),
        )
        .map((groups) => groups.flat());
      const memoryPick = memoryIds.length > 0 ? fc.constantFrom(...memoryIds) : fc.constant('');
      const memories = fc.tuple(
        ...memoryIds.map((id) =>
          fc.record(
            {
              id: fc.constant(id),
              kind: fc.constantFrom(
                'event' as const,
                'user-trait' as const,
                'assistant-trait' as const,
                'note' as const,
                'instruction' as const,
              ),
              text: bodyText,
              subject: anyText,
              time,
              sourceTurnIds: fc.array(
                anyText.map((s) => `t-${s}`),
                { maxLength: 3 },
              ),
              sessionId: sessionPick,
              supersededBy: memoryPick,
              endedAt: time,
              edited: fc.boolean(),
              createdAt: time,
              context: bodyText,
              worthRemembering: fc.boolean(),
            },
            { requiredKeys: ['id', 'kind', 'text', 'time', 'sourceTurnIds', 'sessionId', 'edited', 'createdAt'] },
          ),
        ),
      );
      const edges =
        memoryIds.length === 0
          ? fc.constant([] as Edge[])
          : fc
              .array(
                fc.record(
                  {
                    from: memoryPick,
                    to: memoryPick,
                    relation: fc.constantFrom(...RELATIONS),
                    origin: fc.constantFrom('model' as const, 'similarity' as const, 'user' as const),
                    createdAt: time,
                    suffix: idSuffix,
                    askEnded: fc.constant(true),
                  },
                  { requiredKeys: ['from', 'to', 'relation', 'origin', 'createdAt', 'suffix'] },
                ),
                { maxLength: max * 2 },
              )
              // A link from a memory to itself is not kept (limits.ts, isSelfLink): not app-reachable.
              .map((es) =>
                es.filter((e) => e.from !== e.to).map(({ suffix, ...e }, i): Edge => ({ ...e, id: `${prefix}e${i}-${suffix}` })),
              );
      const segments =
        sessionIds.length === 0
          ? fc.constant([] as Segment[])
          : fc
              .array(
                fc.record({
                  sessionId: sessionPick,
                  firstTurn: fc.nat(10),
                  lastTurn: fc.nat(10),
                  turnIds: fc.array(anyText, { maxLength: 3 }),
                  text: bodyText,
                  indexText: bodyText,
                  time,
                  suffix: idSuffix,
                }),
                { maxLength: max },
              )
              .map((gs) => gs.map(({ suffix, ...g }, i): Segment => ({ ...g, id: `${prefix}g${i}-${suffix}` })));
      const settings = fc
        .uniqueArray(fc.record({ key: anyText.filter((k) => k.length > 0), value: settingValue }), {
          selector: (s) => s.key,
          maxLength: 4,
        })
        .map((ss) => ss.map((s): Setting => ({ key: `${prefix}${s.key}`, value: s.value })));
      const vectors =
        memoryIds.length === 0
          ? fc.constant([] as VectorRecord[])
          : fc
              .uniqueArray(
                fc.record({
                  unitId: memoryIds.length > 0 ? memoryPick : fc.constant(`${prefix}m-none`),
                  modelId: fc.constantFrom('minilm', 'bge-small'),
                  vector: fc.float32Array({ minLength: 1, maxLength: 8 }),
                }),
                { selector: (v) => `${v.unitId}\u0000${v.modelId}`, maxLength: max },
              )
              .map((vs) => vs as VectorRecord[]);
      // What the user deleted: chats and memories by id (some of them also present: a restored backup).
      const tombstones = fc
        .uniqueArray(
          fc.record({
            kind: fc.constantFrom('session' as const, 'memory' as const),
            id: fc.oneof(
              anyText.map((x) => `${prefix}gone-${x}`),
              ...[...sessionIds, ...memoryIds].map((x) => fc.constant(x)),
            ),
            deletedAt: time,
          }),
          { selector: (t) => `${t.kind}\u0000${t.id}`, maxLength: 3 },
        )
        .map((ts) => ts as Tombstone[]);
      return fc.record({ sessions, turns, memories, edges, segments, settings, vectors, tombstones });
    })
    .map((d) => ({
      ...d,
      sessions: [...d.sessions],
      memories: d.memories.map((m) => (m.supersededBy === '' || m.supersededBy === m.id ? withoutSuperseded(m) : m)),
    }));
}

function withoutSuperseded(m: Memory): Memory {
  const copy = { ...m };
  delete copy.supersededBy;
  return copy;
}

/** A turn as versions before schema v4 stored it: the turns put away nested inside a version (`after`). */
export type LegacyTurn = Omit<Turn, 'versions' | 'branches'> & { versions?: object[] };

/**
 * The conversation an older version wrote (session `s`) when the user sent `n` messages and then
 * edited each from the last back to the first: each edit nested everything after it one level
 * deeper. `reply` adds fields to every reply (e.g. the memory it drew on).
 */
export function legacyEdits(n: number, reply: Partial<Turn> = {}): LegacyTurn[] {
  const turn = (id: string, index: number, text: string): LegacyTurn => ({
    id,
    sessionId: 's',
    index,
    role: index % 2 ? 'assistant' : 'user',
    text,
    time: 1_700_000_000_000 + index,
    status: 'complete',
    ...(index % 2 ? reply : {}),
  });
  let shown: LegacyTurn[] = [];
  for (let i = 0; i < n; i++) shown.push(turn(`u${i}`, 2 * i, `m${i}`), turn(`a${i}`, 2 * i + 1, `r${i}`));
  for (let i = n - 1; i >= 0; i--) {
    const at = 2 * i;
    const old = shown[at]!;
    const after = shown.slice(at + 1);
    const edited: LegacyTurn = {
      ...old,
      text: `m${i} edited`,
      versions: [{ text: old.text, time: old.time, status: 'complete', after }],
      shown: 1,
    };
    shown = [...shown.slice(0, at), edited, turn(`b${i}`, at + 1, `r${i} edited`)];
  }
  return shown;
}
