import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseSegmentation, type TurnRange } from '../../../src/memory/ingest/segments/parse';
import { splitByCohesion } from '../../../src/memory/ingest/segments/fallback';
import { denoiseForIndex, isFillerTurn } from '../../../src/memory/ingest/segments/denoise';
import { buildSegments, segmentSession, segmentSessionDetailed, SEGMENTATION_SCHEMA } from '../../../src/memory/ingest/segments';
import { MAX_TEXT } from '../../../src/memory/limits';
import type { LanguageModel } from '../../../src/ports';
import type { Turn } from '../../../src/memory/types';

function expectCover(ranges: TurnRange[], n: number): void {
  expect(ranges.length).toBeGreaterThan(0);
  expect(ranges[0]!.first).toBe(0);
  expect(ranges[ranges.length - 1]!.last).toBe(n - 1);
  for (const r of ranges) expect(r.last).toBeGreaterThanOrEqual(r.first);
  for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.first).toBe(ranges[i - 1]!.last + 1);
}

describe('parseSegmentation', () => {
  it('accepts a valid answer unchanged', () => {
    const p = parseSegmentation('{"segments":[{"start":0,"end":2,"topic":"a"},{"start":3,"end":5}]}', 6);
    expect(p).toEqual({
      ranges: [
        { first: 0, last: 2 },
        { first: 3, last: 5 },
      ],
      usable: true,
      repaired: false,
    });
  });

  it('repairs gaps, overlaps, order, one-based numbering and truncation', () => {
    expect(parseSegmentation('{"segments":[{"start":4,"end":9},{"start":0,"end":2}]}', 10).ranges).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 3 },
      { first: 4, last: 9 },
    ]);
    expect(parseSegmentation('{"segments":[{"start":0,"end":5},{"start":3,"end":7}]}', 8).ranges).toEqual([
      { first: 0, last: 5 },
      { first: 6, last: 7 },
    ]);
    expect(parseSegmentation('{"segments":[{"start":1,"end":3},{"start":4,"end":6}]}', 6).ranges).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 5 },
    ]);
    const truncated = parseSegmentation('{"segments":[{"start":0,"end":3},{"start":4,"end":6},{"start":7,"en', 10);
    expect(truncated.usable).toBe(true);
    expect(truncated.ranges).toEqual([
      { first: 0, last: 3 },
      { first: 4, last: 6 },
      { first: 7, last: 9 },
    ]);
  });

  it('reads -0 as 0 (found by the property below: a cover ended at -0)', () => {
    expect(parseSegmentation([[-0, -1]], 1).ranges).toEqual([{ first: 0, last: 0 }]);
    expect(Object.is(parseSegmentation([[-0, -1]], 1).ranges[0]!.last, 0)).toBe(true);
    expect(Object.is(parseSegmentation('{"segments":[{"start":-0,"end":-0}]}', 1).ranges[0]!.first, 0)).toBe(true);
  });

  it('turns any garbage into a contiguous cover of all turns, never throwing (property)', () => {
    const json = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .array(fc.record({ start: fc.integer({ min: -5, max: 60 }), end: fc.integer({ min: -5, max: 60 }) }))
        .map((s) => JSON.stringify({ segments: s })),
      fc.array(fc.tuple(fc.integer({ min: -5, max: 60 }), fc.integer({ min: -5, max: 60 }))).map((s) => JSON.stringify(s)),
    );
    const cut = fc.tuple(json, fc.nat()).map(([s, n]) => (n % 3 === 0 ? s.slice(0, n % (s.length + 1)) : s));
    fc.assert(
      fc.property(fc.oneof(cut, fc.anything()), fc.integer({ min: 1, max: 50 }), (raw, n) => {
        const p = parseSegmentation(raw, n);
        expectCover(p.ranges, n);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('splitByCohesion (fallback)', () => {
  it('produces a contiguous cover within the length bounds (property)', () => {
    const words = ['dog', 'park', 'violin', 'music', 'school', 'exam', 'camping', 'tent', 'paint', 'canvas', 'the', 'and'];
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.constantFrom(...words), { maxLength: 12 }).map((w) => w.join(' ')),
          { minLength: 1, maxLength: 60 },
        ),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 10 }),
        (texts, min, extra) => {
          const max = min + extra;
          const ranges = splitByCohesion(texts, { minTurns: min, maxTurns: max });
          expectCover(ranges, texts.length);
          for (const r of ranges) expect(r.last - r.first + 1).toBeLessThanOrEqual(max);
        },
      ),
    );
  });

  it('cuts where the topic changes', () => {
    const texts = [
      'my dog loves the park',
      'the park with the dog is fun',
      'dog park every morning',
      'the dog chased a ball in the park',
      'my violin exam is next week',
      'practising violin for the exam',
      'violin scales before the exam',
      'the exam jury liked my violin',
    ];
    expect(splitByCohesion(texts, { minTurns: 2, maxTurns: 6, cutoff: 0 })).toEqual([
      { first: 0, last: 3 },
      { first: 4, last: 7 },
    ]);
  });
});

describe('denoising', () => {
  it('drops filler turns and greetings, keeps content', () => {
    expect(isFillerTurn('Haha, yeah! Thanks so much!')).toBe(true);
    expect(isFillerTurn('I adopted a puppy')).toBe(false);
    const text = denoiseForIndex(['Hey Mel! I went to a pottery class.', 'Wow, cool!', 'Mel, what did you make?'], ['Mel']);
    expect(text).toBe('I went to a pottery class.\nwhat did you make?');
    expect(denoiseForIndex(['Wow, Mel, thanks! Lovely.', 'Hi there Mel. yes', 'We went to the lake today!'], ['Mel'])).toBe(
      'Lovely.\nyes\nWe went to the lake today!',
    );
  });

  it('a message that starts with a long unbroken string is left whole (the old pattern backtracked for minutes)', () => {
    // The old interjection pattern split the word every way it could (about n^3/6 steps: 57 s for
    // 800 letters, on the page's thread); these inputs would run past the test's time-out.
    expect(denoiseForIndex(['x'.repeat(600)])).toBe('x'.repeat(600));
    for (const text of [`${'y'.repeat(50_000)}!`, `Hey ${'z'.repeat(20_000)}, hi.`]) expect(denoiseForIndex([text])).toBe(text);
  });
});

describe('passages fit a record', () => {
  const long = (i: number, n: number, role: Turn['role'] = 'user'): Turn => ({
    id: `L${i}`,
    sessionId: 's',
    index: i,
    role,
    text: `${'word '.repeat(n / 5)}`.trim(),
    time: i,
    status: 'complete',
  });

  it('a range longer than a record is cut between whole turns; a turn too long alone is a passage of its own, cut', () => {
    const ordered = [long(0, 600_000), long(1, 600_000, 'assistant'), long(2, 10), long(3, 10)];
    const segments = buildSegments(ordered, [{ first: 0, last: 3 }]);
    expect(segments.map((g) => [g.firstTurn, g.lastTurn])).toEqual([
      [0, 0],
      [1, 3],
    ]);
    expect(segments.every((g) => g.text.length <= MAX_TEXT && g.indexText.length <= MAX_TEXT)).toBe(true);
    expect(segments[1].text.startsWith('assistant: word')).toBe(true);
    const alone = buildSegments([{ ...long(0, 10), text: 'q'.repeat(MAX_TEXT) }], [{ first: 0, last: 0 }]);
    expect(alone[0].text.length).toBe(MAX_TEXT);
    expect(alone[0].text).toMatch(/Cut here/);
  });
});

const turns: Turn[] = Array.from({ length: 6 }, (_, i) => ({
  id: `t${i}`,
  sessionId: 's1',
  index: i,
  role: i % 2 ? 'assistant' : 'user',
  text: i < 3 ? `camping trip ${i}` : `violin lesson ${i}`,
  time: 1000 + i,
  status: 'complete',
}));

function model(answer: string | Error): LanguageModel & { calls: number } {
  return {
    modelId: 'scripted',
    calls: 0,
    chat: async () => '',
    async json(_m, schema) {
      this.calls++;
      expect(schema).toBe(SEGMENTATION_SCHEMA);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

describe('segmentSession', () => {
  it('uses one model call and builds segment records with turn ids and both texts', async () => {
    const llm = model('{"segments":[{"start":0,"end":2},{"start":3,"end":5}]}');
    const segs = await segmentSession(turns, { llm });
    expect(llm.calls).toBe(1);
    expect(segs.map((s) => [s.firstTurn, s.lastTurn])).toEqual([
      [0, 2],
      [3, 5],
    ]);
    expect(segs[1]!.turnIds).toEqual(['t3', 't4', 't5']);
    expect(segs[0]!.text).toContain('user: camping trip 0');
    expect(segs[0]!.indexText).not.toContain('user:');
    expect(segs[1]!.time).toBe(1003);
  });

  it('falls back to the splitter on an unusable answer or a failed call', async () => {
    for (const answer of ['I cannot do that', new Error('boom')]) {
      const r = await segmentSessionDetailed(turns, { llm: model(answer) });
      expect(r.source).toBe('fallback');
      expectCover(
        r.segments.map((s) => ({ first: s.firstTurn, last: s.lastTurn })),
        turns.length,
      );
    }
    expect((await segmentSessionDetailed(turns)).source).toBe('fallback');
  });
});

describe('segmentSession with ranges from the summarising call', () => {
  it('uses the ranges, repaired, and never calls the model', async () => {
    const llm = model('{"segments":[{"start":0,"end":5}]}');
    const r = await segmentSessionDetailed(turns, {
      llm,
      ranges: [
        { first: 0, last: 1 },
        { first: 2, last: 5 },
      ],
    });
    expect(llm.calls).toBe(0);
    expect(r.source).toBe('summary');
    expect(r.repaired).toBe(false);
    expect(r.segments.map((s) => [s.firstTurn, s.lastTurn])).toEqual([
      [0, 1],
      [2, 5],
    ]);
    // Out of order and short of the end: repaired into a cover.
    const fixed = await segmentSessionDetailed(turns, {
      llm,
      ranges: [
        { first: 3, last: 4 },
        { first: 0, last: 2 },
      ],
    });
    expect(fixed.repaired).toBe(true);
    expect(fixed.segments.map((s) => [s.firstTurn, s.lastTurn])).toEqual([
      [0, 2],
      [3, 4],
      [5, 5],
    ]);
    expect(llm.calls).toBe(0);
  });

  it('empty or unusable ranges: the fallback splitter, still without a call', async () => {
    const llm = model('{"segments":[{"start":0,"end":2},{"start":3,"end":5}]}');
    const expected = splitByCohesion(turns.map((t) => t.text));
    for (const ranges of [[], [{ first: 40, last: 50 }]]) {
      const r = await segmentSessionDetailed(turns, { llm, ranges });
      expect(r.source).toBe('fallback');
      expect(r.segments.map((s) => ({ first: s.firstTurn, last: s.lastTurn }))).toEqual(expected);
    }
    expect(llm.calls).toBe(0);
  });
});
