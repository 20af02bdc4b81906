// The reply prompt that the next turn extends (layout.ts): a request whose messages, all but the
// last, are the previous request's plus the reply it got, so an engine that keeps what it read
// reads only what is new. Promises: the beginning stays while nothing it holds changes; what the
// person changed about their memory (an edit, a forget, a forgotten line) is never sent again; the
// window moves in large steps; a message's block never repeats what the prompt holds already.
import { describe, expect, it } from 'vitest';
import { prepareTurn, REPLY_TOKENS, replyRoomFor, type DialogueTurn, type PreparedTurn } from '../../../src/memory/recall/turn';
import { layReply, type LayoutInput, type TurnBlock } from '../../../src/memory/recall/layout';
import { exchangeBlock, excerptText, SHOWN_REPLY_WORDS } from '../../../src/memory/recall/chat-window';
import { estimateTokens } from '../../../src/memory/fit';
import { RefineCache } from '../../../src/memory/recall/refine';
import { MemoryGraph } from '../../../src/memory/graph';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { withDefaults } from '../../../src/memory/settings';
import type { LanguageModel, ModelWindow } from '../../../src/ports';
import type { Memory } from '../../../src/memory/types';
import type { SentChat } from '../../../src/memory/recall/sent-chat';
import { DAY, mem, T0 } from './helpers';

const FACTS: Array<[string, string]> = [
  ['m1', 'You adopted a rescue dog called Biscuit'],
  ['m2', 'You are training for the Oslo half marathon'],
  ['m3', 'Your sister Ingrid lives in Bergen'],
  ['m4', 'You grow tomatoes on your balcony'],
  ['m5', 'You are learning the cello on Tuesdays'],
  ['m6', 'You are allergic to peanuts'],
];
const TOPICS = ['Biscuit the dog', 'the marathon training', 'Ingrid in Bergen', 'the balcony tomatoes', 'the cello lessons', 'peanuts'];

function world(memories: Memory[] = FACTS.map(([id, text], i) => mem(id, i + 1, text, 'event', { sourceTurnIds: [`p${i}`] }))) {
  const index = createHybridIndex();
  for (const m of memories) index.upsert(memoryUnit(m));
  return { index, graph: MemoryGraph.from(memories, []), memoriesById: new Map(memories.map((m) => [m.id, m])) };
}

const model = (window: ModelWindow): LanguageModel => ({
  modelId: 'layout-test',
  window,
  chat: () => Promise.reject(new Error('not here')),
  json: () => Promise.resolve('{}'),
});

/** A reply of about 200 words, different each turn. */
const reply = (i: number) =>
  Array.from({ length: 200 }, (_, k) => ['well', 'yes', 'maybe', 'today', 'later', 'indeed', 'often'][(i * 7 + k) % 7]).join(' ');

interface Chat {
  dialogue: DialogueTurn[];
  sent?: SentChat;
  prepared: PreparedTurn[];
}

async function say(chat: Chat, w: ReturnType<typeof world>, text: string, window: ModelWindow, i: number): Promise<PreparedTurn> {
  chat.dialogue.push({ id: `u${i}`, role: 'user', text, time: T0 + 30 * DAY + i });
  const p = await prepareTurn({
    dialogue: chat.dialogue,
    now: T0 + 30 * DAY,
    ...w,
    llm: model(window),
    settings: withDefaults({ refineWhenUnsure: true }),
    refineCache: new RefineCache(),
    seed: 1,
    sent: chat.sent,
  });
  chat.sent = p.sent;
  chat.prepared.push(p);
  chat.dialogue.push({ id: `a${i}`, role: 'assistant', text: reply(i), time: T0 + 30 * DAY + i + 0.5 });
  return p;
}

const extendsPrevious = (prev: PreparedTurn, replyText: string, next: PreparedTurn) =>
  JSON.stringify(next.messages.slice(0, -1)) === JSON.stringify([...prev.messages, { role: 'assistant', content: replyText }]);

describe('a reply prompt that the next turn extends', () => {
  const big: ModelWindow = { contextTokens: 32_768, maxOutputTokens: 1024 };
  const small: ModelWindow = { contextTokens: 4096, maxOutputTokens: 1024 };

  it('in a window with room, every turn after the first extends the previous request exactly', async () => {
    const w = world();
    const chat: Chat = { dialogue: [], prepared: [] };
    for (let i = 0; i < 12; i++) await say(chat, w, `Tell me more about ${TOPICS[i % TOPICS.length]} please`, big, i);
    for (let i = 1; i < 12; i++) {
      expect(extendsPrevious(chat.prepared[i - 1]!, reply(i - 1), chat.prepared[i]!), `turn ${i}`).toBe(true);
      expect(chat.prepared[i]!.extended).toBe(true);
    }
    // The system prompt is the same throughout: memory found rides with each message instead.
    expect(new Set(chat.prepared.map((p) => p.messages[0]!.content)).size).toBe(1);
    const first = chat.prepared[0]!.messages.at(-1)!.content;
    expect(first.startsWith('<memory>\n')).toBe(true);
    expect(first.endsWith('\n</memory>\n\nTell me more about Biscuit the dog please')).toBe(true);
    // Found for the first message (it has the whole budget), so held by the prompt from then on.
    expect(chat.prepared[3]!.messages.map((m) => m.content).join('\n')).toContain('Your sister Ingrid lives in Bergen');
    // No memory twice in one prompt: a block leaves out what an earlier block holds.
    for (const p of chat.prepared) {
      const text = p.messages.map((m) => m.content).join('\n');
      for (const [, fact] of FACTS) expect(text.split(fact).length - 1, fact).toBeLessThanOrEqual(1);
    }
  });

  it('in a small window it moves in large steps: most turns extend, every prompt fits', async () => {
    const w = world();
    const chat: Chat = { dialogue: [], prepared: [] };
    for (let i = 0; i < 40; i++) await say(chat, w, `Today I thought about ${TOPICS[i % TOPICS.length]} again`, small, i);
    const later = chat.prepared.slice(8);
    const extended = later.filter((p) => p.extended).length / later.length;
    expect(extended).toBeGreaterThanOrEqual(0.6);
    for (const [i, p] of chat.prepared.entries()) {
      expect(p.promptTokens + p.maxTokens, `turn ${i}`).toBeLessThanOrEqual(small.contextTokens);
      if (p.extended) expect(extendsPrevious(chat.prepared[i - 1]!, reply(i - 1), p)).toBe(true);
    }
    // A fresh start keeps only the newest part of the chat: it holds far fewer turns than before it.
    const fresh = chat.prepared.findIndex((p, i) => i > 0 && !p.extended);
    expect(chat.prepared[fresh]!.chat.recent).toBeLessThan(chat.prepared[fresh - 1]!.chat.recent);
  });

  it('a memory edited or forgotten since is never sent again: the prompt starts afresh without it', async () => {
    for (const change of ['edit', 'delete'] as const) {
      const w = world();
      const chat: Chat = { dialogue: [], prepared: [] };
      await say(chat, w, 'How is Biscuit the dog doing?', big, 0);
      expect(chat.prepared[0]!.messages.at(-1)!.content).toContain('Biscuit');
      if (change === 'edit') w.memoriesById.set('m1', { ...w.memoriesById.get('m1')!, text: 'You adopted a cat called Miso' });
      else {
        w.memoriesById.delete('m1');
        w.index.remove('m1');
      }
      const next = await say(chat, w, 'And my marathon training?', big, 1);
      expect(next.extended, change).toBe(false);
      expect(next.messages.map((m) => m.content).join('\n'), change).not.toContain('rescue dog called Biscuit');
    }
  });

  it('a line forgotten since (gone from the dialogue) is never sent again', async () => {
    const w = world();
    const chat: Chat = { dialogue: [], prepared: [] };
    await say(chat, w, 'My bank PIN is 4711, do not tell anyone', big, 0);
    await say(chat, w, 'How is Biscuit the dog doing?', big, 1);
    chat.dialogue.splice(0, 2);
    const next = await say(chat, w, 'And my marathon training?', big, 2);
    expect(next.extended).toBe(false);
    expect(next.messages.map((m) => m.content).join('\n')).not.toContain('4711');
  });

  it('a message changed since (another version shown) is sent as it reads now', async () => {
    const w = world();
    const chat: Chat = { dialogue: [], prepared: [] };
    await say(chat, w, 'My bank PIN is 4711', big, 0);
    chat.dialogue[0] = { ...chat.dialogue[0]!, text: 'I changed my mind about sharing that' };
    const next = await say(chat, w, 'And my marathon training?', big, 1);
    expect(next.extended).toBe(false);
    expect(next.messages.map((m) => m.content).join('\n')).not.toContain('4711');
  });

  it('a new fact about the person changes the beginning: read once, then extended again', async () => {
    const w = world();
    const chat: Chat = { dialogue: [], prepared: [] };
    await say(chat, w, 'How is Biscuit the dog doing?', big, 0);
    const trait = mem('t1', 9, 'You prefer tea over coffee', 'user-trait', { sourceTurnIds: ['p9'] });
    w.memoriesById.set(trait.id, trait);
    w.index.upsert(memoryUnit(trait));
    const changed = await say(chat, w, 'And the marathon?', big, 1);
    expect(changed.extended).toBe(false);
    expect(changed.messages[0]!.content).toContain('You prefer tea over coffee');
    expect((await say(chat, w, 'And the cello lessons?', big, 2)).extended).toBe(true);
  });

  it("the call before a reply runs on the chat's first message only, when retrieval is unsure", async () => {
    const w = world();
    const calls: string[] = [];
    const llm: LanguageModel = {
      ...model(small),
      json: async (_m, schema) => (calls.push(String(schema.title)), '{"enough": true, "keywords": [], "notes": []}'),
    };
    const dialogue: DialogueTurn[] = [];
    let sent: SentChat | undefined;
    for (let i = 0; i < 6; i++) {
      dialogue.push({
        id: `u${i}`,
        role: 'user',
        text: `What about my neighbour Gustav and his ${['boat', 'car', 'cat', 'house', 'job', 'garden'][i]}?`,
        time: T0,
      });
      const p = await prepareTurn({
        dialogue,
        now: T0 + 30 * DAY,
        ...w,
        llm,
        settings: withDefaults(),
        refineCache: new RefineCache(),
        seed: 1,
        sent,
      });
      sent = p.sent;
      dialogue.push({ id: `a${i}`, role: 'assistant', text: reply(i), time: T0 });
    }
    expect(calls.length).toBe(1);
  });

  it('the prompt grows into the output room replies do not use: the window moves later, every call still fits', async () => {
    const w = world();
    const chat: Chat = { dialogue: [], prepared: [] };
    for (let i = 0; i < 30; i++) await say(chat, w, `Today I thought about ${TOPICS[i % TOPICS.length]} again`, small, i);
    const longest = Math.max(...chat.dialogue.filter((t) => t.role === 'assistant').map((t) => estimateTokens(t.text)));
    for (const [i, p] of chat.prepared.entries()) {
      expect(p.promptTokens + p.maxTokens, `turn ${i}`).toBeLessThanOrEqual(small.contextTokens);
      // Never less than the room the chat's replies take, with a margin: no reply of this chat is cut.
      expect(p.maxTokens, `turn ${i}`).toBeGreaterThanOrEqual(Math.max(512, Math.ceil(longest * 1.25)));
    }
    // Some extended prompts reach past the window less the whole output cap (they would have moved it).
    expect(chat.prepared.some((p) => p.extended && p.replyTokens > small.contextTokens - REPLY_TOKENS)).toBe(true);
    // Where the prompt leaves it, the reply may still have the whole cap.
    expect(chat.prepared.some((p) => p.maxTokens === REPLY_TOKENS)).toBe(true);
  });

  it("the room kept for the reply follows the chat's recent replies", () => {
    const said = (words: number): DialogueTurn => ({ role: 'assistant', text: 'word '.repeat(words).trim() });
    const asked: DialogueTurn = { role: 'user', text: 'And then?' };
    // Before the chat's first reply, the whole cap.
    expect(replyRoomFor([asked], 1024)).toBe(1024);
    // Replies of a few hundred words: half the cap.
    expect(replyRoomFor([asked, said(200), asked], 1024)).toBe(512);
    // A long reply among the last few: room for one as long, and a margin.
    const long = estimateTokens(said(600).text);
    expect(replyRoomFor([asked, said(600), asked, said(100), asked], 1024)).toBe(Math.min(1024, Math.ceil(long * 1.25)));
    expect(replyRoomFor([asked, said(600), ...Array.from({ length: 4 }, () => [asked, said(100)]).flat(), asked], 1024)).toBe(512);
    // As the model counts (its count over the estimate), and never over the engine's cap.
    expect(replyRoomFor([asked, said(600), asked], 1024, 0.5)).toBe(Math.max(512, Math.ceil(long * 0.5 * 1.25)));
    expect(replyRoomFor([asked, said(200), asked], 384)).toBe(384);
  });

  it('a strong match left out of the block is recalled beside the new message, the prompt still extended', () => {
    const dialogue: DialogueTurn[] = Array.from({ length: 9 }, (_, i) => ({
      id: `t${i}`,
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      text: `turn ${i} ${'words '.repeat(40)}`,
    }));
    const recalled: TurnBlock = { text: 'user: the old thing', memories: [], segments: [], earlierTurnIds: ['t0'] };
    const base = (block: LayoutInput['block']): LayoutInput => ({
      head: 'system',
      dialogue,
      memoriesById: new Map(),
      segmentText: () => undefined,
      tokens: 2000,
      blockTokens: 50,
      blockMax: 100,
      freshBlockMax: 400,
      reserve: 200,
      keepShare: 0.2,
      block,
    });
    // The previous request: all but the last two turns, as sent.
    const sent = layReply({
      ...base(() => ({ text: '', memories: [], segments: [], earlierTurnIds: [] })),
      dialogue: dialogue.slice(0, -2),
    }).sent;
    const rooms: Array<{ room: number; fresh: boolean; wide?: boolean }> = [];
    // The match fits only in all the room left: the block takes it, and the prompt extends what was sent.
    const fitsWide = layReply({
      ...base((room, _in, _left, fresh, wide) => {
        rooms.push({ room, fresh, wide });
        return wide ? recalled : { ...recalled, text: '', earlierTurnIds: [], missed: 1 };
      }),
      sent,
    });
    expect(fitsWide.extended).toBe(true);
    expect(fitsWide.block.earlierTurnIds).toEqual(['t0']);
    expect(rooms.map((r) => r.wide ?? false)).toEqual([false, true]);
    expect(rooms[1]!.room).toBeGreaterThan(rooms[0]!.room);
    // Not even there: the window moves, with room for it.
    const never = layReply({ ...base((_r, _i, _l, fresh) => ({ ...recalled, ...(fresh ? {} : { missed: 1 }) })), sent });
    expect(never.extended).toBe(false);
    expect(never.block.earlierTurnIds).toEqual(['t0']);
  });
});

describe('an earlier exchange recalled into the prompt', () => {
  it("shows the person's words and the opening of the reply; the search model embeds more of the reply", () => {
    const reply = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    const block = exchangeBlock([
      { role: 'user', text: 'I restore old motorbikes in my garage' },
      { role: 'assistant', text: reply },
    ]);
    expect(block).toContain('user: I restore old motorbikes in my garage');
    expect(block).toContain(`assistant: ${reply.split(' ').slice(0, SHOWN_REPLY_WORDS).join(' ')} …`);
    expect(block).not.toContain(`w${SHOWN_REPLY_WORDS}`);
    expect(SHOWN_REPLY_WORDS).toBeLessThan(60);
    expect(excerptText({ role: 'assistant', text: reply })).toContain('w59 …');
  });
});
