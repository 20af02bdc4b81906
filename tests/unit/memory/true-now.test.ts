// One rule for "true now" in every builder of model input. The fixture's past trait is
// marked "no longer true" by the user (endedAt) and NOT superseded: a builder that checks only
// supersededBy (the old persona bank) sends it to the model as current, and fails here.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { personaBank, personaBankBlock } from '../../../src/memory/recall/persona-bank';
import { memoryLine, prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache, refineMessages } from '../../../src/memory/recall/refine';
import { formatTimeline } from '../../../src/memory/recall/timelines';
import { linkMemory } from '../../../src/memory/ingest/linking';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { sessionSummaries } from '../../../src/memory/eval/summaries';
import { isPast } from '../../../src/memory/past';
import { withDefaults } from '../../../src/memory/settings';
import type { Memory } from '../../../src/memory/types';
import { candidatesInPrompt, DAY, edge, FixedIndex, mem, ScriptedModel, T0, sentText } from './helpers';

const ENDED_AT = T0 + 20 * DAY;
const vegetarian = mem('v', 1, 'You are vegetarian', 'user-trait', { endedAt: ENDED_AT });
const replaced = mem('r1', 2, 'You live in Leeds', 'user-trait', { supersededBy: 'r2' });
const now = mem('r2', 30, 'You live in Oslo', 'user-trait');
const cooking = mem('c', 25, 'You cooked a chicken curry for friends', 'event');
const all: Memory[] = [vegetarian, replaced, now, cooking];
const byId = new Map(all.map((m) => [m.id, m]));
const PAST_WORDS = /vegetarian \(true until \d{4}-\d{2}-\d{2}; no longer true\)/;

describe('true now: every builder of model input', () => {
  it('the rule: ended or superseded is past, and only that', () => {
    expect(all.map((m) => [m.id, isPast(m)])).toEqual([
      ['v', true],
      ['r1', true],
      ['r2', false],
      ['c', false],
    ]);
  });

  it('persona bank: "now" holds no past trait, ended or superseded', () => {
    const bank = personaBank(all, { maxWords: 100 });
    expect(bank.user.map((m) => m.id)).toEqual(['r2']);
    expect(personaBankBlock(bank)).not.toContain('vegetarian');
  });

  it('memory lines and timelines carry the past with its date', () => {
    expect(memoryLine(vegetarian, byId)).toMatch(PAST_WORDS);
    expect(memoryLine(replaced, byId)).toContain('Leeds (true until');
    expect(memoryLine(now, byId)).not.toContain('no longer true');
    const timeline = formatTimeline({ memoryIds: ['v', 'c'], relations: ['Changed'], through: 'c' }, byId);
    expect(timeline).toMatch(PAST_WORDS);
  });

  it('refinement input: the raw timelines it sends mark the past', () => {
    const raw = formatTimeline({ memoryIds: ['v', 'c'], relations: ['Changed'], through: 'c' }, byId);
    const text = refineMessages('user: what should I cook?', [raw])
      .map((m) => m.content)
      .join('\n');
    expect(text).toMatch(PAST_WORDS);
    expect(text).toContain('no longer true must be described as past');
  });

  it('relation labelling: a past candidate is shown as past', async () => {
    const newMem = mem('n', 40, 'You ordered a vegetarian lasagne');
    const graph = MemoryGraph.from([...all, newMem], [edge('r1', 'r2')]);
    const index = new FixedIndex(['v', 'c']);
    for (const m of [...all, newMem]) index.upsert(memoryUnit(m));
    const llm = new ScriptedModel(() => '{"labels":[]}');
    await linkMemory({
      memory: newMem,
      graph,
      index,
      lookup: (id) => byId.get(id) ?? (id === 'n' ? newMem : undefined),
      settings: withDefaults({ j: 2 }),
      llm,
      now: 0,
    });
    const shown = [...candidatesInPrompt(llm.calls[0]!.messages).values()];
    expect(shown.find((t) => t.includes('vegetarian'))).toMatch(PAST_WORDS);
    expect(shown.find((t) => t.includes('curry'))).not.toContain('no longer true');
  });

  it('TeaFarm summaries: the past is written as past', () => {
    const lines = sessionSummaries(byId).flatMap((s) => s.lines);
    expect(lines.find((l) => l.includes('vegetarian'))).toMatch(PAST_WORDS);
    expect(lines.find((l) => l.includes('Oslo'))).toBe('You live in Oslo');
  });

  const reply = async (text: string) => {
    const index = createHybridIndex();
    for (const m of all) index.upsert(memoryUnit(m));
    return prepareTurn({
      dialogue: [{ role: 'user', text }],
      now: T0 + 40 * DAY,
      index,
      graph: MemoryGraph.from(all, []),
      memoriesById: byId,
      settings: withDefaults({ refinement: false, personaBankShare: 0.5 }),
      refineCache: new RefineCache(),
      seed: 1,
    });
  };
  const nowBlock = (prompt: string) => /What you know about the person now:\n((?:- .*\n?)*)/.exec(prompt)?.[1] ?? '';

  it('the whole reply prompt, nothing retrieved: the bank has only what is true now', async () => {
    const r = await reply('Any plans for the weekend?');
    expect(r.usedMemory.memoryIds).not.toContain('v');
    expect(nowBlock(r.systemPrompt)).toContain('Oslo');
    expect(sentText(r)).not.toContain('vegetarian');
  });

  it('the whole reply prompt: past traits never under "now", and retrieved ones dated as past', async () => {
    const r = await reply('Am I still vegetarian? What should I cook?');
    expect(nowBlock(r.systemPrompt)).not.toContain('vegetarian');
    expect(nowBlock(r.systemPrompt)).not.toContain('Leeds');
    // Retrieved by its words, it reaches the prompt, as the past.
    expect(r.usedMemory.memoryIds).toContain('v');
    expect(sentText(r)).toMatch(PAST_WORDS);
  });
});
