// Conditional memory (seed 002), decided in the summarising call: it lists the user messages worth
// remembering (the paper's yes cases: a request for the assistant, feedback on a reply, knowledge
// worth keeping; no for simple questions and small talk). Notes come only from those messages;
// every item carries the judgement of its sources; without a list nothing is judged or dropped.
import { describe, expect, it } from 'vitest';
import { parseSummary } from '../../../src/memory/ingest/summarise';
import { summariseMessages, summarySchema, type TranscriptTurn } from '../../../src/memory/ingest/summary-prompt';

// The paper's kind of dialogue: a greeting, a simple question, feedback, then knowledge.
const turns: TranscriptTurn[] = [
  { id: 'u1', role: 'user', text: 'Hi there!', time: 1000 },
  { id: 'a1', role: 'assistant', text: 'Hello! How can I help?', time: 2000 },
  { id: 'u2', role: 'user', text: 'What is the capital of France?', time: 3000 },
  { id: 'a2', role: 'assistant', text: 'Paris.', time: 4000 },
  { id: 'u3', role: 'user', text: 'When I say capitalise, I mean all caps, not title case.', time: 5000 },
  { id: 'a3', role: 'assistant', text: 'Understood.', time: 6000 },
  { id: 'u4', role: 'user', text: 'I prefer the gym to running outside because of the weather.', time: 7000 },
];

const answer = (extra: Record<string, unknown>) =>
  JSON.stringify({
    events: [{ text: 'You asked about the capital of France.', about: 'user', turns: ['T3'] }],
    userTraits: [{ text: 'You prefer gym workouts to running outside.', turns: ['T7'] }],
    assistantTraits: [],
    notes: [
      { context: 'You corrected how Tealeaf capitalised.', knowledge: 'Capitalise means all caps.', turns: ['T5'] },
      { context: 'You asked a quiz question.', knowledge: 'You like geography quizzes.', turns: ['T3'] },
    ],
    topics: [],
    ...extra,
  });

describe('worth remembering, per message', () => {
  it('is asked for in the schema and the prompt when notes are', () => {
    const schema = summarySchema(true) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toContain('remember');
    expect(Object.keys(schema.properties).at(-1)).toBe('topics');
    expect(Object.keys(summarySchema(false) as { properties: Record<string, unknown> })).not.toContain('remember');
    const system = summariseMessages(turns)[0]!.content;
    expect(system).toMatch(/remember: .*request or instruction.*feedback.*Leave out simple questions and small talk/);
    expect(summariseMessages(turns, { includeNotes: false })[0]!.content).not.toMatch(/remember:/);
  });

  it('keeps notes only from messages judged worth remembering; each item carries the judgement', () => {
    const r = parseSummary(answer({ remember: ['T5', 'T7'] }), turns);
    expect(r.worthTurnIds).toEqual(['u3', 'u4']);
    const notes = r.items.filter((i) => i.kind === 'note');
    expect(notes.map((n) => n.text)).toEqual(['Capitalise means all caps.']);
    expect(notes[0]!.worthRemembering).toBe(true);
    expect(r.problems.some((p) => /note "You like geography.*dropped: not from a message judged worth remembering/.test(p))).toBe(true);
    // The session's summary (events, traits) is kept whatever the judgement.
    expect(r.items.find((i) => i.kind === 'event')).toMatchObject({ worthRemembering: false });
    expect(r.items.find((i) => i.kind === 'user-trait')).toMatchObject({ worthRemembering: true });
  });

  it('reads only user messages, by label, number or id, and ignores what is not a turn', () => {
    const r = parseSummary(answer({ remember: ['T2', '5', 'u4', 'T99', 'nonsense', { x: 1 }] }), turns);
    expect(r.worthTurnIds).toEqual(['u3', 'u4']);
  });

  it('judges nothing and drops nothing when the call gave no list', () => {
    const r = parseSummary(answer({}), turns);
    expect(r.worthTurnIds).toBeUndefined();
    expect(r.items.filter((i) => i.kind === 'note')).toHaveLength(2);
    expect(r.items.every((i) => i.worthRemembering === undefined)).toBe(true);
  });

  it('an empty list means no message was worth a note', () => {
    const r = parseSummary(answer({ remember: [] }), turns);
    expect(r.worthTurnIds).toEqual([]);
    expect(r.items.filter((i) => i.kind === 'note')).toHaveLength(0);
    expect(r.items.filter((i) => i.kind !== 'note')).toHaveLength(2);
  });
});
