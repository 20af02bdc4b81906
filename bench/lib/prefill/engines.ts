// bench:prefill's model: the stand-in's inner model writes a reply of 200 to 300 words, seeded by
// the person's message (the same message gets the same reply under every engine and window), and
// answers the JSON calls as the model double does (a memory per user line, the self-reflection by
// the rule of bench:calls). An EngineTee sends each call through several enforced engines that
// differ only in their cache rule, so every rule reads the very same sequence of prompts.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';
import { ModelDouble } from '../../../tests/support/model-double';
import { seeded, type EnforcedModel } from '../../../tests/support/standin';

const WORDS = (
  'the a to and of in that it for on with as was at this but they have be you we not so all about one some time ' +
  'day week walk garden plan idea friend family home work rest sleep morning evening weather rain light small good ' +
  'quiet long short easy hard kind gentle careful slowly together later again often sometimes maybe perhaps really ' +
  'think feel know hope try find keep start finish help make take give bring remember notice enjoy wonder matter ' +
  'sounds seems worth nice lovely simple useful honest clear calm busy tired happy proud curious patient steady'
).split(' ');

const hash = (text: string): number => {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
};

/** A reply of 200 to 300 words in sentences, with a few words of the message it answers. */
export function scriptedReply(message: string, seed: number): string {
  const rand = seeded(hash(`${seed}|${message}`));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const echo = message.match(/[A-Za-z]{5,}/g) ?? [];
  const target = 200 + Math.floor(rand() * 101);
  const sentences: string[] = [];
  let words = 0;
  while (words < target) {
    const n = Math.min(target - words, 8 + Math.floor(rand() * 9));
    const s = Array.from({ length: n }, () => (echo.length > 0 && rand() < 0.08 ? pick(echo).toLowerCase() : pick(WORDS)));
    s[0] = s[0]!.charAt(0).toUpperCase() + s[0]!.slice(1);
    sentences.push(`${s.join(' ')}.`);
    words += n;
  }
  return sentences.join(' ');
}

export class Replier implements LanguageModel {
  readonly modelId = 'prefill-replier';
  private readonly double = new ModelDouble({ judge: true, traits: true });
  constructor(private readonly seed: number) {}

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    const last = messages.findLast((m) => m.role === 'user')?.content ?? '';
    const reply = scriptedReply(last, this.seed);
    options.onToken?.(reply);
    return reply;
  }

  json(messages: ChatMessage[], schema: JsonSchema): Promise<string> {
    return this.double.json(messages, schema);
  }
}

/** Sends every call to each engine in turn (their windows must agree); answers with the first's. */
export class EngineTee implements LanguageModel {
  constructor(readonly engines: readonly EnforcedModel[]) {
    if (engines.length === 0) throw new Error('EngineTee needs an engine');
  }

  get modelId(): string {
    return this.engines[0]!.modelId;
  }

  get window() {
    return this.engines[0]!.window;
  }

  chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.each((e, first) => e.chat(messages, first ? options : { ...options, onToken: undefined }));
  }

  json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    return this.each((e, first) => e.json(messages, schema, first ? options : { ...options, onToken: undefined }));
  }

  private async each(call: (e: EnforcedModel, first: boolean) => Promise<string>): Promise<string> {
    const results: PromiseSettledResult<string>[] = [];
    // One after another, as each engine would serve them; all see the call even when one refuses.
    for (const [i, e] of this.engines.entries()) results.push(await call(e, i === 0).then(ok, ko));
    const first = results[0]!;
    if (first.status === 'rejected') throw first.reason;
    if (results.some((r) => r.status !== 'fulfilled' || r.value !== first.value))
      throw new Error('engines that differ only in their cache rule answered differently');
    return first.value;
  }
}

const ok = (value: string): PromiseFulfilledResult<string> => ({ status: 'fulfilled', value });
const ko = (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason });
