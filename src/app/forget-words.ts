// What a forget will take, in the user's words, before it acts (the memory's Delete in the Memory
// view, the "forget …" card in the chat): memories, their lines and the replies in each chat, the
// passages of past chats. Built from the service's preview (forgetting.ts), so the words cannot
// drift from what the forget does.
import type { ForgetPreview } from '../services/memory/forgetting';
import { listWords, quoted } from './done-words';

const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

export interface ForgetNames {
  /** The memories the user picked (the others in the preview are copies found with them). */
  asked: readonly string[];
  /** A chat's title, when it still exists. */
  title: (sessionId: string) => string | undefined;
  /** A memory as the user reads it ("You ..."). */
  text: (id: string, stored: string) => string;
}

/** One line per thing that goes besides the memories picked; empty when nothing else does. */
export function forgetWords(p: ForgetPreview, names: ForgetNames): string[] {
  const out: string[] = [];
  const copies = p.memories.filter((m) => !names.asked.includes(m.id));
  if (copies.length > 0) {
    const said = listWords(copies.slice(0, 2).map((m) => quoted(names.text(m.id, m.text), 80)));
    const more = copies.length > 2 ? ` and ${count(copies.length - 2, 'other', 'others')}` : '';
    out.push(`${count(copies.length, 'more memory', 'more memories')} saying the same, made from the same words: ${said}${more}`);
  }
  for (const c of p.chats) {
    const title = names.title(c.sessionId);
    const what = listWords([
      ...(c.yours > 0 ? [count(c.yours, 'of your messages', 'of your messages')] : []),
      ...(c.replies > 0 ? [count(c.replies, 'reply', 'replies')] : []),
    ]);
    out.push(`In ${title ? quoted(title, 48) : 'a chat'}: ${what}`);
  }
  if (p.passages > 0) out.push(`${count(p.passages, 'passage of a past chat', 'passages of past chats')}, recalled without those lines`);
  return out;
}

/** The sentence after the list: what forgetting means, and that Undo brings it back. */
export const FORGET_AFTER =
  'Those lines stay in their chats for you to read, marked forgotten; none of it is used in replies again. Undo brings it all back.';
