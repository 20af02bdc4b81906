// What the chat view says about a chat that follows on from an ended one (src/services/chat/
// follow-on.ts), and under an ended chat about what sending does. Pure (tests/unit/app/follow-words.test.ts).

/** Under an ended chat, after "This chat has ended…". */
export const ENDED_SEND_WORDS = 'Sending a message starts a new chat that follows on from this one: its replies see these messages.';

/** Above the messages of a chat that follows on from an ended one. */
export function followsWords(title: string | undefined): string {
  const named = title?.trim() ? `“${title.trim()}”` : 'an earlier chat';
  return `Follows on from ${named}, which had ended: replies here also see its messages.`;
}
