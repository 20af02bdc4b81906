import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { MemoryGraph } from '../../../src/memory/graph';
import { checkGraphInvariants } from '../../support/invariants';
import { parseLocomoConversation } from '../../../src/memory/locomo';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import type { Id, Memory } from '../../../src/memory/types';
import type { LanguageModel } from '../../../src/ports';
import {
  importLocomo,
  LocomoFormatError,
  locomoImportPrefix,
  validateLocomo,
  type LocomoImportDeps,
} from '../../../src/services/memory/locomo-import';
import { ScriptedModel } from '../memory/helpers';

const ROOT = resolve(import.meta.dirname, '../../..');
const FIXTURE = JSON.parse(readFileSync(resolve(ROOT, 'tests/fixtures/locomo-mini.json'), 'utf8')) as Record<string, unknown>;
const REAL = resolve(ROOT, '../shared/data/locomo/26.json');

function fixture(): Record<string, unknown> {
  return structuredClone(FIXTURE);
}

/** The fixture's observations, flattened: [fact, dia_ids]. */
function fixtureObservations(): Array<[string, string[]]> {
  const conv = parseLocomoConversation(fixture());
  return conv.sessions.flatMap((s) => s.observations.map((o): [string, string[]] => [o.fact, o.diaIds]));
}

function setup(settings: Partial<MemorySettings> = {}, llm?: LanguageModel) {
  const repo = new InMemoryRepository();
  const deps: LocomoImportDeps = {
    repo,
    index: createHybridIndex(),
    graph: new MemoryGraph(),
    memories: new Map<Id, Memory>(),
    settings: withDefaults(settings),
    ...(llm ? { llm } : {}),
    now: () => Date.UTC(2024, 5, 1),
  };
  return { repo, deps };
}

describe('importLocomo (own fixture)', () => {
  it('turns sessions, turns and observations into history and memories with provenance', async () => {
    const { repo, deps } = setup();
    const progress: string[] = [];
    const r = await importLocomo(fixture(), { ...deps, onProgress: (d, t, label) => progress.push(`${d}/${t} ${label}`) });
    const observations = fixtureObservations();
    // session_4 has a date but no turns: skipped by design, not counted.
    expect(r).toMatchObject({ sessions: 3, turns: 18, memories: observations.length, skipped: 0 });
    expect(r.edges).toBe(repo.edges.size);
    expect(r.edges).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatch(/^3\/3 .*session 3: done$/);

    const sessions = [...repo.sessions.values()];
    expect(sessions).toHaveLength(3);
    for (const s of sessions) {
      expect(s).toMatchObject({ status: 'memorised', endReason: 'import' });
      expect(s.id.startsWith(`${locomoImportPrefix(parseLocomoConversation(fixture()))}:s`)).toBe(true);
    }
    // The session dates of the file become the history's dates.
    expect(repo.sessions.get(sessions[0].id)!.startedAt).toBe(Date.UTC(2023, 2, 4, 9, 15));
    const photo = [...repo.turns.values()].find((t) => t.externalId === 'D1:3')!;
    expect(photo.role).toBe('user');
    expect(photo.text).toContain('small brown dog');

    // Provenance: each memory's source turns are exactly the observation's dia_ids.
    const memories = [...repo.memories.values()];
    expect(memories).toHaveLength(observations.length);
    for (const m of memories) {
      const obs = observations.find(([fact]) => fact === m.text);
      expect(obs, m.text).toBeDefined();
      const dias = m.sourceTurnIds.map((id) => repo.turns.get(id)?.externalId);
      expect(dias.sort()).toEqual([...obs![1]].sort());
      const times = m.sourceTurnIds.map((id) => repo.turns.get(id)!.time);
      expect(m.time).toBe(Math.max(...times));
      expect(m.kind).toBe('event');
      expect(['Priya', 'Tomas']).toContain(m.subject);
    }
    // Linked by the similarity switch: no model was given.
    for (const e of repo.edges.values()) expect(e.origin).toBe('similarity');
    expect(checkGraphInvariants(memories, [...repo.edges.values()])).toEqual([]);
    // The live structures the app shows were kept in sync.
    expect(deps.memories.size).toBe(memories.length);
    expect(deps.graph.edgeCount).toBe(repo.edges.size);
    for (const m of memories) expect(deps.index.has(m.id)).toBe(true);
    // Segments from the splitter cover every turn of each session.
    const segs = [...repo.segments.values()];
    for (const s of sessions) {
      const covered = segs.filter((g) => g.sessionId === s.id).flatMap((g) => g.turnIds);
      expect(covered.sort()).toEqual(
        [...repo.turns.values()]
          .filter((t) => t.sessionId === s.id)
          .map((t) => t.id)
          .sort(),
      );
    }
  });

  it('importing the same file again skips its sessions and duplicates nothing', async () => {
    const { repo, deps } = setup();
    await importLocomo(fixture(), deps);
    const before = { m: repo.memories.size, e: repo.edges.size, t: repo.turns.size, s: repo.sessions.size };
    const again = await importLocomo(fixture(), deps);
    expect(again).toEqual({ sessions: 0, turns: 0, memories: 0, edges: 0, skipped: 3 });
    expect({ m: repo.memories.size, e: repo.edges.size, t: repo.turns.size, s: repo.sessions.size }).toEqual(before);
  });

  it('finishes an import that was cut off', async () => {
    const { repo, deps } = setup();
    const abort = new AbortController();
    let calls = 0;
    await expect(
      importLocomo(fixture(), {
        ...deps,
        signal: abort.signal,
        // Cut off in session 2, after its memories were written but before they were linked.
        onProgress: (_done, _total, label) => {
          if (/session 2: embedding/.test(label) && ++calls === 1) abort.abort(new Error('tab closed'));
        },
      }),
    ).rejects.toThrow('tab closed');
    expect(calls).toBe(1);
    expect([...repo.sessions.values()].map((s) => s.status)).toEqual(['memorised', 'ended']);
    const r = await importLocomo(fixture(), deps);
    expect(r).toMatchObject({ skipped: 1, sessions: 2 });
    expect([...repo.sessions.values()].every((s) => s.status === 'memorised')).toBe(true);
    expect(repo.memories.size).toBe(fixtureObservations().length);
    expect(checkGraphInvariants([...repo.memories.values()], [...repo.edges.values()])).toEqual([]);
  });

  it('links by the model when one is loaded (relations from the model, segments from the model)', async () => {
    const llm = new ScriptedModel((call) => {
      if (call.schemaTitle === 'relation_labels') {
        const n = (call.messages.at(-1)?.content.match(/^Candidate \d+/gm) ?? []).length;
        return JSON.stringify({ labels: Array.from({ length: n }, (_, i) => ({ candidate: i + 1, relation: 'Cause' })) });
      }
      if (call.kind === 'json' && call.schemaTitle === undefined) return JSON.stringify({ segments: [{ start: 0, end: 99 }] });
      throw new Error(`unexpected call ${call.schemaTitle ?? call.kind}`);
    });
    const { repo, deps } = setup({}, llm);
    const r = await importLocomo(fixture(), deps);
    expect(r.memories).toBe(fixtureObservations().length);
    expect(llm.count('relation_labels')).toBeGreaterThan(0);
    // The summarising call never reaches the loaded model: the observations answer it.
    expect(llm.count('session_memories')).toBe(0);
    expect(r.edges).toBeGreaterThan(0);
    for (const e of repo.edges.values()) expect(e).toMatchObject({ origin: 'model', relation: 'Cause' });
    // One model segment per session.
    expect(repo.segments.size).toBe(3);
  });

  it('reads the flat form (no "conversation" wrapper) the same way', async () => {
    const f = fixture();
    const flat = { ...(f.conversation as object), ...(f.observation as object), ...(f.session_summary as object), qa: f.qa };
    const a = setup();
    const b = setup();
    const ra = await importLocomo(fixture(), a.deps);
    const rb = await importLocomo(flat, b.deps);
    expect(rb).toEqual(ra);
    expect([...b.repo.memories.keys()]).toEqual([...a.repo.memories.keys()]);
  });

  it('rejects what is not a LoCoMo conversation with a message saying what is wrong', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /expected one JSON object/],
      ['{not json', /not valid JSON/],
      [[fixture(), fixture()], /list of 2 items/],
      [{ format: 'tealeaf-backup', version: 1, data: {} }, /speaker_a: missing/],
      [{ speaker_a: 'A', speaker_b: 'B' }, /no sessions/],
      [{ speaker_a: 'A', speaker_b: 'B', session_1: [] }, /every session is empty/],
    ];
    const mutate = (fn: (conv: Record<string, unknown>) => void) => {
      const f = fixture();
      fn(f.conversation as Record<string, unknown>);
      return f;
    };
    const turn1 = (c: Record<string, unknown>) => (c.session_1 as Array<Record<string, unknown>>)[1];
    cases.push(
      [mutate((c) => (c.session_2_date_time = 'yesterday')), /session_2_date_time: "yesterday"/],
      [mutate((c) => (turn1(c).speaker = 'Zed')), /session_1\[1\]\.speaker: "Zed" is neither/],
      [mutate((c) => delete turn1(c).dia_id), /session_1\[1\]\.dia_id/],
      [mutate((c) => (turn1(c).dia_id = 'D1:1')), /"D1:1" is used twice/],
      [mutate((c) => (turn1(c).text = 42)), /session_1\[1\]\.text/],
      [mutate((c) => (c.session_3 = 'oops')), /session_3: expected a list of turns/],
    );
    for (const [input, message] of cases) {
      expect(() => validateLocomo(input)).toThrow(message);
      const { repo, deps } = setup();
      const err = await importLocomo(input, deps).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LocomoFormatError);
      expect((err as Error).message).toMatch(/^This is not a LoCoMo conversation file: /);
      // Nothing was written.
      expect(repo.commits).toBe(0);
    }
  });
});

describe('importLocomo (real LoCoMo conversation 26)', () => {
  const present = existsSync(REAL);
  if (!present) console.warn(`skipping: ${REAL} is absent (LoCoMo data lives in ../shared/data, never in the repo)`);
  it.skipIf(!present)('imports every session with its observations as memories, invariants hold', async () => {
    const json = JSON.parse(readFileSync(REAL, 'utf8')) as unknown;
    const conv = parseLocomoConversation(json);
    const { repo, deps } = setup();
    const r = await importLocomo(json, deps);
    const turns = conv.sessions.reduce((n, s) => n + s.turns.length, 0);
    expect(r.sessions).toBe(conv.sessions.length);
    expect(r.turns).toBe(turns);
    expect(repo.turns.size).toBe(turns);
    // Observations repeated word for word become one memory (the pipeline's duplicate rule).
    const observations = conv.sessions.reduce((n, s) => n + s.observations.length, 0);
    expect(r.memories).toBeGreaterThan(observations * 0.9);
    expect(r.memories).toBeLessThanOrEqual(observations);
    expect(r.edges).toBeGreaterThan(0);
    const memories = [...repo.memories.values()];
    expect(checkGraphInvariants(memories, [...repo.edges.values()])).toEqual([]);
    const dias = new Set([...repo.turns.values()].map((t) => t.externalId));
    for (const m of memories) {
      expect(m.sourceTurnIds.length).toBeGreaterThan(0);
      for (const id of m.sourceTurnIds) expect(dias.has(repo.turns.get(id)?.externalId)).toBe(true);
    }
    const again = await importLocomo(json, deps);
    expect(again).toMatchObject({ sessions: 0, memories: 0, skipped: conv.sessions.length });
  });
});
