// Standing instructions (kind instruction: "Keep your answers short."): every current one goes
// into every reply's instructions, not through retrieval, as a saved memory does in ChatGPT. They
// have a share of the reply prompt of their own, fixed by the model's window (never shrunk when
// the rest of the prompt is built again smaller): what does not fit is left out and named, so the
// Persona panel can say which (never dropped silently). Memory use off or a temporary chat sends
// none: nothing remembered goes in then (services/chat/reply-prompt.ts).
import type { ModelWindow } from '../../ports';
import type { Id, Memory } from '../types';
import { isPast } from '../past';
import { estimateTokens, outputFor } from '../fit';
import { compareChronological } from '../order';

/** Share of the reply prompt's tokens the standing instructions may take. */
export const INSTRUCTION_SHARE = 0.15;

export interface InstructionFit {
  /** Sent with every reply, oldest first (the order they were given). */
  sent: Memory[];
  /** Current instructions that do not fit the share, oldest first. */
  left: Memory[];
  /** The share, in tokens, and what the sent ones take of it. */
  budget: number;
  used: number;
}

/** The current standing instructions, oldest first. */
export function currentInstructions(memories: Iterable<Memory>): Memory[] {
  const out: Memory[] = [];
  for (const m of memories) if (m.kind === 'instruction' && !isPast(m)) out.push(m);
  return out.sort(compareChronological);
}

const line = (m: Memory): string => `- ${m.text}`;

/** Tokens the instructions may take in a reply prompt of `promptTokens`. */
export function instructionBudget(promptTokens: number): number {
  return Math.max(0, Math.floor(promptTokens * INSTRUCTION_SHARE));
}

/**
 * Which instructions fit `budget` tokens: the newest first (a later wish is the likelier to still
 * hold), each one whole or not at all; sent in the order they were given.
 */
export function fitInstructions(instructions: readonly Memory[], budget: number): InstructionFit {
  const header = estimateTokens(INSTRUCTIONS_HEADER) + 2;
  const keep = new Set<Id>();
  let used = 0;
  for (let i = instructions.length - 1; i >= 0; i--) {
    const m = instructions[i]!;
    const cost = estimateTokens(line(m)) + 1 + (keep.size === 0 ? header : 0);
    if (used + cost > budget) continue;
    keep.add(m.id);
    used += cost;
  }
  return {
    sent: instructions.filter((m) => keep.has(m.id)),
    left: instructions.filter((m) => !keep.has(m.id)),
    budget,
    used,
  };
}

/** Standing instructions for a reply in this window (the reply prompt is the window less the answer). */
export function instructionsFor(memories: Iterable<Memory>, window: ModelWindow, replyTokens: number): InstructionFit {
  return fitInstructions(currentInstructions(memories), instructionBudget(window.contextTokens - outputFor(window, replyTokens)));
}

const INSTRUCTIONS_HEADER = 'The person asked you to follow these instructions in every reply, unless they now ask otherwise:';

/** The instructions as a block of the system prompt; empty when there are none. */
export function instructionsBlock(sent: readonly Memory[]): string {
  return sent.length ? `${INSTRUCTIONS_HEADER}\n${sent.map(line).join('\n')}` : '';
}
