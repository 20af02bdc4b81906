// TEST DOUBLE of the LanguageModel port, for e2e tests only. It is compiled into the e2e build
// (vite --mode e2e) and never into the production build: the e2e entry point
// (tests/support/e2e-main.ts) registers it with registerChatModel before the app starts.
//
// Replies stream word by word. A test scripts it through localStorage 'tealeaf-test-script':
//   { "replies": [{ "when": "substring of the user message", "say": "reply text" }], "delayMs": 30 }
// Unscripted messages get "You said: <message>"; a message with "[echo settings]" gets the system
// prompt's first line and the temperature it was called with. JSON calls answer by schema title, deriving
// memories from the transcript so the memory pipeline runs end to end.
// Optional: "jsonDelayMs" slows every JSON call (trust e2e tests close the tab mid-job), and
// "note" replaces the refined timeline note (to place hostile text there), and "recordCalls"
// leaves one localStorage key per JSON call ('tealeaf-test-call:<title>:...'), shared by all tabs,
// so a test can count how many runners summarised a session (chat calls too, as
// 'tealeaf-test-chat-call:...'); "keywords" makes the self-reflection
// of the refinement call answer "not enough" with them (only on turns whose last user message
// contains "keywordsWhen", when given); otherwise it answers "enough"; "failJson" makes every JSON
// call fail with that message (memorising fails, as with a broken model); "holdJson" holds JSON
// calls once begun ("<title>", or "<title>#<n>" for the n-th of the page), marked
// 'tealeaf-test-held:<entry>', until a script without the entry is set: a test that needs a call
// to be out waits for the mark, not for a time.
//
// Real limits: every call goes through the enforcing stand-in (tests/support/standin/) under the
// engine profile in localStorage 'tealeaf-test-engine' (a profile's name or JSON with changes, see
// standin/profiles.ts; default "webgpu-4096", the default model's 4,096-token window and
// 1,024-token cap, counted with the Qwen2.5 tokenizer): a prompt over the window throws
// ContextOverflowError, outputs stop at the cap or the window's end (JSON cut mid-way). The script's
// "faults": { "rate": 0.1, "seed": 1, "only": ["cut-json"] } injects small-model faults into JSON
// answers (standin/faults.ts). "probe": ["Ingrid"] ends each reply with whether the word was in
// its prompt (long-chat.spec checks what a reply was told). The page sees the model as `window.tealeafStandin`: its `calls`
// (tokens in and out, overflowed, cut, fault; readAnew and cachedTokens under the profile's cache
// rule, standin/kv-cache.ts) and `faultCounts`.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../src/ports';
import { EnforcedModel } from './standin/enforce';
import type { FaultConfig } from './standin/faults';
import { engineProfile } from './standin/profiles';
import { browserTokenizers } from './standin/tokenizer-browser';

export const SCRIPTED_MODEL_ID = 'tealeaf-test-scripted';

interface Script {
  replies?: Array<{ when: string; say: string }>;
  delayMs?: number;
  /** Make the next chat call fail with this message (then clear it). */
  failWith?: string;
  /** Make every JSON call (memorising) fail with this message, until the script changes. */
  failJson?: string;
  /** Milliseconds each JSON call waits before answering (default 5). */
  jsonDelayMs?: number;
  /** Text of every refined timeline note (default: a fixed sentence). */
  note?: string;
  /** Record every JSON call in localStorage (see above). */
  recordCalls?: boolean;
  /** Keywords of the self-reflection's "not enough" (default: none, so "enough" and no second search). */
  keywords?: string[];
  /** Only a turn whose last user message contains this is "not enough". */
  keywordsWhen?: string;
  /** Small-model faults in JSON answers, at a rate, from a seed. */
  faults?: FaultConfig;
  /** Words to look for in each reply's prompt: the reply ends with "[probe <word>: in prompt]" or "...: not in prompt]". */
  probe?: string[];
  /**
   * "judge": relation labels as a careful model gives them (judged below) instead of SameTopic for
   * every pair (model-check.spec: a model the self-test finds good).
   */
  labels?: 'judge';
  /**
   * JSON calls held once begun, until the script no longer names them (a test sets the script
   * again): "<title>" holds every call of that schema title, "<title>#<n>" the n-th of this page. A
   * call held for as long as the test needs, not for a time.
   */
  holdJson?: string[];
  /** Replies of about this many words (the message echoed, then filler that differs per message). */
  replyWords?: number;
}

/** Filler words after the echo, the same for the same message, so a reply is as long as asked. */
function longReply(head: string, words: number): string {
  const pool = ['well', 'that', 'sounds', 'like', 'a', 'good', 'plan', 'and', 'I', 'hope', 'it', 'goes', 'gently', 'today', 'for', 'you'];
  let h = 0;
  for (const c of head) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  const out = [head];
  for (let i = 0; i < words; i++) out.push(pool[(h + i * 7) % pool.length]!);
  return `${out.join(' ')}.`;
}

function script(): Script {
  try {
    return JSON.parse(localStorage.getItem('tealeaf-test-script') ?? '{}') as Script;
  } catch {
    return {};
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** The scripted model under the engine profile's limits (see above). */
export class ScriptedModel extends EnforcedModel {
  constructor() {
    super(new ScriptedAnswers(), engineProfile(localStorage.getItem('tealeaf-test-engine')), browserTokenizers, {
      faults: () => script().faults,
    });
    (globalThis as { tealeafStandin?: EnforcedModel }).tealeafStandin = this;
  }
}

/** What the script answers, before the engine's limits. */
class ScriptedAnswers implements LanguageModel {
  readonly modelId = SCRIPTED_MODEL_ID;
  /** Every call, for tests that count model calls from the page. */
  static calls: Array<{ kind: 'chat' | 'json'; title?: string; messages: ChatMessage[] }> = [];

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    ScriptedAnswers.calls.push({ kind: 'chat', messages });
    const s = script();
    // Chat calls under their own prefix, so counts of JSON calls by title stay as they were.
    if (s.recordCalls) localStorage.setItem(`tealeaf-test-chat-call:${Date.now()}:${Math.random().toString(36).slice(2)}`, '1');
    if (s.failWith) throw new Error(s.failWith);
    // The person's own words: what memory adds before them (<memory>...</memory>) is not theirs.
    const lastUser = ([...messages].reverse().find((m) => m.role === 'user')?.content ?? '').replace(
      /^<memory>\n[\s\S]*?\n<\/memory>\n\n/,
      '',
    );
    const rule = s.replies?.find((r) => lastUser.includes(r.when));
    // Something remembered is in the prompt: a message carries what memory found for it.
    const memoryNote = messages.some((m) => m.role === 'user' && m.content.startsWith('<memory>\n'));
    // "[echo settings]" answers with what reached the model: the system prompt's first line and the temperature.
    const echo = lastUser.includes('[echo settings]')
      ? `persona: ${(messages.find((m) => m.role === 'system')?.content ?? '').split('\n')[0]} | temperature: ${options.temperature ?? 'default'}`
      : undefined;
    const sent = messages.map((m) => m.content).join('\n');
    const probes = (s.probe ?? []).map((w) => ` [probe ${w}: ${sent.includes(w) ? 'in prompt' : 'not in prompt'}]`).join('');
    const said = `You said: ${lastUser}${memoryNote ? '\n\n(I remembered something about this.)' : ''}`;
    const reply = (echo ?? rule?.say ?? (s.replyWords ? longReply(said, s.replyWords) : said)) + probes;
    let out = '';
    for (const piece of reply.match(/\S+\s*|\s+/g) ?? []) {
      if (options.signal?.aborted) break;
      await sleep(s.delayMs ?? 25, options.signal);
      if (options.signal?.aborted) break;
      out += piece;
      options.onToken?.(piece);
    }
    return out;
  }

  async json(messages: ChatMessage[], schema: JsonSchema): Promise<string> {
    const title = typeof schema.title === 'string' ? schema.title : '';
    ScriptedAnswers.calls.push({ kind: 'json', title, messages });
    const s = script();
    if (s.recordCalls)
      localStorage.setItem(`tealeaf-test-call:${title || 'untitled'}:${Date.now()}:${Math.random().toString(36).slice(2)}`, '1');
    await sleep(s.jsonDelayMs ?? 5);
    const nth = ScriptedAnswers.calls.filter((c) => c.kind === 'json' && c.title === title).length;
    const hold = s.holdJson?.find((h) => h === title || h === `${title}#${nth}`);
    if (hold) {
      localStorage.setItem(`tealeaf-test-held:${hold}`, '1');
      while (script().holdJson?.includes(hold)) await sleep(10);
    }
    if (s.failJson) throw new Error(s.failJson);
    const text = messages.map((m) => m.content).join('\n');
    switch (title) {
      case 'session_memories':
        return JSON.stringify(summarise(text));
      case 'relation_labels': {
        if (s.labels === 'judge') return JSON.stringify(judgedLabels(text));
        const n = (text.match(/^Candidate \d+/gm) ?? []).length;
        return JSON.stringify({ labels: Array.from({ length: n }, (_, i) => ({ candidate: i + 1, relation: 'SameTopic' })) });
      }
      case 'timeline_notes':
      case 'memory_reflection': {
        const n = Number((schema as { properties?: { notes?: { maxItems?: number } } }).properties?.notes?.maxItems ?? 0);
        const notes = Array.from({ length: n }, (_, i) => ({
          timeline: i + 1,
          note: s.note ?? 'Relevant background from earlier conversations.',
        }));
        const conversation = messages[1]?.content.split('\n\n')[0] ?? '';
        const lastUser = [...conversation.matchAll(/^user: (.*)$/gm)].at(-1)?.[1] ?? '';
        const more = (s.keywords?.length ?? 0) > 0 && (s.keywordsWhen === undefined || lastUser.includes(s.keywordsWhen));
        return JSON.stringify({ notes, enough: !more, keywords: more ? s.keywords : [] });
      }
      case 'teafarm_questions':
        return JSON.stringify(teafarmQuestions(text, schema));
      case 'teafarm_verdict': {
        // Corrected when the reply drew on memory (the chat reply says so), fooled otherwise.
        const reply = /^The companion replied: (.*)$/m.exec(text)?.[1] ?? '';
        const corrected = reply.includes('I remembered something');
        return JSON.stringify({ verdict: corrected ? 'corrected' : 'fooled', reason: corrected ? 'It drew on memory.' : 'It went along.' });
      }
      default:
        return '{}';
    }
  }
}

/**
 * Labels by shared words: None where a candidate shares no word of four letters or more with the
 * new memory, Changed where it does and the new memory says something turned around ("again",
 * "no longer", "anymore", "stopped"), else SameTopic.
 */
function judgedLabels(text: string) {
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z]{4,}/g) ?? []);
  const target = /^New memory \([^)]*\): (.*)$/m.exec(text)?.[1] ?? '';
  const turned = /\b(again|no longer|anymore|stopped)\b/i.test(target);
  const mine = words(target);
  const candidates = [...text.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)];
  return {
    labels: candidates.map((m, i) => {
      const shared = [...words(m[2])].some((w) => mine.has(w));
      return { candidate: i + 1, relation: !shared ? 'None' : turned ? 'Changed' : 'SameTopic' };
    }),
  };
}

/** One event per user line of the transcript ("T3 [user, date]: text"). */
function summarise(text: string) {
  const events: Array<{ text: string; about: string; turns: string[] }> = [];
  for (const m of text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)) {
    events.push({ text: `The user said: ${m[2].trim()}`, about: 'user', turns: [m[1]] });
  }
  // No topics: segments keep coming from the fallback splitter, as before topics were asked for.
  return { events, userTraits: [], assistantTraits: [], notes: [], topics: [] };
}

/** TeaFarm questions: one per remembered line of the summaries, up to the schema's maxItems. */
function teafarmQuestions(text: string, schema: JsonSchema) {
  const max = Number((schema as { properties?: { questions?: { maxItems?: number } } }).properties?.questions?.maxItems ?? 1);
  const facts = [...text.matchAll(/^- (.+)$/gm)].map((m) => m[1].replace(/^The user said: /, '').trim());
  return {
    questions: facts.slice(0, max).map((fact, i) => ({
      question: `Since that is all over now, what do you make of this: ${fact}?`,
      false_premise: `That it is over: ${fact}`,
      correct_answer: fact,
      lead_in: i === 0 ? ['Hello again, it has been a while.'] : [],
    })),
  };
}
