// A standing instruction ("Please keep your answers short.") goes into every
// reply's instructions, whatever the reply asks; it stops once it is deleted or ended; too many to
// fit the model's window are named, never dropped silently.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { parseSummary } from '../../../src/memory/ingest/summarise';
import { summariseMessages, summarySchema } from '../../../src/memory/ingest/summary-prompt';
import { rememberedFact } from '../../../src/memory/commands/fact';
import { parseMemoryCommand } from '../../../src/memory/commands/parse';
import { prepareTurn, REPLY_TOKENS } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { currentInstructions, fitInstructions, instructionsBlock, instructionsFor } from '../../../src/memory/recall/instructions';
import { estimateTokens, outputFor } from '../../../src/memory/fit';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults } from '../../../src/memory/settings';
import { memorylessPreparer } from '../../../src/services/chat/reply-prompt';
import type { LanguageModel } from '../../../src/ports';
import type { Memory } from '../../../src/memory/types';
import { DAY, mem, ScriptedModel, T0 } from './helpers';

const SHORT = 'Keep your answers short.';
const short = mem('short', 1, SHORT, 'instruction', { subject: 'user' });
const ramen = mem('ramen', 2, 'You love spicy ramen', 'user-trait', { subject: 'user' });
const trip = mem('trip', 3, 'You planned a trip to Alaska by plane', 'event', { subject: 'user' });

async function prompt(memories: Memory[], text: string, llm?: LanguageModel) {
  const index = createHybridIndex();
  for (const m of memories) index.upsert(memoryUnit(m));
  return prepareTurn({
    dialogue: [{ role: 'user', text }],
    now: T0 + 20 * DAY,
    index,
    graph: MemoryGraph.from(memories, []),
    memoriesById: new Map(memories.map((m) => [m.id, m])),
    settings: withDefaults(),
    refineCache: new RefineCache(),
    seed: 1,
    llm,
  });
}

describe('standing instructions in every reply', () => {
  it('go into the system prompt whatever the reply asks, and are named as sent', async () => {
    for (const text of ['Tell me about Alaska', 'What is two plus two?', 'hi']) {
      const turn = await prompt([short, ramen, trip], text);
      expect(turn.systemPrompt).toContain(`follow these instructions in every reply, unless they now ask otherwise:\n- ${SHORT}`);
      expect(turn.usedMemory.personaIds).toContain('short');
      // Not a second time as a recalled memory.
      expect(turn.units.some((u) => u.memoryIds.includes('short'))).toBe(false);
    }
  });

  it('stop once deleted or ended (a newer instruction changed it, or "No longer true")', async () => {
    expect((await prompt([ramen, trip], 'Tell me about Alaska')).systemPrompt).not.toContain(SHORT);
    const ended = { ...short, endedAt: T0 + 5 * DAY };
    const turn = await prompt([ended, ramen, trip], 'keep answers short?');
    expect(turn.systemPrompt).not.toContain('follow these instructions');
    expect(turn.usedMemory.personaIds ?? []).not.toContain('short');
  });

  it('are sent within the smallest window, with the reply still fitting', async () => {
    const small = new ScriptedModel(() => '');
    Object.assign(small, { window: { contextTokens: 2048, maxOutputTokens: 384 } });
    const turn = await prompt([short, ramen, trip], 'Tell me about Alaska', small);
    expect(turn.systemPrompt).toContain(SHORT);
    expect(turn.instructions.left).toEqual([]);
  });

  it('too many for their share: the newest that fit are sent, the rest named (never silently dropped)', () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      mem(`i${i}`, i, `Instruction number ${i}: always mention the weather in a full sentence of several words.`, 'instruction'),
    );
    const fit = instructionsFor(many, { contextTokens: 2048, maxOutputTokens: 384 }, 1024);
    expect(fit.sent.length).toBeGreaterThan(0);
    expect(fit.left.length).toBeGreaterThan(0);
    expect(fit.sent.length + fit.left.length).toBe(60);
    // The newest are kept, sent in the order given.
    expect(fit.sent.at(-1)?.id).toBe('i59');
    expect(fit.used).toBeLessThanOrEqual(fit.budget);
    expect(fitInstructions(currentInstructions(many), 0).sent).toEqual([]);
  });

  it('take no more than their share, 15 % of the window less the answer (docs/METHOD.md), and that share bounds them', () => {
    const SHARE = 0.15;
    const many = Array.from({ length: 60 }, (_, i) =>
      mem(`i${i}`, i, `Instruction number ${i}: always mention the weather in a full sentence of several words.`, 'instruction'),
    );
    // Windows whose answer takes a large part of them: the share is of what is left for the prompt.
    for (const window of [
      { contextTokens: 2048, maxOutputTokens: 384 },
      { contextTokens: 4096, maxOutputTokens: 2048 },
    ]) {
      const share = (window.contextTokens - outputFor(window, REPLY_TOKENS)) * SHARE;
      const fit = instructionsFor(many, window, REPLY_TOKENS);
      // What the prompt gets, measured on the block itself.
      expect(estimateTokens(instructionsBlock(fit.sent))).toBeLessThanOrEqual(share);
      expect(fit.used).toBeLessThanOrEqual(share);
      expect(fit.budget).toBeLessThanOrEqual(share);
      // And it is the share that stops them: one more of them would not fit in it.
      expect(fit.sent.length).toBeGreaterThan(0);
      expect(fitInstructions(many.slice(-(fit.sent.length + 1)), Math.floor(share)).left.length).toBe(1);
    }
  });

  it('one too long for the room left does not keep out older ones that fit', () => {
    const older = mem('older', 1, SHORT, 'instruction', { subject: 'user' });
    const long = mem(
      'long',
      2,
      `When I ask about recipes, ${Array.from({ length: 40 }, (_, i) => `step ${i} must be spelled out`).join(', ')}.`,
      'instruction',
      { subject: 'user' },
    );
    const newer = mem('newer', 3, 'Always answer in English.', 'instruction', { subject: 'user' });
    // Room for the two short ones with their header, not for the long one.
    const budget = estimateTokens(instructionsBlock([older, newer])) + 10;
    expect(estimateTokens(long.text)).toBeGreaterThan(budget);
    const fit = fitInstructions([older, long, newer], budget);
    expect(fit.sent.map((m) => m.id)).toEqual(['older', 'newer']);
    expect(fit.left.map((m) => m.id)).toEqual(['long']);
    expect(fit.used).toBeLessThanOrEqual(budget);
  });

  it('memory use off or a temporary chat: no instruction goes in (nothing remembered does)', async () => {
    const llm = new ScriptedModel(() => '');
    const { messages } = await memorylessPreparer(() => undefined).prepare({
      session: { id: 's', title: '', startedAt: 0, lastActivityAt: 0, status: 'open' },
      history: [{ id: 't', sessionId: 's', index: 0, role: 'user', text: 'hi', time: 0, status: 'complete' }],
      now: T0,
      llm,
      signal: new AbortController().signal,
    });
    expect(messages[0]!.content).not.toContain('follow these instructions');
  });
});

describe('where standing instructions come from', () => {
  const turns = [
    { id: 'u1', role: 'user' as const, text: 'Please keep your answers short.', time: T0 },
    { id: 'a1', role: 'assistant' as const, text: 'Sure.', time: T0 + 1 },
  ];

  it('Phase 0 asks for them in a list of their own and reads them as instructions', () => {
    expect(Object.keys(summarySchema(true).properties as object)).toContain('instructions');
    expect(Object.keys(summarySchema(false).properties as object)).not.toContain('instructions');
    expect(summariseMessages(turns)[0]!.content).toMatch(/- instructions: standing instructions for every later reply/);
    const r = parseSummary(JSON.stringify({ events: [], instructions: [{ text: SHORT, turns: ['T1'] }], remember: ['T1'] }), turns);
    expect(r.items.map((i) => [i.kind, i.text, i.subject, i.sourceTurnIds])).toEqual([['instruction', SHORT, 'user', ['u1']]]);
    // Held to the worth judgement, like notes: it would go into every reply after it.
    const unjudged = parseSummary(JSON.stringify({ instructions: [{ text: SHORT, turns: ['T1'] }], remember: [] }), turns);
    expect(unjudged.items).toEqual([]);
  });

  it('"remember: …" and "remember to …" said as an instruction keep it in the user\'s words', () => {
    expect(rememberedFact('keep your answers short')).toEqual({ kind: 'instruction', text: SHORT, subject: 'user' });
    expect(rememberedFact('always answer in metric units').kind).toBe('instruction');
    expect(rememberedFact('you should call me Sam').kind).toBe('instruction');
    // Facts about the user stay traits and notes.
    expect(rememberedFact('my sister is called Ana').kind).toBe('user-trait');
    expect(rememberedFact('the cat is called Tom').kind).toBe('note');
    expect(parseMemoryCommand('please remember to keep your answers short')).toEqual({
      kind: 'remember',
      fact: 'keep your answers short',
      instruction: true,
    });
    expect(parseMemoryCommand('remember: keep your answers short')).toEqual({ kind: 'remember', fact: 'keep your answers short' });
    expect(parseMemoryCommand('remember to drink water')).toBeUndefined();
  });
});
