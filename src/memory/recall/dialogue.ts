// The chat being answered, as the reply's preparation reads it: its turns, oldest first, the last
// normally the person's new message (turn.ts lays them out with layout.ts).
import type { Id, Millis, Role } from '../types';

export interface DialogueTurn {
  /** The stored turn's id: recalled earlier turns of the chat are named by it in usedMemory. */
  id?: Id;
  role: Role;
  text: string;
  time?: Millis;
}
