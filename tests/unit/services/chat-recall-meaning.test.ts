// MemoryService embeds a chat's turns in the background as they are said (ChatVectors), so a reply
// finds earlier exchanges of a long chat by meaning; the reply itself waits only for its own
// message's embedding (and the few turns a background call has in flight). After a reload the chat
// is embedded again in the background; until then it is searched by words, and the reply says so.
// Meaning comes from the concept double (tests/support/concept-embedder.ts), whose table encodes
// that "kid" and "little girl" mean a daughter: the static test embedder cannot.
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { CHAT_VECTOR_CHUNK } from '../../../src/services/memory/chat-vectors';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { ConceptEmbedder } from '../../support/concept-embedder';
import { ModelDouble } from '../../support/model-double';
import { enforce } from '../../support/standin';
import { until } from '../../support/until';
import { longChat, OTHER_WORDS, OWN_WORDS } from '../memory/chat-fixtures';
import type { Session, Turn } from '../../../src/memory/types';
import { T0 } from '../memory/helpers';

const session: Session = { id: 's', title: 's', startedAt: T0, lastActivityAt: T0, status: 'open' };

function history(question: string): Turn[] {
  return longChat(question).map((t, i) => ({ ...t, id: t.id!, sessionId: 's', index: i, time: t.time!, status: 'complete' as const }));
}

async function service(embedder: ConceptEmbedder) {
  const repo = new InMemoryRepository();
  const memory = new MemoryService(
    repo,
    new SettingsService(repo),
    () => undefined,
    () => embedder,
  );
  await memory.load();
  return memory;
}

const ask = (memory: MemoryService, turns: Turn[]) =>
  memory.prepare({
    session,
    history: turns,
    now: T0 + 300 * 3_600_000,
    llm: enforce(new ModelDouble(), 'webgpu-4096'),
    signal: new AbortController().signal,
  });

describe('a long chat embedded as it is said', () => {
  it.each([...OWN_WORDS, ...OTHER_WORDS])('asked "%s" at turn 200: found by meaning, each turn embedded once', async (q) => {
    const embedder = new ConceptEmbedder();
    const memory = await service(embedder);
    const turns = history(q);
    // As the app notes them: each reply done (the new message is embedded by its own reply).
    for (let i = 2; i <= 200; i += 2) memory.noteChat(turns.slice(0, i));
    await memory.chatVectors.settled();
    expect(embedder.texts).toBe(200);
    expect(embedder.calls).toBeLessThanOrEqual(100);
    const before = embedder.calls;
    const prompt = await ask(memory, turns);
    expect(prompt.usedMemory?.earlierTurnIds).toContain('t2');
    expect(prompt.usedMemory?.earlierBy).toBe('meaning');
    // The reply's own embedding: one call, its query and its message, nothing of the chat.
    expect(embedder.calls).toBe(before + 1);
    expect(embedder.log.at(-1)!.length).toBeLessThanOrEqual(2);
    expect(embedder.log.at(-1)).toContain(q);
    // Noted again (the next reply): nothing is embedded twice, the message included.
    const texts = embedder.texts;
    memory.noteChat(turns);
    await memory.chatVectors.settled();
    expect(embedder.texts).toBe(texts);
  });
});

describe('the same chat after a reload', () => {
  it.each(OTHER_WORDS)('asked "%s": the reply does not wait for the chat, says words only, then finds it', async (q) => {
    const embedder = new ConceptEmbedder();
    const memory = await service(embedder);
    const turns = history(q);
    // The background's calls are held, one at a time, until the test lets each go.
    const held: Array<() => void> = [];
    embedder.gate = (texts) => (texts.includes(q) ? Promise.resolve() : new Promise<void>((go) => held.push(go)));
    // The chat is shown: its turns go to the background, whose first call is now in flight.
    memory.noteChat(turns.slice(0, -1));
    await until('the first background call in flight', () => held.length === 1);
    const reply = ask(memory, turns);
    // The call in flight answers; the reply's own embedding comes next, before any other turn.
    held.shift()!();
    const prompt = await reply;
    expect(embedder.log[0]).toHaveLength(CHAT_VECTOR_CHUNK);
    expect(embedder.log.findIndex((c) => c.includes(q))).toBe(1);
    expect(prompt.usedMemory?.earlierTurnIds ?? []).not.toContain('t2');
    // What words found, if anything, is said to be by words: the chat was not read yet.
    if (prompt.usedMemory?.earlierTurnIds?.length) expect(prompt.usedMemory.earlierBy).toBe('unread');
    // Let the background finish, then ask again.
    embedder.gate = undefined;
    for (const go of held.splice(0)) go();
    await memory.chatVectors.settled();
    const again = await ask(memory, turns);
    expect(again.usedMemory?.earlierTurnIds).toContain('t2');
    expect(again.usedMemory?.earlierBy).toBe('meaning');
  });

  it('without the search model: words only, nothing embedded', async () => {
    const repo = new InMemoryRepository();
    const memory = new MemoryService(
      repo,
      new SettingsService(repo),
      () => undefined,
      () => undefined,
    );
    await memory.load();
    const turns = history(OWN_WORDS[0]!);
    memory.noteChat(turns);
    await memory.chatVectors.settled();
    const prompt = await ask(memory, turns);
    expect(prompt.usedMemory?.earlierTurnIds).toContain('t2');
    expect(prompt.usedMemory?.earlierBy).toBe('words');
    const other = await ask(memory, history(OTHER_WORDS[0]!));
    expect(other.usedMemory?.earlierTurnIds ?? []).not.toContain('t2');
  });
});
