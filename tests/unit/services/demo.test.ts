import { describe, expect, it } from 'vitest';
import { openFresh } from '../store/helpers';
import { MemoryGraph } from '../../../src/memory/graph';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { checkGraphInvariants } from '../../support/invariants';
import { RELATIONS } from '../../../src/memory/types';
import { buildDemo, DEMO_PREFIX } from '../../../src/services/demo/demo';
import { BACKUP_FORMAT, BACKUP_VERSION, importBackup, validateBackup, type TealeafBackup } from '../../../src/store/backup';

const NOW = Date.UTC(2025, 4, 17, 15, 30, 12, 345);
const DAY = 86_400_000;

describe('buildDemo', () => {
  const demo = buildDemo(NOW);
  const { sessions, turns, memories, edges } = demo;
  const turnById = new Map(turns.map((t) => [t.id, t]));
  const memoryById = new Map(memories.map((m) => [m.id, m]));

  it('is a multi-session conversation over about four months, every session memorised', () => {
    expect(sessions.length).toBeGreaterThanOrEqual(5);
    expect(sessions.length).toBeLessThanOrEqual(6);
    const first = Math.min(...sessions.map((s) => s.startedAt));
    expect(NOW - first).toBeGreaterThan(100 * DAY);
    expect(NOW - first).toBeLessThan(140 * DAY);
    for (const s of sessions) {
      expect(s.status).toBe('memorised');
      const own = turns.filter((t) => t.sessionId === s.id).sort((a, b) => a.index - b.index);
      expect(own.length).toBeGreaterThanOrEqual(6);
      expect(own.length).toBeLessThanOrEqual(10);
      expect(own.map((t) => t.index)).toEqual(own.map((_, i) => i));
      // Times increase with the index, within the session's span, all in the past.
      for (let i = 1; i < own.length; i++) expect(own[i].time).toBeGreaterThan(own[i - 1].time);
      expect(own[0].time).toBe(s.startedAt);
      expect(own.at(-1)!.time).toBe(s.lastActivityAt);
      expect(s.lastActivityAt).toBeLessThan(NOW);
      expect(own.some((t) => t.role === 'user') && own.some((t) => t.role === 'assistant')).toBe(true);
    }
  });

  it('holds the graph invariants', () => {
    expect(checkGraphInvariants(memories, edges)).toEqual([]);
  });

  it('uses every relation, with edges from the model going older to newer', () => {
    expect(new Set(edges.map((e) => e.relation))).toEqual(new Set(RELATIONS));
    for (const e of edges) {
      expect(e.origin).toBe('model');
      expect(memoryById.get(e.from)!.time).toBeLessThanOrEqual(memoryById.get(e.to)!.time);
    }
  });

  it('has 20-30 memories of every kind, each dated at its latest source turn', () => {
    expect(memories.length).toBeGreaterThanOrEqual(20);
    expect(memories.length).toBeLessThanOrEqual(30);
    expect(new Set(memories.map((m) => m.kind))).toEqual(new Set(['event', 'user-trait', 'assistant-trait', 'note']));
    for (const m of memories) {
      expect(m.sourceTurnIds.length).toBeGreaterThan(0);
      for (const id of m.sourceTurnIds) {
        const t = turnById.get(id);
        expect(t, `${m.id} -> ${id}`).toBeDefined();
        expect(t!.sessionId).toBe(m.sessionId);
      }
      expect(m.time).toBe(Math.max(...m.sourceTurnIds.map((id) => turnById.get(id)!.time)));
    }
    const note = memories.find((m) => m.kind === 'note')!;
    expect(note.context).toBeTruthy();
  });

  it('keeps superseded traits, each pointing to a newer trait through a Changed edge', () => {
    const superseded = memories.filter((m) => m.supersededBy !== undefined);
    expect(superseded.length).toBeGreaterThanOrEqual(2);
    for (const old of superseded) {
      const newer = memoryById.get(old.supersededBy!)!;
      expect(newer.kind).toBe(old.kind);
      expect(['user-trait', 'assistant-trait']).toContain(old.kind);
      expect(newer.time).toBeGreaterThan(old.time);
      expect(newer.supersededBy).toBeUndefined();
      expect(edges.find((e) => e.from === old.id && e.to === newer.id)?.relation).toBe('Changed');
    }
    expect(superseded.map((m) => m.text).join(' ')).toMatch(/tea/);
  });

  it('forms 3 to 5 threads, none a lone memory', () => {
    const graph = MemoryGraph.from(memories, edges);
    const threads = new Set(memories.map((m) => graph.componentId(m.id)));
    expect(threads.size).toBeGreaterThanOrEqual(3);
    expect(threads.size).toBeLessThanOrEqual(5);
    for (const m of memories) expect(graph.componentOf(m.id).length).toBeGreaterThan(1);
  });

  it('has deterministic, prefixed ids and only its dates depend on now', () => {
    const ids = [...sessions, ...turns, ...memories, ...edges].map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id.startsWith(DEMO_PREFIX)).toBe(true);
    expect(buildDemo(NOW)).toEqual(demo);
    const later = buildDemo(NOW + 40 * DAY);
    expect([...later.memories, ...later.edges].map((r) => r.id)).toEqual([...memories, ...edges].map((r) => r.id));
    expect(later.turns[0].time - turns[0].time).toBe(40 * DAY);
  });

  it('loads into a repository twice without duplicates', async () => {
    const repo = new InMemoryRepository();
    await repo.apply(buildDemo(NOW));
    await repo.apply(buildDemo(NOW));
    expect(repo.memories.size).toBe(memories.length);
    expect(repo.edges.size).toBe(edges.length);
    expect(repo.turns.size).toBe(turns.length);
  });

  it('is valid Tealeaf data: a backup of it validates and imports into the real store', async () => {
    const backup: TealeafBackup = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      exportedAt: NOW,
      data: { ...structuredClone(demo), segments: [], settings: [] },
    };
    expect(() => validateBackup(JSON.stringify(backup))).not.toThrow();
    const db = await openFresh();
    const summary = await importBackup(db, JSON.stringify(backup), { mode: 'merge' });
    expect(summary.added).toMatchObject({ sessions: sessions.length, turns: turns.length, memories: memories.length, edges: edges.length });
    db.close();
  });
});
