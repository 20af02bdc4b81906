// A message sent under a chat that had ended (the End button, the idle gap, memorised) starts a new
// chat, because the ended one is remembered as it was; but the person wrote it below that chat's
// messages, so the new chat follows on from it (`Session.follows`): its replies see the ended chat's
// messages as dialogue before its own, within the model's window as any chat (the oldest go first,
// and in-chat recall can bring them back). Followed back through chats that themselves followed on,
// up to a bound. Each chat is still memorised on its own, from its own turns.
import type { Repository } from '../../ports';
import type { Session, Turn } from '../../memory/types';

/** Chats followed back at most, and their turns at most (the window takes far fewer anyway). */
const MAX_CHATS = 4;
const MAX_TURNS = 400;

/** The turns of the chats `session` follows on from, oldest chat first, each in its order. */
export async function followedTurns(repo: Pick<Repository, 'getSession' | 'listTurns'>, session: Session | undefined): Promise<Turn[]> {
  const chats: Turn[][] = [];
  let count = 0;
  const seen = new Set<string>([session?.id ?? '']);
  for (let id = session?.follows; id && !seen.has(id) && chats.length < MAX_CHATS && count < MAX_TURNS;) {
    seen.add(id);
    const followed = await repo.getSession(id);
    if (!followed) break;
    const turns = (await repo.listTurns(id)).slice(-(MAX_TURNS - count));
    chats.unshift(turns);
    count += turns.length;
    id = followed.follows;
  }
  return chats.flat();
}

/** Told when a message under an ended chat starts a new one that follows on from it. */
export const FOLLOW_ON_NOTICE =
  "A new chat started: the one shown had ended. Replies here still see the previous chat's messages; each chat is remembered on its own.";
