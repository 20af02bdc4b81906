import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { extractJson, normaliseRelation } from '../../../src/memory/llm-output';
import { parseRelationLabels } from '../../../src/memory/ingest/labelling';
import { parseSummary } from '../../../src/memory/ingest/summarise';
import { type TranscriptTurn } from '../../../src/memory/ingest/summary-prompt';
import { parseTimelineNotes } from '../../../src/memory/recall/refine';

const turns: TranscriptTurn[] = [
  { id: 'turn-a', role: 'user', text: 'I adopted a puppy called Biscuit yesterday', time: 1000 },
  { id: 'turn-b', role: 'assistant', text: 'How lovely! What breed is Biscuit?', time: 2000 },
  { id: 'turn-c', role: 'user', text: 'A beagle. I am vegetarian by the way, please remember.', time: 3000, externalId: 'D1:3' },
];

describe('extractJson', () => {
  it('reads JSON inside code fences and prose', () => {
    const r = extractJson('Sure! Here you go:\n```json\n{"a": [1, 2]}\n```\nAnything else?');
    expect(r.found).toBe(true);
    expect(r.value).toEqual({ a: [1, 2] });
    expect(extractJson('The answer is {"x": 1} as requested').value).toEqual({ x: 1 });
  });

  it('repairs truncated objects, arrays and strings', () => {
    expect(extractJson('{"labels": [{"candidate": 1, "relation": "Cause"}, {"candidate": 2, "rel').value).toEqual({
      labels: [{ candidate: 1, relation: 'Cause' }, { candidate: 2 }],
    });
    const r = extractJson('{"events": [{"text": "User likes tea", "turns": ["T1"]}, {"text": "User went hik');
    expect(r.repaired).toBe(true);
    // A string cut in the middle is dropped rather than stored half-written.
    expect(r.value).toEqual({ events: [{ text: 'User likes tea', turns: ['T1'] }, { text: null }] });
    expect(extractJson('[1, 2, 3').value).toEqual([1, 2, 3]);
    expect(extractJson('{"a": 1, "b":').value).toEqual({ a: 1, b: null });
  });

  it('refuses JSON nested deeper than any schema, whole or cut off, and keeps what nests as deep as one', () => {
    // Parsed, a value 100,000 deep overflows the stack of the next thing that walks it.
    for (const raw of [
      '['.repeat(100_000) + ']'.repeat(100_000),
      '{"a":'.repeat(100_000),
      `{"labels": ${'['.repeat(33)}1${']'.repeat(33)}}`,
    ]) {
      const r = extractJson(raw);
      expect(r.found).toBe(false);
      expect(r.value).toBeUndefined();
      expect(r.problems).toContain('JSON nested too deeply');
    }
    const deepest = `{"a": ${'['.repeat(31)}1${']'.repeat(31)}}`;
    expect(extractJson(deepest).value).toEqual(JSON.parse(deepest));
  });

  it('tidies trailing commas', () => {
    expect(extractJson('{"a": [1, 2,], }').value).toEqual({ a: [1, 2] });
  });

  it('returns nothing for empty or JSON-free output', () => {
    for (const raw of ['', '   ', 'I cannot help with that.', undefined, 42]) {
      const r = extractJson(raw);
      expect(r.found).toBe(false);
      expect(r.problems.length).toBeGreaterThan(0);
    }
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        const r = extractJson(s);
        expect(typeof r.found).toBe('boolean');
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.json(), fc.nat(), (json, cut) => {
        const text = json.slice(0, cut % (json.length + 1));
        const r = extractJson(text);
        if (r.found) expect(() => JSON.stringify(r.value)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe('relation names', () => {
  it('accepts case-insensitive and close variants', () => {
    expect(normaliseRelation('same topic').label).toBe('SameTopic');
    expect(normaliseRelation('SAME_TOPIC').label).toBe('SameTopic');
    expect(normaliseRelation('hindered_by').label).toBe('HinderedBy');
    expect(normaliseRelation('Hindered-By').label).toBe('HinderedBy');
    expect(normaliseRelation('causes').label).toBe('Cause');
    expect(normaliseRelation('changed').label).toBe('Changed');
    expect(normaliseRelation('wants').label).toBe('Want');
  });

  it('maps unknown names to None', () => {
    expect(normaliseRelation('Friendship')).toEqual({ label: 'None', recognised: false });
    expect(normaliseRelation(7).label).toBe('None');
  });

  it('parses labels: drops out-of-range indices, fills missing with None', () => {
    const r = parseRelationLabels(
      '{"labels":[{"candidate":3,"relation":"same topic"},{"candidate":9,"relation":"Cause"},{"candidate":1,"relation":"Bananas"}]}',
      3,
    );
    expect(r.labels).toEqual(['None', 'None', 'SameTopic']);
    expect(r.problems.some((p) => p.includes('out of range'))).toBe(true);
    expect(r.problems.some((p) => p.includes('Bananas'))).toBe(true);
  });

  it('parses positional and map forms, and garbage as all None', () => {
    expect(parseRelationLabels('["Cause", "none", "React"]', 3).labels).toEqual(['Cause', 'None', 'React']);
    expect(parseRelationLabels('{"1": "Want", "2": "Reason"}', 2).labels).toEqual(['Want', 'Reason']);
    expect(parseRelationLabels('lol', 2).labels).toEqual(['None', 'None']);
    expect(parseRelationLabels('', 0).labels).toEqual([]);
  });
});

describe('parseSummary', () => {
  it('maps turn labels, real ids and external ids, and drops invalid ones', () => {
    const raw = JSON.stringify({
      events: [{ text: 'User adopted a beagle puppy named Biscuit.', about: 'user', turns: ['T1', 'T3', 'T9'] }],
      userTraits: [{ text: 'User is vegetarian.', turns: ['D1:3'] }],
      assistantTraits: [{ text: 'Assistant is curious about pets.', turns: ['turn-b'] }],
      notes: [{ context: 'User asked to remember a diet.', knowledge: 'Suggest vegetarian food.', turns: [3] }],
    });
    const r = parseSummary(raw, turns);
    expect(r.parsed).toBe(true);
    expect(r.items.map((i) => [i.kind, i.sourceTurnIds])).toEqual([
      ['event', ['turn-a', 'turn-c']],
      ['user-trait', ['turn-c']],
      ['assistant-trait', ['turn-b']],
      ['note', ['turn-c']],
    ]);
    expect(r.items[0].time).toBe(3000);
    expect(r.items[1].subject).toBe('user');
    expect(r.items[3].context).toBe('User asked to remember a diet.');
  });

  it('guesses the best matching turn when no source is valid', () => {
    const r = parseSummary(
      '{"events":[{"text":"The beagle owner is vegetarian","turns":["T42"]}],"userTraits":[],"assistantTraits":[]}',
      turns,
    );
    expect(r.items[0].sourceTurnIds).toEqual(['turn-c']);
    expect(r.items[0].sourceGuessed).toBe(true);
  });

  it('survives truncated, partial and garbage output', () => {
    const truncated = parseSummary('{"events":[{"text":"User adopted a puppy","turns":["T1"]},{"text":"User is veg', turns);
    expect(truncated.parsed).toBe(true);
    expect(truncated.items.map((i) => i.text)).toEqual(['User adopted a puppy']);
    const garbage = parseSummary('Sorry, as an AI I cannot', turns);
    expect(garbage.parsed).toBe(false);
    expect(garbage.items).toEqual([]);
    const wrongTypes = parseSummary('{"events":[{"text":5},{"nope":true},"A bare sentence"],"userTraits":"x"}', turns);
    expect(wrongTypes.items.map((i) => i.text)).toEqual(['A bare sentence']);
  });
});

describe('parseTimelineNotes', () => {
  it('reads notes by index and leaves missing ones undefined', () => {
    const r = parseTimelineNotes('{"notes":[{"timeline":2,"note":"Second."},{"timeline":5,"note":"x"}]}', 2);
    expect(r.notes).toEqual([undefined, 'Second.']);
    expect(parseTimelineNotes('["a", "b"]', 2).notes).toEqual(['a', 'b']);
    expect(parseTimelineNotes('', 1).notes).toEqual([undefined]);
  });
});

describe('normaliseRelation and prototype keys', () => {
  it('never returns an Object.prototype member as a relation', () => {
    for (const k of ['constructor', '[{"constructor":160},"   "]', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const r = normaliseRelation(k);
      expect(['Changed', 'Cause', 'Reason', 'HinderedBy', 'React', 'Want', 'SameTopic', 'None']).toContain(r.label);
      expect(r.recognised).toBe(false);
    }
  });
});
