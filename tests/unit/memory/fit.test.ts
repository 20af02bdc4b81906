// The fitting of model calls (src/memory/fit) and the parts of chunked Phase 0, against a real
// tokenizer where it matters.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { nodeTokenizers, loadTokenizer } from '../../support/standin';
import { estimateTokens, fitPrompt, fittedJson, isPromptTooLong, outputFor, windowOf, FALLBACK_WINDOW } from '../../../src/memory/fit';
import { ContextOverflowError, type ChatMessage, type LanguageModel } from '../../../src/ports';
import { planSummary, linesOf } from '../../../src/memory/ingest/summary-plan';
import { parseSummary } from '../../../src/memory/ingest/summarise';
import { type TranscriptTurn } from '../../../src/memory/ingest/summary-prompt';
import { chatWindow } from '../../../src/memory/recall/chat-window';
import { retrievalUnsure } from '../../../src/memory/recall/gate';
import type { SearchHit } from '../../../src/memory/retrieval/types';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/locomo-mini.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const fixtureTexts = Object.values(fixture.conversation as Record<string, unknown>)
  .flatMap((v) => (Array.isArray(v) ? v : []))
  .flatMap((t: unknown) =>
    t && typeof t === 'object' && typeof (t as { text?: unknown }).text === 'string' ? [(t as { text: string }).text] : [],
  );

describe('the token estimate', () => {
  it('is at least the real count of the Qwen2.5 and Llama 3 tokenizers over whole texts', async () => {
    expect(fixtureTexts.length).toBeGreaterThan(10);
    const text = [
      ...fixtureTexts,
      'Ich wohne in Bergen und arbeite als Krankenschwester.',
      '我住在卑尔根，我是一名护士。',
      '{"events":[{"text":"You moved.","turns":["T12"]}]}',
      '2023-05-08 12:30 1234567',
    ].join('\n');
    for (const family of ['qwen2.5', 'llama3'] as const) {
      const tok = await loadTokenizer(family, nodeTokenizers);
      const real = tok.encode(text).length;
      expect(estimateTokens(text)).toBeGreaterThanOrEqual(real);
      // ... and not wildly above (a safe estimate that wastes half the window would be no use).
      expect(estimateTokens(text)).toBeLessThan(real * 1.6);
    }
  });
});

const model = (window: LanguageModel['window'], answer = '{}', refuseOver = Infinity): LanguageModel & { sent: ChatMessage[][] } => {
  const sent: ChatMessage[][] = [];
  return {
    modelId: 'm',
    window,
    sent,
    chat: async () => 'ok',
    json: async (messages) => {
      const n = messages.reduce((a, m) => a + m.content.length, 0);
      if (n > refuseOver) throw new ContextOverflowError(n, 1000);
      sent.push(messages);
      return answer;
    },
  };
};

describe('fitPrompt and fitted calls', () => {
  const builder = (fixed: string) => (tokens: number) => [
    { role: 'system' as const, content: fixed },
    { role: 'user' as const, content: 'word '.repeat(Math.max(0, tokens - 50)) },
  ];

  it('a model that cannot say gets the fallback window (the smallest engine)', () => {
    expect(windowOf(undefined)).toBe(FALLBACK_WINDOW);
    expect(windowOf({ window: { contextTokens: 0, maxOutputTokens: 10 } })).toBe(FALLBACK_WINDOW);
    expect(outputFor({ contextTokens: 4096, maxOutputTokens: 1024 }, 5000)).toBe(1024);
    expect(outputFor({ contextTokens: 600, maxOutputTokens: 1024 }, 5000)).toBe(300);
  });

  it('builds again smaller when the exact count is over, until prompt plus output fits', async () => {
    // A tokenizer that counts twice what the estimate says: the first build is over.
    const counted: number[] = [];
    const llm = model({
      contextTokens: 1000,
      maxOutputTokens: 200,
      countTokens: async (m) => {
        const n = 2 * m.reduce((a, x) => a + x.content.split(' ').length, 0);
        counted.push(n);
        return n;
      },
    });
    const fitted = await fitPrompt({ llm, build: builder('Instructions.'), output: 200 });
    expect(fitted.exact).toBe(true);
    expect(fitted.promptTokens + fitted.maxTokens).toBeLessThanOrEqual(1000);
    expect(counted.length).toBeGreaterThan(1);
  });

  it('says in words when what must go in does not fit, without calling the model', async () => {
    const llm = model({ contextTokens: 300, maxOutputTokens: 100 });
    const err = await fittedJson({ llm, build: builder('must stay '.repeat(400)), output: 100, schema: {} }).catch((e: unknown) => e);
    expect(isPromptTooLong(err)).toBe(true);
    expect(llm.sent).toEqual([]);
  });

  it('a context error from the engine builds the call again smaller, and it goes through', async () => {
    const llm = model({ contextTokens: 4000, maxOutputTokens: 100 }, '{"ok":true}', 6000);
    const r = await fittedJson({ llm, build: builder('Keep these instructions.'), output: 100, schema: {} });
    expect(r.text).toBe('{"ok":true}');
    expect(llm.sent).toHaveLength(1);
    expect(llm.sent[0]![0]!.content).toBe('Keep these instructions.');
  });
});

const session = (n: number, userWords = 12, replyWords = 30): TranscriptTurn[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `turn:${i}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    text: i % 2 === 0 ? `Fact${i} `.repeat(userWords) : 'reply '.repeat(replyWords),
    time: i * 1000,
  }));

describe('chunked Phase 0 parts', () => {
  const cpu = { contextTokens: 2048, maxOutputTokens: 384 };

  it('cover every line once, in order, each within the room and the answer it can write', () => {
    const plan = planSummary(session(300), cpu, { includeNotes: true });
    expect(plan.parts.length).toBeGreaterThan(3);
    expect(plan.parts[0]!.from).toBe(0);
    for (let i = 1; i < plan.parts.length; i++) expect(plan.parts[i]!.from).toBe(plan.parts[i - 1]!.to);
    expect(plan.parts.at(-1)!.to).toBe(plan.lines.length);
    for (const p of plan.parts) {
      const users = new Set(
        plan.lines
          .slice(p.from, p.to)
          .filter((l) => l.turn % 2 === 0)
          .map((l) => l.turn),
      );
      expect(users.size).toBeLessThanOrEqual(plan.maxItems);
    }
  });

  it('a resumed job keeps its parts even if the window changed meanwhile', () => {
    const first = planSummary(session(120), cpu, { includeNotes: true });
    const again = planSummary(
      session(120),
      { contextTokens: 4096, maxOutputTokens: 1024 },
      {
        includeNotes: true,
        lineChars: first.lineChars,
        starts: first.parts.map((p) => p.from),
      },
    );
    expect(again.parts).toEqual(first.parts);
  });

  it('a turn longer than a part is shown in pieces, every word kept', () => {
    const text = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
    const lines = linesOf(4, text, 500);
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.every((l) => l.text.length <= 500 && l.part!.count === lines.length)).toBe(true);
    expect(lines.map((l) => l.text).join(' ')).toBe(text);
  });

  it("labels are the session's: a part's answer resolves to its own turns, also where ids read like labels", () => {
    const turns: TranscriptTurn[] = session(40).map((t, i) => ({ ...t, id: `t${i}` }));
    const part = turns.slice(20, 30);
    const r = parseSummary(
      JSON.stringify({
        events: [
          { text: 'You said a thing.', turns: ['T21'] },
          { text: 'Another.', turns: ['T2'] },
        ],
      }),
      part,
      20,
    );
    expect(r.items[0]!.sourceTurnIds).toEqual(['t20']);
    // T2 is not in this part: its source is guessed from this part's turns, never t1 or t2.
    expect(part.map((t) => t.id)).toContain(r.items[1]!.sourceTurnIds[0]);
  });

  it('an answer that repeats an item until the cap keeps it once; an echoed schema is no answer', () => {
    const turns = session(4);
    const looping = JSON.stringify({ events: Array.from({ length: 30 }, () => ({ text: 'You like tea.', turns: ['T1'] })) });
    const r = parseSummary(looping, turns);
    expect(r.items).toHaveLength(1);
    expect(r.problems.join(' ')).toMatch(/repeated/);
    const echo = parseSummary(
      JSON.stringify({ title: 'session_memories', type: 'object', properties: { events: { type: 'array' } } }),
      turns,
    );
    expect(echo.parsed).toBe(false);
  });
});

describe('the chat window', () => {
  const chat = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `c${i}`,
      role: (i % 2 === 0 ? 'user' : 'assistant') as 'user' | 'assistant',
      text:
        i === 4
          ? 'My sister Ingrid is coming at Christmas.'
          : `${i % 2 === 0 ? 'I fixed' : 'Nice, the'} bike number ${i} today. `.repeat(8),
    }));

  it('a short chat goes in whole', () => {
    const w = chatWindow(chat(6), 10_000, 'bike', 500);
    expect(w.recent).toHaveLength(6);
    expect(w.left).toBe(0);
  });

  it('a long chat: its newest turns that fit, starting on a user turn, the current message last', () => {
    const turns = chat(201);
    const w = chatWindow(turns, 1500, 'anything', 300);
    expect(w.recent.at(-1)).toBe(turns.at(-1));
    expect(w.recent[0]!.role).toBe('user');
    expect(w.left + w.recent.length).toBe(201);
    expect(w.left).toBeGreaterThan(150);
  });

  it('recalls the earlier exchange that matches what is asked now', () => {
    const turns = [...chat(200), { id: 'q', role: 'user' as const, text: 'When does my sister Ingrid come?' }];
    const w = chatWindow(turns, 1500, 'When does my sister Ingrid come?', 300);
    expect(w.earlierTurnIds).toContain('c4');
    expect(w.earlier.join('\n')).toContain('Ingrid is coming at Christmas');
  });
});

describe('the gate before a reply', () => {
  const hit = (text: string): SearchHit => ({
    unit: { id: text, kind: 'memory', text, time: 0, sessionId: 's', sourceTurnIds: [] },
    score: { unitId: text, unitKind: 'memory', fused: 1 },
  });
  it('asks when what was found leaves the message open, not when it answers it', () => {
    expect(retrievalUnsure([hit('You bake sourdough bread on Sundays')], [], 3, new Map(), 'Do I bake sourdough on Sundays?')).toBe(false);
    expect(
      retrievalUnsure([hit('You bake sourdough bread on Sundays')], [], 3, new Map(), 'How is my sister Ingrid doing in Bergen?'),
    ).toBe(true);
    expect(retrievalUnsure([], [], 3, new Map(), 'How is Ingrid?')).toBe(true);
  });
});

describe('a shorter answer rather than none', () => {
  it('a reply whose instructions leave less than its output still goes, with what room is left', async () => {
    const llm = {
      window: {
        contextTokens: 1000,
        maxOutputTokens: 800,
        countTokens: async (m: ChatMessage[]) => m.reduce((a, x) => a + x.content.length, 0),
      },
    };
    const build = () => [{ role: 'system' as const, content: 'x'.repeat(600) }];
    const fitted = await fitPrompt({ llm, build, output: 800, minOutput: 128 });
    expect(fitted.maxTokens).toBe(400);
    await expect(fitPrompt({ llm, build, output: 800 })).rejects.toThrow(/too long for the model in use/);
    await expect(
      fitPrompt({ llm, build: () => [{ role: 'system', content: 'x'.repeat(900) }], output: 800, minOutput: 128 }),
    ).rejects.toThrow(/too long/);
  });
});

describe('an answer that may have more where the prompt leaves room (upTo)', () => {
  const llm = {
    window: {
      contextTokens: 2000,
      maxOutputTokens: 800,
      countTokens: async (m: ChatMessage[]) => m.reduce((a, x) => a + x.content.length, 0),
    },
  };
  const build = (tokens: number) => [{ role: 'user' as const, content: 'x'.repeat(Math.min(1500, tokens)) }];

  it('fits the prompt beside `output`, then calls with what is left up to `upTo`, never past the window', async () => {
    // The builder is given the room beside 200 tokens of answer, not beside the 800 the answer may have.
    const fitted = await fitPrompt({ llm, build, output: 200, upTo: 800 });
    expect(fitted.promptTokens).toBe(1500);
    expect(fitted.maxTokens).toBe(500);
    const small = await fitPrompt({ llm, build: () => [{ role: 'user', content: 'x'.repeat(100) }], output: 200, upTo: 800 });
    expect(small.maxTokens).toBe(800);
    for (const f of [fitted, small]) expect(f.promptTokens + f.maxTokens).toBeLessThanOrEqual(2000);
  });

  it('without it, the answer has `output` and the prompt the rest, as before', async () => {
    const fitted = await fitPrompt({ llm, build, output: 200 });
    expect(fitted.maxTokens).toBe(200);
    const whole = await fitPrompt({ llm, build, output: 800 });
    expect(whole.promptTokens).toBe(1200);
    expect(whole.maxTokens).toBe(800);
  });

  it('an estimated count keeps its slack beside the larger answer too', async () => {
    const estimated = { window: { contextTokens: 2000, maxOutputTokens: 800 } };
    const words = (tokens: number) => [{ role: 'user' as const, content: 'word '.repeat(Math.floor(tokens / 2)) }];
    const fitted = await fitPrompt({ llm: estimated, build: words, output: 200, upTo: 800 });
    expect(fitted.exact).toBe(false);
    expect(fitted.maxTokens).toBeGreaterThanOrEqual(200);
    expect(fitted.promptTokens + fitted.maxTokens + 16).toBeLessThanOrEqual(2000);
  });
});
