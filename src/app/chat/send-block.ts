// Why a message the user tried to send stays in the box, in words, from the state that stopped it
// (Enter with no model used to do nothing at all). Pure: tests/unit/app/send-block.test.ts.
import type { EngineKind } from '../engine-status';

export interface SendState {
  /** Non-blank text in the box. */
  text: boolean;
  tooLong: boolean;
  phase: 'idle' | 'remembering' | 'replying';
  engine: EngineKind;
  /** The text is a memory command (answered without a model). */
  command: boolean;
}

/** Undefined when the message can be sent; else why not, and what to do. */
export function sendBlock(s: SendState): string | undefined {
  if (!s.text) return undefined;
  if (s.tooLong) return undefined; // its own note says why, with the numbers
  if (s.phase === 'replying') return 'Not sent yet: a reply is being written. Wait for it, or press Stop.';
  if (s.phase === 'remembering') return 'Not sent yet: Tealeaf is saving what it remembers from this chat. Send again in a moment.';
  if (s.command) return undefined;
  switch (s.engine) {
    case 'ready':
      return undefined;
    case 'loading':
      return 'Not sent yet: the model is still loading. Send again once it is ready.';
    case 'unreachable':
      return 'Not sent: the model server is not reachable. Reconnect it from the model picker above. Memory commands still work.';
    case 'none':
      return 'Not sent: no model is loaded. Choose one from the model picker above. Memory commands (“remember that …”) work without one.';
  }
}
