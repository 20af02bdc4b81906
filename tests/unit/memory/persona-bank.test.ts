// LD-Agent's persona banks: current traits go into every reply prompt under their own word budget.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { personaBank, personaBankBlock } from '../../../src/memory/recall/persona-bank';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults } from '../../../src/memory/settings';
import type { Memory } from '../../../src/memory/types';
import { DAY, mem, T0 } from './helpers';

const traits: Memory[] = [
  mem('u1', 1, 'You love spicy ramen', 'user-trait', { supersededBy: 'u2' }),
  mem('u2', 5, 'You stopped eating spicy food for your health', 'user-trait'),
  mem('u3', 3, 'You are training for a half-marathon in October', 'user-trait'),
  mem('a1', 2, 'Tealeaf keeps answers short and kind', 'assistant-trait'),
  mem('a2', 4, 'Tealeaf reminds you that rest days count', 'assistant-trait'),
  mem('e1', 6, 'You visited Lisbon with Miguel', 'event'),
];

describe('personaBank', () => {
  it('takes current traits only, newest first, alternating between the two banks', () => {
    const bank = personaBank(traits, { maxWords: 100 });
    expect(bank.user.map((m) => m.id)).toEqual(['u2', 'u3']);
    expect(bank.assistant.map((m) => m.id)).toEqual(['a2', 'a1']);
    expect(bank.words).toBe([...bank.user, ...bank.assistant].reduce((a, m) => a + m.text.split(' ').length + 1, 0));
  });

  it('stays within its word budget and leaves out what the prompt already has', () => {
    const small = personaBank(traits, { maxWords: 20 });
    expect(small.words).toBeLessThanOrEqual(20);
    // The newest of each bank first: both banks get a place before either gets a second.
    expect(small.user.map((m) => m.id)).toEqual(['u2']);
    expect(small.assistant.map((m) => m.id)).toEqual(['a2']);
    expect(personaBank(traits, { maxWords: 100, exclude: new Set(['u2', 'a2']) }).user.map((m) => m.id)).toEqual(['u3']);
    expect(personaBank(traits, { maxWords: 0 })).toEqual({ user: [], assistant: [], words: 0 });
  });

  it('renders one block per bank, nothing when empty', () => {
    const text = personaBankBlock(personaBank(traits, { maxWords: 100 }));
    expect(text).toContain('What you know about the person now:\n- You stopped eating spicy food for your health');
    expect(text).toContain('What you have said about yourself:\n- Tealeaf reminds you that rest days count');
    expect(personaBankBlock({ user: [], assistant: [], words: 0 })).toBe('');
  });
});

describe('prepareTurn with persona banks', () => {
  async function turn(personaBankShare: number) {
    const index = createHybridIndex();
    for (const m of traits) index.upsert(memoryUnit(m));
    return prepareTurn({
      dialogue: [{ role: 'user', text: 'What should I cook tonight?' }],
      now: T0 + 10 * DAY,
      index,
      graph: MemoryGraph.from(traits, []),
      memoriesById: new Map(traits.map((m) => [m.id, m])),
      settings: withDefaults({ refinement: false, personaBankShare }),
      refineCache: new RefineCache(),
      seed: 1,
    });
  }

  it('puts current traits the query did not retrieve into the system prompt, and says which', async () => {
    const r = await turn(0.2);
    expect(r.systemPrompt).toContain('What you know about the person now:');
    expect(r.systemPrompt).toContain('You are training for a half-marathon in October');
    expect(r.systemPrompt).not.toContain('- You love spicy ramen'); // superseded: not in the bank
    expect(r.usedMemory.personaIds).toEqual(expect.arrayContaining(['u3', 'a2']));
    for (const id of r.usedMemory.personaIds ?? []) expect(r.usedMemory.memoryIds).not.toContain(id);
  });

  it('is off at share 0', async () => {
    const r = await turn(0);
    expect(r.systemPrompt).not.toContain('What you know about the person now');
    expect(r.usedMemory.personaIds).toBeUndefined();
  });
});
