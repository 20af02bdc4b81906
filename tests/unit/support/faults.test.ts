// The faults mode of the stand-in (tests/support/standin/faults.ts): each fault as a pure transform,
// the seeded choice of which fires, and the rate over many calls.
import { describe, expect, it } from 'vitest';
import { FAULT_NAMES, FAULTS, FaultInjector, seeded, type FaultName } from '../../support/standin/faults';

const schema = { title: 'relation_labels', type: 'object', properties: { labels: { type: 'array' } } };
/** A generator that returns these numbers in turn. */
const numbers = (...xs: number[]) => {
  let i = 0;
  return () => xs[i++ % xs.length];
};
const ctx = (title: string, random = numbers(0.5), fillChars = 400) => ({ title, schema, random, fillChars });

const labels = JSON.stringify({
  labels: [
    { candidate: 1, relation: 'SameTopic' },
    { candidate: 2, relation: 'None' },
    { candidate: 3, relation: 'Changed' },
  ],
});
const summary = JSON.stringify({
  events: [
    { text: 'The user moved to Lisbon.', about: 'user', turns: ['T1'] },
    { text: 'The user adopted a cat.', about: 'user', turns: ['T3'] },
  ],
  userTraits: [],
});
const notes = JSON.stringify({
  notes: [
    { timeline: 1, note: 'They moved.' },
    { timeline: 2, note: 'A cat.' },
  ],
  enough: true,
  keywords: [],
});

describe('each fault', () => {
  it('schema-echo writes the schema back', () => {
    expect(FAULTS['schema-echo'].apply(labels, ctx('relation_labels'))).toBe(JSON.stringify(schema));
  });

  it('cut-json stops mid-way, where the generator says', () => {
    const out = FAULTS['cut-json'].apply(summary, ctx('session_memories', numbers(0.5)));
    expect(out).toBe(summary.slice(0, Math.floor(summary.length * 0.5)));
    expect(() => JSON.parse(out)).toThrow();
    expect(FAULTS['cut-json'].applies('{', 'x')).toBe(false);
  });

  it('wrong-relation turns a SameTopic or None label into Changed, only in relation labels', () => {
    const first = JSON.parse(FAULTS['wrong-relation'].apply(labels, ctx('relation_labels', numbers(0)))) as {
      labels: Array<{ relation: string }>;
    };
    expect(first.labels.map((l) => l.relation)).toEqual(['Changed', 'None', 'Changed']);
    const second = JSON.parse(FAULTS['wrong-relation'].apply(labels, ctx('relation_labels', numbers(0.9)))) as {
      labels: Array<{ relation: string }>;
    };
    expect(second.labels.map((l) => l.relation)).toEqual(['SameTopic', 'Changed', 'Changed']);
    expect(FAULTS['wrong-relation'].applies(labels, 'session_memories')).toBe(false);
    expect(FAULTS['wrong-relation'].applies('{"labels":[{"candidate":1,"relation":"Changed"}]}', 'relation_labels')).toBe(false);
    expect(FAULTS['wrong-relation'].applies('{"labels":[', 'relation_labels')).toBe(false);
  });

  it('repeated-item repeats the first list’s last item until the fill length', () => {
    const out = FAULTS['repeated-item'].apply(summary, ctx('session_memories', numbers(0), 2000));
    expect(out.length).toBeGreaterThanOrEqual(2000);
    const v = JSON.parse(out) as { events: unknown[]; userTraits: unknown[] };
    const original = JSON.parse(summary) as { events: unknown[] };
    expect(v.events.slice(0, 2)).toEqual(original.events);
    expect(v.events.length).toBeGreaterThan(10);
    for (const e of v.events.slice(2)) expect(e).toEqual(original.events[1]);
    expect(v.userTraits).toEqual([]);
    expect(FAULTS['repeated-item'].applies('{"events":[],"notes":[]}', 'x')).toBe(false);
  });

  it('empty-notes empties every note and keeps the rest', () => {
    const v = JSON.parse(FAULTS['empty-notes'].apply(notes, ctx('timeline_notes'))) as {
      notes: Array<{ timeline: number; note: string }>;
      enough: boolean;
    };
    expect(v.notes).toEqual([
      { timeline: 1, note: '' },
      { timeline: 2, note: '' },
    ]);
    expect(v.enough).toBe(true);
    expect(FAULTS['empty-notes'].applies('{"notes":[],"enough":true}', 'memory_reflection')).toBe(false);
    expect(FAULTS['empty-notes'].applies(summary, 'session_memories')).toBe(false);
  });

  it('whitespace puts runs of newlines and spaces before and inside the JSON, which still parses', () => {
    // First number 0.9: runs, not a runaway; the rest from a seed.
    const rest = seeded(7);
    let first = true;
    const random = () => (first ? ((first = false), 0.9) : rest());
    const out = FAULTS.whitespace.apply(summary, ctx('session_memories', random));
    expect(out).toMatch(/^\n/);
    expect(out.length).toBeGreaterThan(summary.length);
    expect(JSON.parse(out)).toEqual(JSON.parse(summary));
    // Nothing inside a string changes: the texts with their commas survive.
    expect(JSON.stringify(JSON.parse(out))).toBe(summary);
  });

  it('whitespace, one time in four, runs away with newlines until the cap', () => {
    // First number under 0.25: a runaway; second picks the spot (0: before the JSON).
    const out = FAULTS.whitespace.apply(summary, ctx('session_memories', numbers(0.1, 0), 300));
    expect(out).toBe('\n'.repeat(300) + summary);
  });
});

describe('the injector', () => {
  const answers = [labels, summary, notes];
  const titles = ['relation_labels', 'session_memories', 'timeline_notes'];
  const run = (seed: number, rate: number, n: number) => {
    const inj = new FaultInjector({ rate, seed });
    const outs: string[] = [];
    for (let i = 0; i < n; i++) outs.push(inj.apply(answers[i % 3], { title: titles[i % 3], schema, fillChars: 500 }).text);
    return { inj, outs };
  };

  it('the same seed fires the same faults in the same calls; another seed does not', () => {
    const a = run(42, 0.3, 300);
    const b = run(42, 0.3, 300);
    const c = run(43, 0.3, 300);
    expect(b.outs).toEqual(a.outs);
    expect(b.inj.counts).toEqual(a.inj.counts);
    expect(c.outs).not.toEqual(a.outs);
  });

  it('fires at about the rate, every kind over many calls, and counts what it fired', () => {
    const { inj, outs } = run(1, 0.1, 6000);
    const fired = FAULT_NAMES.reduce((n, f) => n + inj.counts[f], 0);
    expect(inj.answers).toBe(6000);
    expect(fired / 6000).toBeGreaterThan(0.085);
    expect(fired / 6000).toBeLessThan(0.115);
    for (const f of FAULT_NAMES) expect(inj.counts[f], f).toBeGreaterThan(0);
    expect(outs.filter((o, i) => o !== answers[i % 3]).length).toBe(fired);
    expect(run(1, 0, 500).outs).toEqual(Array.from({ length: 500 }, (_, i) => answers[i % 3]));
  });

  it('only the faults named, and none where none applies', () => {
    const inj = new FaultInjector({ rate: 1, seed: 5, only: ['wrong-relation'] as FaultName[] });
    expect(inj.apply(summary, { title: 'session_memories', schema, fillChars: 100 })).toEqual({ text: summary });
    expect(inj.apply(labels, { title: 'relation_labels', schema, fillChars: 100 }).fault).toBe('wrong-relation');
    expect(inj.counts['wrong-relation']).toBe(1);
  });
});
