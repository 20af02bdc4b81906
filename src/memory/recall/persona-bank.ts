// LD-Agent's persona banks (seed 001): the generator sees what it knows about the user and what it
// has said about itself on every turn, not only the traits the query happens to retrieve. Current
// traits only (superseded or marked "no longer true": isPast, the one rule for "true now"; past
// ones reach the prompt through timelines, with their dates, when they matter), newest first,
// under a small word budget of their own, leaving out those already in the retrieved material.
import { countWords } from '../retrieval/tokenize';
import type { Id, Memory } from '../types';
import { isPast } from '../past';

export interface PersonaBank {
  user: Memory[];
  assistant: Memory[];
  /** Words the bank adds to the prompt (its lines, as written). */
  words: number;
}

export interface PersonaBankOptions {
  maxWords: number;
  /** Memories already in the prompt. */
  exclude?: ReadonlySet<Id>;
}

const CANDIDATES = 64;
const newestFirst = (a: Memory, b: Memory): number => b.time - a.time || b.createdAt - a.createdAt;

/** Current traits, newest first, until the word budget is spent (both banks share it fairly). */
export function personaBank(memories: Iterable<Memory>, options: PersonaBankOptions): PersonaBank {
  // One pass over every memory (this runs on every reply, at 100k memories too), keeping only the
  // newest candidates of each bank: far more than a small budget can take, never a full sort.
  const queues: Memory[][] = [[], []];
  const keep = (q: Memory[], m: Memory) => {
    q.push(m);
    if (q.length >= 4 * CANDIDATES) q.sort(newestFirst).length = CANDIDATES;
  };
  for (const m of memories) {
    if (isPast(m) || options.exclude?.has(m.id)) continue;
    if (m.kind === 'user-trait') keep(queues[0], m);
    else if (m.kind === 'assistant-trait') keep(queues[1], m);
  }
  for (const q of queues) q.sort(newestFirst);
  const chosen: Memory[][] = [[], []];
  let words = 0;
  // Alternate between the banks so a long list about the user does not crowd out the assistant's.
  for (let turn = 0, stalled = 0; stalled < 2; turn = 1 - turn) {
    const next = queues[turn].shift();
    if (!next) {
      stalled++;
      continue;
    }
    const cost = countWords(next.text) + 1; // the list bullet
    if (words + cost > options.maxWords) {
      queues[turn].length = 0;
      stalled++;
      continue;
    }
    stalled = 0;
    chosen[turn].push(next);
    words += cost;
  }
  return { user: chosen[0], assistant: chosen[1], words };
}

/** The bank as a block of the system prompt; empty when there is nothing to say. */
export function personaBankBlock(bank: PersonaBank): string {
  const parts: string[] = [];
  if (bank.user.length) parts.push(`What you know about the person now:\n${bank.user.map((m) => `- ${m.text}`).join('\n')}`);
  if (bank.assistant.length) parts.push(`What you have said about yourself:\n${bank.assistant.map((m) => `- ${m.text}`).join('\n')}`);
  return parts.join('\n\n');
}
