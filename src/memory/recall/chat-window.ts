// Chats of any length: a reply sees the newest turns of its chat that fit the model's window, and,
// of the turns before them, the exchanges that match what is being talked about now, found like
// memory (BM25 over the chat's own exchanges, fused by rank with their vectors' cosine where the
// search model has embedded them; docs/METHOD.md 1.6 and 1.10). A chat of 200 turns thus sends about
// as much as one of 20, and what was said at its start can still be recalled. A recalled exchange
// that a later one changed ("I live in Oslo", later "I moved from Oslo to Bergen") comes with that
// later one, the older marked as past and the newest as the current state.
import type { Id, Millis, Role } from '../types';
import { LexicalIndex } from '../retrieval/lexical';
import { reciprocalRankFusion } from '../retrieval/hybrid';
import { contentStems, readsAsChange, sharedWords } from '../ingest/change';
import { estimateTokens, MESSAGE_OVERHEAD } from '../fit/tokens';
import { promptDate } from '../text';
import { tokenize } from '../retrieval/tokenize';

export interface ChatTurn {
  id?: Id;
  role: Role;
  text: string;
  time?: Millis;
}

export interface ChatWindow<T extends ChatTurn> {
  /** The newest turns that fit, oldest first; always ends with the current message. */
  recent: T[];
  /** Exchanges from before `recent` chosen for the query, as prompt blocks, in chat order. */
  earlier: string[];
  /** The turns those blocks hold. */
  earlierTurnIds: Id[];
  /** Turns before `recent` (recalled or not). */
  left: number;
}

/** Words of one turn the search model embeds (and an earlier exchange shows of the person's): a long reply is cut, the user's words rarely are. */
const EXCERPT_WORDS = { user: 120, assistant: 60 } as const;
/**
 * Words of a reply an earlier exchange shows: its opening says what it answered, and the person's
 * words are what is recalled. A recalled exchange stays in a prompt that later turns extend: at 60
 * words a reply took most of an exchange's room (bench:prefill, BENCHMARKS.md).
 */
export const SHOWN_REPLY_WORDS = 30;
/** Exchanges recalled at most (each about a hundred tokens; the budget binds first). */
const MAX_EARLIER = 24;

/** The words of a turn the search model embeds (and an exchange block shows of the person's turns). */
export function excerptText(t: Pick<ChatTurn, 'role' | 'text'>): string {
  return cut(t.text, EXCERPT_WORDS[t.role]);
}

function cut(text: string, max: number): string {
  const words = text.trim().split(/\s+/);
  return `${words.slice(0, max).join(' ')}${words.length > max ? ' …' : ''}`;
}

function excerpt(t: ChatTurn): string {
  return `${t.role}: ${t.role === 'assistant' ? cut(t.text, SHOWN_REPLY_WORDS) : excerptText(t)}`;
}

/** The turns before the window, as exchanges: a user turn with what answered it. */
function exchanges<T extends ChatTurn>(turns: readonly T[]): T[][] {
  const out: T[][] = [];
  for (const t of turns) {
    const last = out[out.length - 1];
    if (last && t.role === 'assistant' && last.every((x) => x.role === 'user')) last.push(t);
    else out.push([t]);
  }
  return out;
}

export function exchangeBlock(turns: readonly ChatTurn[], mark?: string): string {
  const when = turns[0]?.time;
  const date = when !== undefined ? promptDate(when) : '';
  const head = date || mark ? `${[date, mark].filter(Boolean).join(' ')}:\n` : '';
  return `${head}${turns.map((t) => `  ${excerpt(t).replace(/\n+/g, ' ')}`).join('\n')}`;
}

/**
 * The newest turns of `dialogue` that fit `tokens` (the current message always), and, when older
 * turns are left out, up to `earlierTokens` of those that match `query`.
 */
export function chatWindow<T extends ChatTurn>(
  dialogue: readonly T[],
  tokens: number,
  query: string,
  earlierTokens: number,
): ChatWindow<T> {
  if (dialogue.length === 0) return { recent: [], earlier: [], earlierTurnIds: [], left: 0 };
  const cost = (t: ChatTurn) => MESSAGE_OVERHEAD + estimateTokens(t.text);
  const all = dialogue.reduce((a, t) => a + cost(t), 0);
  if (all <= tokens) return { recent: [...dialogue], earlier: [], earlierTurnIds: [], left: 0 };
  // Room for earlier exchanges (at most half) is taken from the window only when some turns are left out.
  const room = tokens - Math.min(earlierTokens, Math.floor(tokens / 2));
  let from = dialogue.length - 1;
  let used = cost(dialogue[from]!);
  while (from > 0 && used + cost(dialogue[from - 1]!) <= room) used += cost(dialogue[--from]!);
  // A window starting on a reply reads as if the model had spoken first: start on a user turn.
  while (from < dialogue.length - 1 && dialogue[from]!.role === 'assistant') used -= cost(dialogue[from++]!);
  const before = dialogue.slice(0, from);
  const spare = Math.min(earlierTokens, tokens - used);
  const picked = spare > 0 && query.trim() !== '' ? recallEarlier(before, query, spare).picked : [];
  return {
    recent: dialogue.slice(from),
    earlier: picked.map((x) => exchangeBlock(x.turns, x.mark)),
    earlierTurnIds: picked.flatMap((x) => x.turns.map((t) => t.id).filter((id): id is Id => id !== undefined)),
    left: before.length,
  };
}

/** What else in-chat recall may use beside the words of the message. */
export interface RecallOptions {
  /**
   * Turns of the chat after `before` that the prompt holds (the newest turns, the message itself
   * excluded): a change told there marks the recalled exchange it changed as past.
   */
  later?: readonly ChatTurn[];
  /** Vectors of the turns embedded so far (of `excerptText`), by turn id, and the message's own. */
  vectors?: ReadonlyMap<Id, Float32Array>;
  queryVector?: Float32Array;
}

export interface EarlierRecall {
  blocks: string[];
  turnIds: Id[];
  /** Strong matches left out for want of room. */
  missed: number;
  /**
   * How the exchanges were ranked: by meaning and words (vectors searched), by words with the
   * message embedded but none of the exchanges yet ('unread'), or by words only.
   */
  by: 'meaning' | 'words' | 'unread';
}

/**
 * Exchanges of `before` (turns not in the prompt) that match `query`, within `tokens`, as prompt
 * blocks in chat order; turns in `skip` (recalled already) are not recalled again.
 */
export function recallEarlierTurns(
  before: readonly ChatTurn[],
  query: string,
  tokens: number,
  skip: ReadonlySet<Id> = new Set(),
  options: RecallOptions = {},
): EarlierRecall {
  if (query.trim() === '') return { blocks: [], turnIds: [], missed: 0, by: 'words' };
  const { picked, missed, by } = recallEarlier(before, query, Math.max(0, tokens), { ...options, skip });
  return {
    blocks: picked.map((x) => exchangeBlock(x.turns, x.mark)),
    turnIds: picked.flatMap((x) => x.turns.map((t) => t.id).filter((id): id is Id => id !== undefined)),
    missed,
    by,
  };
}

/** Share of the query's content words an exchange must hold to be a strong match. */
const STRONG_COVERAGE = 0.5;
/**
 * How far above the chat's other exchanges (in standard deviations of their cosines to the message)
 * an exchange must be for the meaning side to rank it. Relative, not a fixed cosine: embedding
 * models differ in where unrelated texts sit (bge-small puts them near 0.45, others near 0), and
 * an exchange that stands out from the rest of its own chat is close in meaning whatever the model.
 */
export const MEANING_SPREAD = 2;
/** Exchanges with vectors needed before the spread says anything. */
const MEANING_MIN_EXCHANGES = 6;
/** Exchanges the meaning side ranks at most: each one it ranks competes for the room. */
const MEANING_DEPTH = 8;

/** Whether an exchange holds at least half of the query's content words (and two at least). */
function strong(asked: ReadonlySet<string>, text: string): boolean {
  if (asked.size < 2) return false;
  const have = new Set(tokenize(text));
  let n = 0;
  for (const w of asked) if (have.has(w)) n++;
  return n >= 2 && n >= STRONG_COVERAGE * asked.size;
}

const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

/** The exchanges that stand out from the rest of the chat by their cosine to the message, closest first. */
function closeInMeaning(scored: ReadonlyArray<{ id: string; score: number }>): string[] {
  if (scored.length < MEANING_MIN_EXCHANGES) return [];
  const mean = scored.reduce((a, x) => a + x.score, 0) / scored.length;
  const sd = Math.sqrt(scored.reduce((a, x) => a + (x.score - mean) ** 2, 0) / scored.length);
  return scored
    .filter((x) => x.score >= mean + MEANING_SPREAD * sd && sd > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, MEANING_DEPTH)
    .map((x) => x.id);
}

/** The person's words of an exchange. */
const userWords = (g: readonly ChatTurn[]) =>
  g
    .filter((t) => t.role === 'user')
    .map((t) => t.text)
    .join('\n');

/**
 * Whether the person's words `later` tell a change of what they said in `earlier`: a sentence that
 * reads as a change (change.ts: "moved", "no longer", "left", "switched"…, not the looser "now",
 * "again", "started"), is not a question, and
 * shares a content word with it that `specific` accepts (in a chat, a word said in few exchanges:
 * "Oslo", not "family"). "I moved from Oslo to Bergen" changes "I live in Oslo"; "Should I visit
 * Oslo again?" and "I love the fjords around Oslo" do not.
 */
export function tellsChangeOf(earlier: string, later: string, specific: (stem: string) => boolean = () => true): boolean {
  if (earlier.trim() === '') return false;
  return later
    .split(/(?<=[.!?])\s+|\n+/)
    .some((s) => !s.trim().endsWith('?') && readsAsChange(s) && TOLD_CHANGE.test(s) && sharedWords(earlier, s).some(specific));
}

/**
 * Of the words that read as a change (change.ts), those that say it in a chat's own words: "now",
 * "again", "started", "became" and "instead" are too common in conversation to retire anything.
 */
const TOLD_CHANGE =
  /\b(mov(e|ed|es|ing)|relocat\w*|no longer|any ?more|stopp(ed|ing)|quit(s|ting)?|left|switch(ed|es|ing)|gave up|give up|giving up|retir(ed|es|ing)|sold|broke up|divorced|cancell?ed|resigned|fired|replac(ed|es|ing)|used to)\b/i;

/** Best matches whose later changes are recalled with them, before any further match. */
const CHAIN_FIRST = 3;
/** Share of a chat's exchanges a word may be said in and still tie two of them as one thing changing. */
const SPECIFIC_SHARE = 0.03;

interface Picked<T> {
  turns: T[];
  mark?: string;
}

function recallEarlier<T extends ChatTurn>(
  before: readonly T[],
  query: string,
  tokens: number,
  options: RecallOptions & { skip?: ReadonlySet<Id> } = {},
): { picked: Picked<T>[]; missed: number; by: EarlierRecall['by'] } {
  const groups = exchanges(before);
  const skip = options.skip ?? new Set<Id>();
  // An exchange already in the prompt (recalled for an earlier message) is not recalled again, but
  // a change it tells still marks what it changed.
  const inPrompt = groups.map((g) => g.some((t) => t.id !== undefined && skip.has(t.id)));
  const asked = new Set(tokenize(query));
  let missed = 0;
  let tookStrong = false;
  const index = new LexicalIndex();
  groups.forEach((g, i) => inPrompt[i] || index.add(String(i), g.map((t) => t.text).join('\n')));
  const lexical = index.search(query, MAX_EARLIER * 2).map((h) => h.id);
  // The meaning side: each exchange by its closest embedded turn, only those close enough.
  const { vectors, queryVector } = options;
  const scored: Array<{ id: string; score: number }> = [];
  if (queryVector && vectors && vectors.size > 0) {
    groups.forEach((g, i) => {
      if (inPrompt[i]) return;
      let best = -Infinity;
      for (const t of g) {
        const v = t.id !== undefined ? vectors.get(t.id) : undefined;
        if (v && v.length === queryVector.length) best = Math.max(best, dot(v, queryVector));
      }
      if (best > -Infinity) scored.push({ id: String(i), score: best });
    });
  }
  const byMeaning = scored.length >= MEANING_MIN_EXCHANGES;
  const meaning = closeInMeaning(scored);
  // Fused by rank as memory's hybrid search fuses its two sides (hybrid.ts): words alone where no vector was searched.
  const fused = reciprocalRankFusion([{ ids: lexical }, { ids: meaning }]);
  const hits = [...fused.entries()].sort((a, b) => b[1] - a[1] || Number(a[0]) - Number(b[0])).map(([id]) => Number(id));

  // What changed each exchange later: the nearest later exchange whose person's words tell a change of it.
  const said = groups.map(userWords);
  const laterSaid = (options.later ?? []).filter((t) => t.role === 'user').map((t) => t.text);
  // A word said in many exchanges ("family", "work") ties nothing: only specific ones do.
  const df = new Map<string, number>();
  for (const text of [...said, ...laterSaid]) for (const w of contentStems(text)) df.set(w, (df.get(w) ?? 0) + 1);
  const most = Math.max(3, Math.ceil(SPECIFIC_SHARE * (said.length + laterSaid.length)));
  const specific = (w: string) => (df.get(w) ?? 0) <= most;
  const nextMemo = new Map<number, number | undefined>();
  const next = (i: number): number | undefined => {
    if (!nextMemo.has(i)) {
      let found: number | undefined;
      for (let j = i + 1; j < groups.length && found === undefined; j++) if (tellsChangeOf(said[i]!, said[j]!, specific)) found = j;
      nextMemo.set(i, found);
    }
    return nextMemo.get(i);
  };
  const changedInPrompt = (i: number) => laterSaid.some((text) => tellsChangeOf(said[i]!, text, specific));

  const chosen = new Set<number>();
  let used = 0;
  // A block's cost with the mark it will carry (a changed exchange, or one of a chain of changes).
  const cost = (i: number, marked = next(i) !== undefined || changedInPrompt(i)) =>
    estimateTokens(exchangeBlock(groups[i]!, marked ? PAST_MARK : undefined)) + 2;
  let picks = 0;
  for (const i of hits) {
    if (chosen.size >= MAX_EARLIER) break;
    if (chosen.has(i)) continue;
    // With the best matches, the later exchanges that changed them, so that the newest state is
    // recalled too; further matches come alone (marked as changed later) and get their changes
    // only where room is left at the end: each exchange a change brings takes a match's room.
    const chain: number[] = [];
    for (let j: number | undefined = i; j !== undefined && !chain.includes(j); j = next(j))
      if (!chosen.has(j) && !inPrompt[j]) chain.push(j);
    const isStrong = strong(asked, groups[i]!.map((t) => t.text).join('\n'));
    const whole = chain.reduce((a, j, k) => a + cost(j, k > 0 || undefined), 0);
    const take = picks < CHAIN_FIRST && used + whole <= tokens ? chain : chain.slice(0, 1);
    const c = take === chain ? whole : cost(i);
    if (used + c > tokens) {
      if (isStrong) missed++;
      continue;
    }
    if (isStrong) tookStrong = true;
    picks++;
    used += c;
    for (const j of take) chosen.add(j);
  }
  // Room left: the changes of the further matches.
  for (const i of [...chosen].sort((a, b) => a - b)) {
    const chain: number[] = [];
    for (let j = next(i); j !== undefined && !chain.includes(j); j = next(j)) if (!chosen.has(j) && !inPrompt[j]) chain.push(j);
    const c = chain.reduce((a, j) => a + cost(j, true), 0);
    if (chain.length === 0 || used + c > tokens || chosen.size + chain.length > MAX_EARLIER) continue;
    used += c;
    for (const j of chain) chosen.add(j);
  }
  const order = [...chosen].sort((a, b) => a - b);
  const past = (i: number) => next(i) !== undefined || changedInPrompt(i);
  const target = new Set(order.map((i) => next(i)).filter((j): j is number => j !== undefined));
  const picked = order.map((i) => ({
    turns: groups[i]!,
    ...(past(i) ? { mark: PAST_MARK } : target.has(i) ? { mark: LATEST_MARK } : {}),
  }));
  // Strong matches all left out for room: worth moving the window to make room for one.
  return { picked, missed: tookStrong ? 0 : missed, by: byMeaning ? 'meaning' : queryVector ? 'unread' : 'words' };
}

/** Marks of an earlier exchange that a later one changed, and of the later one. */
export const PAST_MARK = '(no longer current: changed later in this chat)';
export const LATEST_MARK = '(the latest on this)';
