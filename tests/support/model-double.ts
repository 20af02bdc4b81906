// TEST DOUBLE of a small model that does its job, for Node tests and benchmarks: it answers each
// of the memory pipeline's JSON calls by its schema title as a competent model would (a memory per
// user line it is shown, labels, notes, questions, verdicts) and chats with a fixed sentence. Wrap
// it with enforce() (tests/support/standin) to hold it to a real engine's window and output cap:
// then it writes only what the engine would let it write.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../src/ports';
import { contentWords, wordOverlap } from '../../src/memory/text';

export interface DoubleCall {
  kind: 'chat' | 'json';
  title?: string;
  messages: ChatMessage[];
}

interface SchemaShape {
  properties?: Record<string, { maxItems?: number }>;
}

const maxItems = (schema: JsonSchema, key: string, fallback: number) => (schema as SchemaShape).properties?.[key]?.maxItems ?? fallback;

export interface DoubleOptions {
  /** The reply every chat call writes (a long one shows output caps at work). */
  reply?: string;
  /**
   * Summaries also hold a user trait for each user line that states a liking or a circumstance
   * ("I love ...", "I work as ..."), so that labels can retire traits.
   */
  traits?: boolean;
  /**
   * Relation labels by shared words (SameTopic at a Dice overlap of 0.3, else None) instead of
   * SameTopic for every candidate; and the self-reflection judged by a rule: "enough" when at least
   * half of the content words of the last user message occur in what the call was shown, else "not
   * enough" with the missing words as keywords (the rule of bench:calls).
   */
  judge?: boolean;
}

const TRAIT = /\b(I (?:love|like|prefer|enjoy|hate)|I(?:'m| am) (?:a|an)|I work as|I live in)\b/i;

export class ModelDouble implements LanguageModel {
  readonly modelId = 'model-double';
  readonly calls: DoubleCall[] = [];
  private readonly reply: string;
  constructor(private readonly options: DoubleOptions = {}) {
    this.reply = options.reply ?? 'Thanks for telling me; I will keep that in mind.';
  }

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    this.calls.push({ kind: 'chat', messages });
    options.onToken?.(this.reply);
    return this.reply;
  }

  async json(messages: ChatMessage[], schema: JsonSchema): Promise<string> {
    const title = typeof schema.title === 'string' ? schema.title : '';
    this.calls.push({ kind: 'json', title, messages });
    const text = messages.map((m) => m.content).join('\n');
    switch (title) {
      case 'session_memories':
        return JSON.stringify(summary(text, maxItems(schema, 'events', 40), this.options.traits === true));
      case 'relation_labels': {
        const target = /^New memory \([^)]*\): (.*)$/m.exec(text)?.[1] ?? '';
        const candidates = [...text.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)];
        return JSON.stringify({
          labels: candidates.map((m, i) => ({
            candidate: i + 1,
            relation: !this.options.judge || wordOverlap(m[2]!, target) >= 0.3 ? 'SameTopic' : 'None',
          })),
        });
      }
      case 'timeline_notes':
      case 'memory_reflection': {
        const n = maxItems(schema, 'notes', 0);
        const notes = Array.from({ length: n }, (_, i) => ({ timeline: i + 1, note: 'What happened, and when.' }));
        if (!this.options.judge) return JSON.stringify({ notes, enough: true, keywords: [] });
        const [conversation = '', ...found] = (messages[1]?.content ?? '').split('\n\n');
        const asked = [...new Set(contentWords([...conversation.matchAll(/^user: (.*)$/gm)].at(-1)?.[1] ?? ''))];
        const shown = new Set(contentWords(found.join('\n')));
        const missing = asked.filter((w) => !shown.has(w));
        const enough = missing.length * 2 <= asked.length;
        return JSON.stringify({ notes, enough, keywords: enough ? [] : missing.slice(0, 8) });
      }
      case 'teafarm_questions': {
        const facts = [...text.matchAll(/^- (.+)$/gm)].map((m) => m[1]!);
        return JSON.stringify({
          questions: facts.slice(0, maxItems(schema, 'questions', 3)).map((f) => ({
            question: `Since that is over now, what about this: ${f}?`,
            false_premise: `That it is over: ${f}`,
            correct_answer: f,
            lead_in: ['Hello again.'],
          })),
        });
      }
      case 'teafarm_verdict':
        return JSON.stringify({ verdict: 'corrected', reason: 'It pointed to what is true.' });
      default:
        return '{}';
    }
  }
}

/**
 * One event per user line shown (at most `max`), naming the line's first words so a test can tell
 * which line a memory came from; the turn labels as the prompt gives them.
 */
function summary(text: string, max: number, withTraits: boolean) {
  const events: Array<{ text: string; about: string; turns: string[] }> = [];
  const userTraits: Array<{ text: string; turns: string[] }> = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/^(T\d+)(?: \(part \d+ of \d+\))? \[[^\]]*user[^\]]*\]: (.+)$/gm)) {
    if (seen.has(m[1]!) || events.length >= max) continue;
    seen.add(m[1]!);
    const words = m[2]!.split(/\s+/).slice(0, 16).join(' ');
    events.push({ text: `You said: ${words}`, about: 'user', turns: [m[1]!] });
    if (withTraits && TRAIT.test(m[2]!) && userTraits.length < Math.ceil(max / 2))
      userTraits.push({ text: `About you: ${words}`, turns: [m[1]!] });
  }
  return { events, userTraits, assistantTraits: [], notes: [], remember: [], topics: [] };
}
