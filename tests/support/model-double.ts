// TEST DOUBLE of a small model that does its job, for Node tests and benchmarks: it answers each
// of the memory pipeline's JSON calls by its schema title as a competent model would (a memory per
// user line it is shown, labels, notes, questions, verdicts) and chats with a fixed sentence. Wrap
// it with enforce() (tests/support/standin) to hold it to a real engine's window and output cap:
// then it writes only what the engine would let it write.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../src/ports';

export interface DoubleCall {
  kind: 'chat' | 'json';
  title?: string;
  messages: ChatMessage[];
}

interface SchemaShape {
  properties?: Record<string, { maxItems?: number }>;
}

const maxItems = (schema: JsonSchema, key: string, fallback: number) => (schema as SchemaShape).properties?.[key]?.maxItems ?? fallback;

export class ModelDouble implements LanguageModel {
  readonly modelId = 'model-double';
  readonly calls: DoubleCall[] = [];
  /** The reply every chat call writes (a long one shows output caps at work). */
  constructor(private readonly reply = 'Thanks for telling me; I will keep that in mind.') {}

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
        return JSON.stringify(summary(text, maxItems(schema, 'events', 40)));
      case 'relation_labels': {
        const n = (text.match(/^Candidate \d+/gm) ?? []).length;
        return JSON.stringify({ labels: Array.from({ length: n }, (_, i) => ({ candidate: i + 1, relation: 'SameTopic' })) });
      }
      case 'timeline_notes':
      case 'memory_reflection': {
        const n = maxItems(schema, 'notes', 0);
        return JSON.stringify({
          notes: Array.from({ length: n }, (_, i) => ({ timeline: i + 1, note: 'What happened, and when.' })),
          enough: true,
          keywords: [],
        });
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
function summary(text: string, max: number) {
  const events: Array<{ text: string; about: string; turns: string[] }> = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/^(T\d+)(?: \(part \d+ of \d+\))? \[user[^\]]*\]: (.+)$/gm)) {
    if (seen.has(m[1]!) || events.length >= max) continue;
    seen.add(m[1]!);
    events.push({ text: `You said: ${m[2]!.split(/\s+/).slice(0, 12).join(' ')}`, about: 'user', turns: [m[1]!] });
  }
  return { events, userTraits: [], assistantTraits: [], notes: [], remember: [], topics: [] };
}
