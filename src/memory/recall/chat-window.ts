// Chats of any length: a reply sees the newest turns of its chat that fit the model's window, and,
// of the turns before them, the exchanges that match what is being talked about now, found like
// memory (BM25 over the chat's own exchanges; docs/METHOD.md 1.6). A chat of 200 turns thus sends
// about as much as one of 20, and what was said at its start can still be recalled.
import type { Id, Millis, Role } from '../types';
import { LexicalIndex } from '../retrieval/lexical';
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

/** Words of one turn an earlier exchange shows: a long reply is cut, the user's words rarely are. */
const EXCERPT_WORDS = { user: 120, assistant: 60 } as const;
/** Exchanges recalled at most (each about a hundred tokens; the budget binds first). */
const MAX_EARLIER = 24;

function excerpt(t: ChatTurn): string {
  const words = t.text.trim().split(/\s+/);
  const max = EXCERPT_WORDS[t.role];
  return `${t.role}: ${words.slice(0, max).join(' ')}${words.length > max ? ' …' : ''}`;
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

export function exchangeBlock(turns: readonly ChatTurn[]): string {
  const when = turns[0]?.time;
  const head = when !== undefined ? `${promptDate(when)}:\n` : '';
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
    earlier: picked.map((x) => exchangeBlock(x)),
    earlierTurnIds: picked.flatMap((x) => x.map((t) => t.id).filter((id): id is Id => id !== undefined)),
    left: before.length,
  };
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
): { blocks: string[]; turnIds: Id[]; missed: number } {
  if (query.trim() === '') return { blocks: [], turnIds: [], missed: 0 };
  const { picked, missed } = recallEarlier(
    before.filter((t) => t.id === undefined || !skip.has(t.id)),
    query,
    Math.max(0, tokens),
  );
  return {
    blocks: picked.map((x) => exchangeBlock(x)),
    turnIds: picked.flatMap((x) => x.map((t) => t.id).filter((id): id is Id => id !== undefined)),
    missed,
  };
}

/** Share of the query's content words an exchange must hold to be a strong match. */
const STRONG_COVERAGE = 0.5;

/** Whether an exchange holds at least half of the query's content words (and two at least). */
function strong(asked: ReadonlySet<string>, text: string): boolean {
  if (asked.size < 2) return false;
  const have = new Set(tokenize(text));
  let n = 0;
  for (const w of asked) if (have.has(w)) n++;
  return n >= 2 && n >= STRONG_COVERAGE * asked.size;
}

function recallEarlier<T extends ChatTurn>(before: readonly T[], query: string, tokens: number): { picked: T[][]; missed: number } {
  const groups = exchanges(before);
  const asked = new Set(tokenize(query));
  let missed = 0;
  let tookStrong = false;
  const index = new LexicalIndex();
  groups.forEach((g, i) => index.add(String(i), g.map((t) => t.text).join('\n')));
  const hits = index.search(query, MAX_EARLIER * 2);
  const chosen: number[] = [];
  let used = 0;
  for (const h of hits) {
    if (chosen.length >= MAX_EARLIER) break;
    const i = Number(h.id);
    const c = estimateTokens(exchangeBlock(groups[i]!)) + 2;
    const isStrong = strong(asked, groups[i]!.map((t) => t.text).join('\n'));
    if (used + c > tokens) {
      if (isStrong) missed++;
      continue;
    }
    if (isStrong) tookStrong = true;
    used += c;
    chosen.push(i);
  }
  // Strong matches all left out for room: worth moving the window to make room for one.
  return { picked: chosen.sort((a, b) => a - b).map((i) => groups[i]!), missed: tookStrong ? 0 : missed };
}
