// How the "remembered" details under a reply read: past-chat passages as who said what ("You",
// "Tealeaf"), and retrieval scores in words. Pure (tests/unit/app/remembered.test.ts).
import type { RetrievalScore, UsedMemory } from '../../memory/types';

export interface PassageLine {
  speaker: string;
  text: string;
}

const SPEAKERS: Record<string, string> = { user: 'You', assistant: 'Tealeaf' };

/** Markdown marks a reader should not see as characters (the words stay). */
function plain(text: string): string {
  return text
    .replace(/```[a-z]*\n?/gi, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, '$1$2')
    .replace(/(^|\s)[*_]([^*_\s][^*_]*)[*_](?=\s|$|[.,;:!?])/g, '$1$2')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '• ')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1');
}

/**
 * A segment's text ("user: ...\nassistant: ..." as src/memory/ingest/segments writes it, or names
 * for imported conversations) as lines with speakers; a line without a speaker continues the turn.
 */
export function passageLines(text: string, maxChars = 600): PassageLine[] {
  const out: PassageLine[] = [];
  let used = 0;
  for (const raw of text.split('\n')) {
    const m = /^([A-Za-z][\w .'-]{0,39}):\s?(.*)$/.exec(raw);
    const known = m && (SPEAKERS[m[1]!.toLowerCase()] !== undefined || /^[A-Z]/.test(m[1]!));
    if (m && known) out.push({ speaker: SPEAKERS[m[1]!.toLowerCase()] ?? m[1]!, text: plain(m[2]!) });
    else if (out.length > 0) out[out.length - 1]!.text += `\n${plain(raw)}`;
    else out.push({ speaker: '', text: plain(raw) });
    used += raw.length;
    if (used > maxChars) {
      const last = out[out.length - 1]!;
      last.text = `${last.text.slice(0, Math.max(0, last.text.length - (used - maxChars)))}…`;
      break;
    }
  }
  return out.filter((l) => l.text.trim() !== '');
}

/** One retrieval score in words: "words 0.42 · meaning 0.61". */
export function scoreWords(s: RetrievalScore): string {
  const parts: string[] = [];
  if (s.lexical !== undefined) parts.push(`same words ${s.lexical.toFixed(2)}`);
  if (s.dense !== undefined) parts.push(`similar meaning ${s.dense.toFixed(2)}`);
  if (s.topic !== undefined) parts.push(`shared topics ${s.topic.toFixed(2)}`);
  parts.push(`overall ${s.fused.toFixed(3)}`);
  return parts.join(' · ');
}

/** What the self-reflection did for a reply, as stored (one state, one sentence each). */
export type ReflectionState = 'none' | 'enough' | 'searched' | 'keywords-gone' | 'no-keywords' | 'older-search';

export function reflectionState(u: Pick<UsedMemory, 'reflected' | 'requery'>): ReflectionState {
  switch (u.reflected) {
    case 'enough':
      return 'enough';
    case 'no-keywords':
      return 'no-keywords';
    case 'searched':
      return u.requery ? 'searched' : 'keywords-gone';
    default:
      // Before the reflection ran in the refinement call, a weak first retrieval searched again.
      return u.requery ? 'older-search' : 'none';
  }
}

/** The sentence "why these" shows for the self-reflection; undefined when it did not run. */
export function reflectionWords(u: Pick<UsedMemory, 'reflected' | 'requery'>): string | undefined {
  switch (reflectionState(u)) {
    case 'none':
      return undefined;
    case 'enough':
      return 'Tealeaf checked what it found first and judged it enough to answer, so it did not search again.';
    case 'searched':
      return `Tealeaf judged what it found first not enough to answer, so it searched again for: ${u.requery}`;
    case 'keywords-gone':
      return 'Tealeaf judged what it found first not enough to answer and searched again; its keywords went with a memory that was changed or deleted since.';
    case 'no-keywords':
      return 'Tealeaf judged what it found first not enough to answer, but had no keywords to search again with.';
    case 'older-search':
      return `Your words matched nothing remembered at first, so Tealeaf searched again for: ${u.requery}`;
  }
}

/** How a reply's memories were found: by meaning (vectors) and words, or by words only. */
export type RecallKind = 'meaning' | 'words' | 'unread';

/**
 * Read from what the reply stored, not from the model's state now (it may have loaded since): a
 * score has a meaning part (`dense`) only where vectors were searched, and earlier turns of the chat
 * say how they were found (`earlierBy`). Undefined when nothing was scored or recalled (nothing to say).
 */
export function recallKind(used: Pick<UsedMemory, 'scores' | 'earlierTurnIds' | 'earlierBy'>): RecallKind | undefined {
  // Earlier turns of the chat are searched like memory: by meaning where their vectors were searched.
  const earlier = used.earlierTurnIds?.length ? (used.earlierBy ?? 'words') : undefined;
  if (used.scores.some((s) => s.dense !== undefined) || earlier === 'meaning') return 'meaning';
  // The model was in use, but had not yet read the chat's earlier turns (just after a reload).
  if (earlier === 'unread') return 'unread';
  return used.scores.length > 0 || earlier ? 'words' : undefined;
}

/** The words for each kind: a short mark on the "remembered" chip, and the line in "why these". */
export function recallWords(kind: RecallKind): { chip?: string; line: string; next?: string } {
  if (kind === 'meaning') return { line: 'Found by meaning and by words: the memory search model was in use.' };
  if (kind === 'unread')
    return {
      chip: 'by words only',
      line: 'Found by words only: the memory search model had not yet read the earlier messages of this chat; it reads them in the background.',
    };
  return {
    chip: 'by words only',
    line: 'Found by words only: the memory search model was not loaded for this reply.',
    next: 'Load it in Models.',
  };
}

/** What went into a reply's prompt from memory, by kind, with the counts the chip shows. */
export interface PromptContents {
  timelines: number;
  /** Every retrieved memory (on a timeline or alone). */
  memories: number;
  /** Retrieved memories not on a timeline, listed on their own. */
  single: string[];
  /** Current traits every reply is told (the persona banks). */
  persona: string[];
  /** Standing instructions every reply follows. */
  instructions: string[];
  passages: number;
  /** Turns of this chat from before the reply's window, recalled into its prompt. */
  earlier: string[];
}

/** `kindOf`: a memory's kind now (instructions are stored among personaIds; a deleted one reads as a fact). */
export function promptContents(used: UsedMemory, kindOf: (id: string) => string | undefined = () => undefined): PromptContents {
  const onTimeline = new Set(used.timelines.flatMap((t) => t.memoryIds));
  const always = used.personaIds ?? [];
  return {
    timelines: used.timelines.length,
    memories: used.memoryIds.length,
    single: used.memoryIds.filter((id) => !onTimeline.has(id)),
    persona: always.filter((id) => kindOf(id) !== 'instruction'),
    instructions: always.filter((id) => kindOf(id) === 'instruction'),
    passages: used.segmentIds.length,
    earlier: used.earlierTurnIds ?? [],
  };
}

/** Whether anything remembered went into the prompt (the chip shows then). */
export function toldAnything(used: UsedMemory | undefined): boolean {
  if (!used) return false;
  const c = promptContents(used);
  return c.memories + c.persona.length + c.instructions.length + c.passages + c.earlier.length > 0;
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The chip's words: every kind that went in, counted as the detail lists them. */
export function chipWords(c: PromptContents): string {
  const parts: string[] = [];
  if (c.memories > 0 || c.timelines > 0) parts.push(count(c.timelines, 'timeline', 'timelines'), count(c.memories, 'memory', 'memories'));
  if (c.persona.length) parts.push(count(c.persona.length, 'fact about you', 'facts about you'));
  if (c.instructions.length) parts.push(count(c.instructions.length, 'instruction', 'instructions'));
  if (c.passages) parts.push(`${count(c.passages, 'passage', 'passages')} of past chats`);
  if (c.earlier.length) parts.push(`${count(c.earlier.length, 'earlier message', 'earlier messages')} of this chat`);
  return `remembered: ${parts.join(', ')}`;
}
