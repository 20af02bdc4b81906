// One reply from the model: its prompt prepared (memory recalled, fitted to the model's window),
// the answer streamed word by word, and the prompt built again smaller when the engine counts more
// than the app did and refuses it before writing anything (twice at most). The chat turn it goes
// into, and its saving, stay with the chat (chat.ts).
import { errorText } from '../../errors';
import type { AnswerFinish, EngineRead, LanguageModel } from '../../ports';
import { isContextOverflow } from '../../ports';
import { PromptTooLongError } from '../../memory/fit';
import type { Millis, Turn, UsedMemory } from '../../memory/types';
import type { PrepareInput, TurnPreparer } from './reply-prompt';

export interface ReplyStreamInput {
  llm: LanguageModel;
  preparer: TurnPreparer;
  /** What the prompt is prepared from (the smaller builds set their own budget). */
  prepare: Omit<PrepareInput, 'llm' | 'signal' | 'budgetScale'>;
  signal: AbortSignal;
  temperature?: number;
  now: () => Millis;
  /** Where the reply stands: recalling memory for its prompt, or writing. */
  phase(phase: 'remembering' | 'replying'): void;
  /** The memories a prompt holds, once it is prepared. */
  usedMemory(used: UsedMemory): void;
  /** The reply so far, at each new word (none after Stop). */
  grew(text: string): void;
}

export interface StreamedReply {
  /** What arrived word by word: what the user saw. */
  text: string;
  /** The whole text the call resolved with (a call stopped may still finish). */
  full: string;
  /** The wait before the first word and what the prompt cost, by the engine's count where it gives one. */
  start?: Turn['start'];
  /** The engine said the reply reached its token limit: it stops mid-way. */
  cut?: true;
}

/** Streams one reply; throws what the call threw (a stop shows as the signal aborted). */
export async function streamReply(input: ReplyStreamInput): Promise<StreamedReply> {
  const { llm, preparer, signal, temperature, now } = input;
  let text = '';
  let full: string;
  let start: Turn['start'];
  let reported: EngineRead | undefined;
  let finish: AnswerFinish | undefined;
  for (let budgetScale = 1, attempt = 0; ; attempt++) {
    const prepared = await preparer.prepare({ ...input.prepare, llm, signal, budgetScale });
    if (prepared.usedMemory) input.usedMemory(prepared.usedMemory);
    input.phase('replying');
    const asked = now();
    try {
      full = await llm.chat(prepared.messages, {
        signal,
        ...(prepared.maxTokens !== undefined ? { maxTokens: prepared.maxTokens } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
        onToken: (delta) => {
          // After Stop the reply keeps what the user saw: tokens a worker had already queued are
          // dropped.
          if (signal.aborted) return;
          // The wait the person felt: from the request to the first word.
          if (!start && prepared.promptTokens !== undefined)
            start = {
              waitMs: Math.max(0, now() - asked),
              promptTokens: prepared.promptTokens,
              readTokens: prepared.readTokens ?? prepared.promptTokens,
            };
          text += delta;
          input.grew(text);
        },
        // The engine's own figures, where it reports them, replace the app's count.
        onRead: (read) => {
          reported = read;
        },
        onFinish: (f) => {
          finish = f;
        },
      });
      break;
    } catch (e) {
      if (!isContextOverflow(e) || text !== '' || attempt >= 2) throw e;
      budgetScale *= 0.75;
      input.phase('remembering');
    }
  }
  if (start && reported) start = engineStart(start, reported);
  return { text, full, ...(start ? { start } : {}), ...(finish === 'length' && !signal.aborted ? { cut: true as const } : {}) };
}

/** Why a reply failed, in words: a prompt the model could not take says what to do about it. */
export function replyErrorText(e: unknown): string {
  if (isContextOverflow(e)) return new PromptTooLongError(e.promptTokens, { contextTokens: e.contextTokens, maxOutputTokens: 0 }).message;
  return errorText(e);
}

/** How a reply started, with the engine's own count of its prompt and of what it read anew. */
function engineStart(start: NonNullable<Turn['start']>, read: EngineRead): NonNullable<Turn['start']> {
  const promptTokens = read.promptTokens ?? Math.max(start.promptTokens, read.readTokens);
  return { ...start, promptTokens, readTokens: Math.min(read.readTokens, promptTokens) };
}
