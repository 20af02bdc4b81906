// "Bring your history": reading ChatGPT and Claude conversations.json into sessions and
// turns (src/services/history/). Fixtures in tests/fixtures, written from the public descriptions.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseHistory, HistoryImportError, checkHistorySize } from '../../../src/services/history/parse';
import { chatRecords, historySessionId } from '../../../src/services/history/chat-records';
import { currentBranch, chatgptConversationSchema } from '../../../src/services/history/chatgpt';
import { MAX_IMPORT_BYTES, MAX_IMPORT_CHAT_MESSAGES, MAX_IMPORT_CHATS, MAX_MESSAGE, splitMessage } from '../../../src/memory/limits';

const ROOT = resolve(import.meta.dirname, '../../..');
const CHATGPT = readFileSync(resolve(ROOT, 'tests/fixtures/chatgpt-conversations.json'), 'utf8');
const CLAUDE = readFileSync(resolve(ROOT, 'tests/fixtures/claude-conversations.json'), 'utf8');
const NOW = Date.UTC(2025, 4, 1);
const utc = (...a: [number, number, number, number, number, number?, number?]) => Date.UTC(...a);

function chatgpt(): Array<Record<string, unknown>> {
  return JSON.parse(CHATGPT) as Array<Record<string, unknown>>;
}

function errorOf(fn: () => unknown): HistoryImportError {
  try {
    fn();
  } catch (e) {
    if (e instanceof HistoryImportError) return e;
    throw e;
  }
  throw new Error('no error was thrown');
}

describe('ChatGPT conversations.json', () => {
  const parsed = parseHistory(CHATGPT, NOW);
  const byTitle = (t: string) => parsed.chats.find((c) => c.session.title === t)!;

  it('is recognised; empty conversations are left out; chats come oldest first', () => {
    expect(parsed.source).toBe('chatgpt');
    expect(parsed.empty).toBe(1);
    expect(parsed.chats.map((c) => c.session.title)).toEqual([
      'What is a good name for a grey cat?',
      'Trip to Lisbon with Ana',
      'Sourdough starter',
    ]);
    const ends = parsed.chats.map((c) => c.session.lastActivityAt);
    expect([...ends].sort((a, b) => a - b)).toEqual(ends);
  });

  it('keeps only the branch the user last saw: the regenerated reply replaces the old one', () => {
    const lisbon = byTitle('Trip to Lisbon with Ana');
    expect(lisbon.turns.map((t) => [t.role, t.text])).toEqual([
      ['user', 'I am planning a trip to Lisbon in May with my sister Ana.'],
      ['assistant', 'Lisbon in May is lovely: warm days and few crowds.'],
      // The image part is left out, the words of the same message kept.
      ['user', 'Ana loves pastel de nata, here is a photo of the bakery.'],
      // The browsing call and the tool's output are not shown messages.
      ['assistant', 'Pastéis de Belém is the classic place for pastel de nata.'],
    ]);
    expect(lisbon.turns.some((t) => /Porto/.test(t.text))).toBe(false);
    expect(lisbon.turns.map((t) => t.externalId)).toEqual(['u1-l', 'a1-new', 'u2-l', 'a3-l']);
  });

  it('dates the session and every turn from the export (seconds, fractions rounded to milliseconds)', () => {
    const lisbon = byTitle('Trip to Lisbon with Ana');
    expect(lisbon.session).toMatchObject({
      id: historySessionId('chatgpt', '6410a1b2-1111-4c1e-9a1a-lisbon000001'),
      startedAt: utc(2023, 2, 14, 9, 30, 0, 250),
      lastActivityAt: utc(2023, 2, 14, 9, 42),
      endedAt: utc(2023, 2, 14, 9, 42),
      status: 'ended',
      endReason: 'import',
    });
    expect(lisbon.turns.map((t) => t.time)).toEqual([
      utc(2023, 2, 14, 9, 31, 0, 500),
      utc(2023, 2, 14, 9, 32),
      utc(2023, 2, 14, 9, 40),
      utc(2023, 2, 14, 9, 42),
    ]);
    expect(lisbon.turns.map((t) => t.index)).toEqual([0, 1, 2, 3]);
    expect(lisbon.turns.every((t) => t.sessionId === lisbon.session.id && t.status === 'complete')).toBe(true);
  });

  it('without current_node takes the newest leaf; a message without a time takes the one before; hidden and empty ones are skipped', () => {
    const sour = byTitle('Sourdough starter');
    expect(sour.session.id).toBe(historySessionId('chatgpt', '6479c0de-2222-4f00-8b8b-sourdough002'));
    expect(sour.turns.map((t) => t.text)).toEqual([
      'My sourdough starter smells like nail polish remover.',
      'That acetone smell means it is hungry: feed it twice a day.',
      'Did you mean to send something?',
      'I named the starter Clint Yeastwood.',
    ]);
    expect(sour.turns[1].time).toBe(sour.turns[0].time);
    expect(sour.turns.map((t) => t.time)).toEqual([...sour.turns.map((t) => t.time)].sort((a, b) => a - b));
  });

  it('a chat whose messages have no times is dated by the conversation; without a title, the first message names it', () => {
    const cat = byTitle('What is a good name for a grey cat?');
    expect(cat.session.startedAt).toBe(utc(2022, 10, 30, 20, 0));
    expect(cat.turns.map((t) => t.time)).toEqual([utc(2022, 10, 30, 20, 0), utc(2022, 10, 30, 20, 0)]);
  });

  it('queues one memorise job per chat at the chat’s own time, so the runner (oldest createdAt first) goes in time order', () => {
    for (const c of parsed.chats) {
      expect(c.job).toMatchObject({ kind: 'memorise', sessionId: c.session.id, step: 'summarise', status: 'pending', updatedAt: NOW });
      expect(c.job.createdAt).toBe(c.session.lastActivityAt);
    }
  });

  it('a branch walk survives a cycle and a current_node that does not exist', () => {
    const conv = chatgptConversationSchema.parse({
      id: 'x',
      mapping: {
        a: { parent: 'b', children: ['b'], message: null },
        b: { parent: 'a', children: ['a'], message: null },
      },
      current_node: 'nowhere',
    });
    expect(currentBranch(conv).length).toBeLessThanOrEqual(2);
  });

  it('a node whose id is "__proto__" keeps its message and the ones before it', () => {
    // Written as JSON text: an object literal would set the prototype instead of a key.
    const node = (id: string, parent: string | null, child: string | null, role: string, text: string, t: number) =>
      `"${id}": {"parent": ${parent ? `"${parent}"` : 'null'}, "children": [${child ? `"${child}"` : ''}],
        "message": {"id": "m-${id}", "author": {"role": "${role}"}, "create_time": ${t},
        "content": {"content_type": "text", "parts": ["${text}"]}}}`;
    const file = `[{"id": "proto-chat", "title": "Proto", "create_time": 1700000000, "current_node": "last", "mapping": {
      ${node('first', null, '__proto__', 'user', 'My first message', 1700000000)},
      ${node('__proto__', 'first', 'last', 'assistant', 'A reply in the middle', 1700000010)},
      ${node('last', '__proto__', null, 'user', 'My last message', 1700000020)}}}]`;
    const [chat] = parseHistory(file, NOW).chats;
    expect(chat.turns.map((t) => t.text)).toEqual(['My first message', 'A reply in the middle', 'My last message']);
  });
});

describe('Claude conversations.json', () => {
  const parsed = parseHistory(CLAUDE, NOW);

  it('is recognised; takes `text`, else the text items of `content`; dates from ISO times', () => {
    expect(parsed.source).toBe('claude');
    expect(parsed.empty).toBe(1);
    const [garden, cello] = parsed.chats;
    expect(cello.session).toMatchObject({
      id: historySessionId('claude', 'c1a2b3c4-0000-4000-8000-cello0000001'),
      title: 'Learning the cello',
      startedAt: utc(2024, 0, 10, 19, 0),
      lastActivityAt: utc(2024, 0, 10, 19, 5),
    });
    expect(cello.turns.map((t) => [t.role, t.text, t.time])).toEqual([
      ['user', 'I started cello lessons with a teacher called Mrs Okafor.', utc(2024, 0, 10, 19, 1)],
      [
        'assistant',
        'Wonderful! Start with open strings and a relaxed bow hold.\n\nPractise twenty minutes a day.',
        utc(2024, 0, 10, 19, 1, 30),
      ],
      ['user', 'My first recital is on the 3rd of March.', utc(2024, 0, 10, 19, 5)],
    ]);
    // No name: titled by its first message; an unreadable time takes the one before.
    expect(garden.session.title).toBe('My tomato plants have yellow leaves at the bottom.');
    expect(garden.turns[1].time).toBe(garden.turns[0].time);
  });

  it('the same conversation id in ChatGPT and Claude gives different sessions', () => {
    expect(historySessionId('claude', 'same')).not.toBe(historySessionId('chatgpt', 'same'));
    expect(historySessionId('claude', 'same')).toBe(historySessionId('claude', 'same'));
  });
});

describe('files that cannot be imported say why and what to do', () => {
  it('not JSON, a ZIP, another format, a LoCoMo file, a single conversation, an empty list', () => {
    expect(errorOf(() => parseHistory('{"oops', NOW)).message).toMatch(/not JSON.*ChatGPT.*Claude/);
    expect(errorOf(() => parseHistory('PK\u0003\u0004...', NOW)).message).toMatch(/ZIP.*Unzip.*conversations\.json/);
    expect(errorOf(() => parseHistory('[{"foo": 1}]', NOW)).message).toMatch(/not a ChatGPT or Claude export.*conversations\.json/);
    expect(errorOf(() => parseHistory('{"speaker_a": "A", "session_1": []}', NOW)).message).toMatch(/LoCoMo/);
    expect(errorOf(() => parseHistory(JSON.stringify(chatgpt()[1]), NOW)).message).toMatch(/single conversation/);
    expect(errorOf(() => parseHistory('[]', NOW)).message).toMatch(/no chats/);
    expect(errorOf(() => parseHistory(JSON.stringify([chatgpt()[2]]), NOW)).message).toMatch(/no chats with messages/);
  });

  it('a malformed conversation names where, and refuses the whole file', () => {
    const list = chatgpt();
    (list[1].mapping as Record<string, { message: { author: unknown } }>)['u1-l'].message.author = { role: 42 };
    const e = errorOf(() => parseHistory(JSON.stringify(list), NOW));
    expect(e.message).toMatch(
      /looks like a ChatGPT export, but one chat could not be read \(chat 2 mapping\.u1-l\.message\.author\.role: /,
    );
    expect(e.message).toMatch(/Nothing was imported/);
    const claude = JSON.parse(CLAUDE) as Array<Record<string, unknown>>;
    claude[0].chat_messages = 'none';
    claude[2].uuid = undefined;
    expect(errorOf(() => parseHistory(JSON.stringify(claude), NOW)).message).toMatch(
      /Claude export, but 2 chats could not be read \(chat 1 chat_messages: .*; chat 3 uuid: /,
    );
  });

  it('huge: too many bytes, too many chats', () => {
    expect(() => checkHistorySize(MAX_IMPORT_BYTES)).not.toThrow();
    expect(errorOf(() => checkHistorySize(MAX_IMPORT_BYTES + 1)).message).toMatch(/up to 256 MB.*split it/);
    const many = JSON.stringify(Array.from({ length: MAX_IMPORT_CHATS + 1 }, () => ({ mapping: {} })));
    expect(errorOf(() => parseHistory(many, NOW)).message).toMatch(/holds 20,001 chats.*at most 20,000/);
  });

  it('overlong messages are kept whole in parts, overlong chats keep their first messages; neither is refused', () => {
    // Paragraphs, so the parts end where a paragraph does; one character over the limit is one part more.
    const paragraph = `${'word '.repeat(199)}word`;
    const long = Array.from({ length: Math.ceil((MAX_MESSAGE + 1) / (paragraph.length + 2)) }, () => paragraph).join('\n\n');
    expect(long.length).toBeGreaterThan(MAX_MESSAGE);
    const messages = Array.from({ length: MAX_IMPORT_CHAT_MESSAGES + 3 }, (_, i) => ({
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      text: i === 0 ? long : `m${i}`,
      time: i,
    }));
    const r = chatRecords('claude', { id: 'long', title: 't', messages }, NOW)!;
    expect(r.cut).toBe(true);
    expect(r.split).toBe(1);
    // The first messages of the export, the first of them in two parts said by the same speaker.
    expect(r.turns).toHaveLength(MAX_IMPORT_CHAT_MESSAGES + 1);
    expect(r.turns.map((t) => t.index)).toEqual(r.turns.map((_, i) => i));
    expect(r.turns.slice(0, 3).map((t) => t.role)).toEqual(['user', 'user', 'assistant']);
    expect(r.turns[0].text.length).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(r.turns[0].text.endsWith('\n\n')).toBe(true);
    expect(r.turns[0].text + r.turns[1].text).toBe(long);
    expect(r.turns[2].text).toBe('m1');
  });

  it('splitMessage: no part over the limit, nothing lost, no surrogate pair split, without spaces too', () => {
    for (const text of ['x'.repeat(MAX_MESSAGE * 2 + 5), '😀'.repeat(MAX_MESSAGE), `${'a '.repeat(MAX_MESSAGE)}`]) {
      const parts = splitMessage(text);
      expect(parts.join('')).toBe(text);
      expect(parts.every((p) => p.length <= MAX_MESSAGE && p.length > 0)).toBe(true);
      expect(parts.every((p) => !/[\ud800-\udbff]$/.test(p))).toBe(true);
    }
    expect(splitMessage('short')).toEqual(['short']);
  });
});

describe('any file: a result or a HistoryImportError, never another exception', () => {
  const expectReadable = (text: string) => {
    try {
      const r = parseHistory(text, NOW);
      for (const c of r.chats) {
        expect(c.turns.length).toBeGreaterThan(0);
        expect(c.turns.every((t) => Number.isFinite(t.time) && typeof t.text === 'string')).toBe(true);
        expect(Number.isFinite(c.session.startedAt) && c.session.startedAt <= c.session.lastActivityAt).toBe(true);
      }
    } catch (e) {
      expect(e).toBeInstanceOf(HistoryImportError);
    }
  };

  it('random JSON', () => {
    fc.assert(fc.property(fc.json(), expectReadable), { numRuns: 300 });
  });

  it('the fixtures with one random value put anywhere', () => {
    const paths = (v: unknown, at: (string | number)[] = []): (string | number)[][] =>
      v !== null && typeof v === 'object'
        ? [at, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...at, Array.isArray(v) ? Number(k) : k]))]
        : [at];
    for (const fixture of [CHATGPT, CLAUDE]) {
      const base = JSON.parse(fixture) as unknown;
      const all = paths(base).filter((p) => p.length > 0);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: all.length - 1 }), fc.jsonValue(), (i, value) => {
          const copy = structuredClone(base) as Record<string | number, unknown>;
          const path = all[i];
          let node = copy;
          for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
          node[path.at(-1)!] = value;
          expectReadable(JSON.stringify(copy));
        }),
        { numRuns: 300 },
      );
    }
  });
});
