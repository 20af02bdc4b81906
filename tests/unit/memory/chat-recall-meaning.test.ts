// In-chat recall searches earlier exchanges by meaning and words where the search model has embedded
// them, by words alone otherwise (docs/METHOD.md 1.10). A fact told at turn 3 of a 200-turn chat
// ("my daughter Lena is allergic to peanuts") is asked about at turn 200 in its own words and in
// others. The vectors come from the concept double (tests/support/concept-embedder.ts), whose table
// says explicitly that "kid", "little girl" and "daughter" mean a child and "snack", "eating" and
// "peanuts" food: the static test embedder hashes every word apart and cannot say so.
import { describe, expect, it } from 'vitest';
import { enforce } from '../../support/standin';
import { ModelDouble } from '../../support/model-double';
import { ConceptEmbedder } from '../../support/concept-embedder';
import { MemoryGraph } from '../../../src/memory/graph';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { RefineCache } from '../../../src/memory/recall/refine';
import { prepareTurn, type DialogueTurn, type PreparedTurn } from '../../../src/memory/recall/turn';
import { excerptText } from '../../../src/memory/recall/chat-window';
import { withDefaults } from '../../../src/memory/settings';
import { longChat, OTHER_WORDS, OWN_WORDS } from './chat-fixtures';
import { T0 } from './helpers';

async function prepare(dialogue: DialogueTurn[], embedder?: ConceptEmbedder): Promise<PreparedTurn> {
  // The chat's turns as the service embeds them in the background (all but the new message).
  const chatVectors = embedder
    ? new Map((await embedder.embed(dialogue.slice(0, -1).map((t) => excerptText(t)))).map((v, i) => [dialogue[i]!.id!, v]))
    : undefined;
  return prepareTurn({
    dialogue,
    now: T0 + 202 * 3_600_000,
    index: createHybridIndex(),
    graph: new MemoryGraph(),
    memoriesById: new Map(),
    llm: enforce(new ModelDouble(), 'webgpu-4096'),
    embedder,
    settings: withDefaults({}),
    refineCache: new RefineCache(),
    seed: 1,
    chatVectors,
  });
}

describe('in-chat recall by meaning and words', () => {
  it.each(OWN_WORDS)('asked in its own words ("%s"): found by words alone, and with meaning', async (q) => {
    const words = await prepare(longChat(q));
    expect(words.chat.left).toBeGreaterThan(150);
    expect(words.usedMemory.earlierTurnIds).toContain('t2');
    expect(words.usedMemory.earlierBy).toBe('words');
    const meaning = await prepare(longChat(q), new ConceptEmbedder());
    expect(meaning.usedMemory.earlierTurnIds).toContain('t2');
    expect(meaning.usedMemory.earlierBy).toBe('meaning');
  });

  it.each(OTHER_WORDS)('asked in other words ("%s"): missed by words alone, found by meaning', async (q) => {
    const words = await prepare(longChat(q));
    expect(words.usedMemory.earlierTurnIds ?? []).not.toContain('t2');
    const embedder = new ConceptEmbedder();
    const meaning = await prepare(longChat(q), embedder);
    expect(meaning.usedMemory.earlierTurnIds).toContain('t2');
    expect(meaning.usedMemory.earlierBy).toBe('meaning');
    expect(meaning.messages.at(-1)!.content).toContain('allergic to peanuts');
    // Found by meaning, not by filling the room: the unrelated bicycle exchanges stay out.
    expect(meaning.usedMemory.earlierTurnIds!.length).toBeLessThanOrEqual(2 * 8);
    // The reply embedded its own message once, in the call that embedded the query.
    expect(embedder.log.at(-1)).toContain(q);
    expect(meaning.messageVector).toBeDefined();
  });

  it('the message embedded but the chat not yet (after a reload): words only, said as such', async () => {
    const dialogue = longChat(OWN_WORDS[0]!);
    const p = await prepareTurn({
      dialogue,
      now: T0 + 202 * 3_600_000,
      index: createHybridIndex(),
      graph: new MemoryGraph(),
      memoriesById: new Map(),
      llm: enforce(new ModelDouble(), 'webgpu-4096'),
      embedder: new ConceptEmbedder(),
      settings: withDefaults({}),
      refineCache: new RefineCache(),
      seed: 1,
      chatVectors: new Map(),
    });
    expect(p.usedMemory.earlierTurnIds).toContain('t2');
    expect(p.usedMemory.earlierBy).toBe('unread');
  });
});
