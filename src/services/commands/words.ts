// The words of a memory command's answer, from its one state (Turn.command) and what it counted.
// Stored as the answer's text: the model reads it later in the chat, and it names no memory's
// words but the one a "remember that" stored (the user's own words, just above): a forgotten
// memory does not live on in the chat's answers. The memories are listed live by the view.
import type { CommandAnswer } from '../../memory/types';

export interface AnswerFacts extends CommandAnswer {
  /** How many memories it made, asks about, forgot or lists. */
  count?: number;
  /** What it was asked about ("me": the user). */
  about?: string;
  /** remember: the memory as stored (done) or as found (none: already remembered). */
  remembered?: string;
  /** remember: it is a standing instruction, followed in every reply. */
  instruction?: boolean;
  /** forget: how many of the user's own messages it asks about or forgot (besides `count` memories). */
  messages?: number;
  /** recall: how many more than listed are true now, and how many matched but are no longer true. */
  more?: number;
  past?: number;
  /** recall about the user: no trait is true now, so what the user told is listed instead. */
  told?: boolean;
  /**
   * recall about the user, asked in a chat where they said things of their own: those become
   * memories when the chat ends, so the answer says so instead of seeming to have missed them.
   */
  chatPending?: boolean;
}

const memories = (n: number) => (n === 1 ? '1 memory' : `${n} memories`);
const messages = (n: number) => (n === 1 ? '1 message' : `${n} messages`);
/** "this memory", "these 2 memories and 1 message of yours" (a forget card). */
function forgetting(n: number, m: number): string {
  const mem = n === 0 ? '' : n === 1 ? 'this memory' : `these ${n} memories`;
  if (m === 0) return mem;
  if (n === 0) return m === 1 ? 'this message of yours' : `these ${m} messages of yours`;
  return `${mem} and ${messages(m)} of yours`;
}
const topic = (about: string | undefined) => (about === undefined || about === 'me' ? 'you' : `“${about}”`);

const TEMPORARY: Record<CommandAnswer['kind'], string> = {
  remember: 'This is a temporary chat: nothing is remembered here, so nothing was stored. Say it in a normal chat to remember it.',
  forget: 'This is a temporary chat: it does not use your memory, so nothing was forgotten. Ask in a normal chat.',
  recall: 'This is a temporary chat: it does not use your memory. Ask in a normal chat what Tealeaf remembers.',
};

export function answerText(f: AnswerFacts): string {
  const n = f.count ?? 0;
  if (f.state === 'temporary') return TEMPORARY[f.kind];
  switch (f.kind) {
    case 'remember':
      if (f.state === 'undone') return 'Undone: that is not remembered.';
      if (f.state === 'none') return `I already remember that: “${f.remembered ?? ''}”`;
      if (f.instruction) return `Remembered, and followed in every reply: “${f.remembered ?? ''}”`;
      return `Remembered: “${f.remembered ?? ''}”`;
    case 'forget':
      if (f.state === 'asked')
        return `Forget ${forgetting(n, f.messages ?? 0)} about ${topic(f.about)}? Nothing is deleted until you confirm.`;
      if (f.state === 'forgotten')
        return `Forgot ${[...(n > 0 ? [memories(n)] : []), ...(f.messages ? [messages(f.messages)] : [])].join(' and ')}.`;
      if (f.state === 'kept') return 'Kept them: nothing was forgotten.';
      if (f.state === 'undone')
        return f.messages ? 'Undone: all of it is back.' : `Undone: ${n === 1 ? 'the memory is' : `the ${n} memories are`} back.`;
      return `Nothing in your memory matches ${topic(f.about)}, so nothing was forgotten.`;
    case 'recall': {
      const past = f.past
        ? ` ${f.past === 1 ? '1 memory about it is' : `${f.past} memories about it are`} no longer true (see the Memory view).`
        : '';
      const pending = f.chatPending ? 'What you said in this chat is remembered when it ends.' : '';
      const chat = pending && ` ${pending}`;
      if (f.state === 'none')
        return `${f.about === 'me' ? 'I don’t remember anything about you that is true now.' : `Nothing in your memory about ${topic(f.about)} is true now.`}${chat}${past}`;
      const more = f.more ? ` ${f.more} more are in the Memory view.` : '';
      if (f.told) return `I have no lasting facts about you yet.${chat} What you told me (${memories(n)}):${more}`;
      return `${pending && `${pending} `}What I remember about ${topic(f.about)} that is true now (${memories(n)}):${more}${past}`;
    }
  }
}
