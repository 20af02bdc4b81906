// The summarising call also chooses the session's topics (segments): the schema asks for them,
// the prompt explains them, and the parser turns whatever came back into a contiguous cover of the
// session's turns, or nothing (then the segment step uses the fallback splitter).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseSummary } from '../../../src/memory/ingest/summarise';
import { summariseMessages, summarySchema, type TranscriptTurn } from '../../../src/memory/ingest/summary-prompt';
import type { TurnRange } from '../../../src/memory/ingest/segments/parse';

const turns: TranscriptTurn[] = Array.from({ length: 8 }, (_, i) => ({
  id: `turn-${i}`,
  role: i % 2 ? 'assistant' : 'user',
  text: i < 4 ? `camping trip part ${i}` : `violin lessons part ${i}`,
  time: 1000 * (i + 1),
  externalId: `D1:${i + 1}`,
}));

const withTopics = (topics: unknown) => JSON.stringify({ events: [{ text: 'User went camping.', turns: ['T1'] }], topics });

function expectCover(ranges: readonly TurnRange[], n: number): void {
  expect(ranges[0]!.first).toBe(0);
  expect(ranges[ranges.length - 1]!.last).toBe(n - 1);
  for (const r of ranges) expect(r.last).toBeGreaterThanOrEqual(r.first);
  for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.first).toBe(ranges[i - 1]!.last + 1);
}

describe('summary schema and prompt', () => {
  it('ask for topics by turn labels, required, after the memories', () => {
    const schema = summarySchema(false) as { properties: Record<string, { items?: { required?: string[] } }>; required: string[] };
    expect(Object.keys(schema.properties).at(-1)).toBe('topics');
    expect(schema.required).toContain('topics');
    expect(schema.properties.topics.items?.required).toEqual(['first', 'last']);
    const system = summariseMessages(turns)[0]!.content;
    expect(system).toMatch(/topics/);
    // The model is told where the cover ends.
    expect(system).toContain('from T1 to T8');
  });
});

describe('parseSummary topics', () => {
  it('reads {first, last} labels as positions', () => {
    const r = parseSummary(
      withTopics([
        { first: 'T1', last: 'T4' },
        { first: 'T5', last: 'T8' },
      ]),
      turns,
    );
    expect(r.topics).toEqual([
      { first: 0, last: 3 },
      { first: 4, last: 7 },
    ]);
    expect(r.problems.some((p) => /topic/.test(p))).toBe(false);
    // The memories are read as before.
    expect(r.items.map((i) => i.text)).toEqual(['User went camping.']);
  });

  it('accepts other shapes: numbers (1-based, as labels), ranges as text, pairs, turn lists, external ids', () => {
    expect(
      parseSummary(
        withTopics([
          { start: 1, end: 3 },
          { start: 4, end: 8 },
        ]),
        turns,
      ).topics,
    ).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 7 },
    ]);
    expect(parseSummary(withTopics(['T1-T2', 'T3 to T6', 'T7..T8']), turns).topics).toEqual([
      { first: 0, last: 1 },
      { first: 2, last: 5 },
      { first: 6, last: 7 },
    ]);
    expect(
      parseSummary(
        withTopics([
          ['T1', 'T5'],
          ['T6', 'T8'],
        ]),
        turns,
      ).topics,
    ).toEqual([
      { first: 0, last: 4 },
      { first: 5, last: 7 },
    ]);
    expect(
      parseSummary(
        withTopics([
          { topic: 'camping', turns: ['T2', 'T1', 'T3'] },
          { topic: 'violin', turns: ['T4', 'T8'] },
        ]),
        turns,
      ).topics,
    ).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 7 },
    ]);
    expect(parseSummary(withTopics([{ first: 'D1:1', last: 'turn-3' }]), turns).topics).toEqual([
      { first: 0, last: 3 },
      { first: 4, last: 7 },
    ]);
  });

  it('repairs gaps, overlaps, order and open ends into a contiguous cover', () => {
    const gap = parseSummary(
      withTopics([
        { first: 'T6', last: 'T8' },
        { first: 'T1', last: 'T3' },
      ]),
      turns,
    );
    expect(gap.topics).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 4 },
      { first: 5, last: 7 },
    ]);
    expect(gap.problems).toContain('topics repaired into a contiguous cover');
    const overlap = parseSummary(
      withTopics([
        { first: 'T1', last: 'T5' },
        { first: 'T3', last: 'T8' },
      ]),
      turns,
    );
    expect(overlap.topics).toEqual([
      { first: 0, last: 4 },
      { first: 5, last: 7 },
    ]);
    // Only starts given: each topic runs to the next one's start.
    const starts = parseSummary(withTopics([{ first: 'T1' }, { first: 'T4', last: 'nonsense' }, 'T7']), turns);
    expect(starts.topics).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 5 },
      { first: 6, last: 7 },
    ]);
  });

  it('gives no topics (fallback splitter) when they are missing, empty or unreadable', () => {
    for (const raw of [
      JSON.stringify({ events: [] }),
      withTopics([]),
      withTopics([{ first: 'T99', last: 'T100' }, { first: 'banana' }, 7.5, null]),
      withTopics('T1-T8'),
      '[{"text":"A bare array of events","turns":["T1"]}]',
    ]) {
      const r = parseSummary(raw, turns);
      expect(r.parsed).toBe(true);
      expect(r.topics).toBeUndefined();
    }
    expect(parseSummary(withTopics([{ first: 'T99', last: 'T100' }]), turns).problems).toContain(
      'no usable topics in the summary (fallback splitter)',
    );
    expect(parseSummary(withTopics([{ first: 'T1', last: 'T2' }]), []).topics).toBeUndefined();
  });

  it('a truncated answer keeps the topics it completed', () => {
    const raw = withTopics([
      { first: 'T1', last: 'T3' },
      { first: 'T4', last: 'T8' },
    ]);
    const cut = raw.slice(0, raw.indexOf('"T4"') + 2);
    const r = parseSummary(cut, turns);
    expect(r.items.length).toBe(1);
    expectCover(r.topics!, turns.length);
    expect(r.topics![0]).toEqual({ first: 0, last: 2 });
  });

  it('any garbage topics give either nothing or a contiguous cover of all turns, never throwing (property)', () => {
    const label = fc.oneof(
      fc.integer({ min: -3, max: 12 }).map((i) => `T${i}`),
      fc.integer({ min: -3, max: 12 }),
      fc.constantFrom('D1:2', 'turn-5', 'x', '', 'T1-T4', 'T3 to T9'),
    );
    const topic = fc.oneof(
      fc.record({ first: label, last: label }, { requiredKeys: [] }),
      fc.record({ start: label, end: label, turns: fc.array(label, { maxLength: 4 }) }, { requiredKeys: [] }),
      fc.array(label, { maxLength: 3 }),
      label,
      fc.anything({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(
        fc.oneof(fc.array(topic, { maxLength: 8 }), fc.anything({ maxDepth: 2 })),
        fc.nat(),
        fc.integer({ min: 0, max: 8 }),
        (topics, cut, n) => {
          const raw = withTopics(topics);
          const text = cut % 4 === 0 ? raw.slice(0, cut % (raw.length + 1)) : raw;
          const r = parseSummary(text, turns.slice(0, n));
          if (r.topics) expectCover(r.topics, n);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
