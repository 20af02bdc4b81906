// Fitting a conversation into a small model's context on the CPU, where every prompt token costs
// time: the oldest dialogue goes first, the system prompt (persona and memories) and the newest
// message stay; if those alone are too long, the system prompt is cut. Pure: unit tested.
import type { ChatMessage } from '../ports';

/**
 * The longest suffix of the dialogue that fits `budget` tokens by `count` (the whole prompt's
 * tokens). System messages are always kept; the last message is kept whatever its length.
 */
export function fitToContext(messages: ChatMessage[], count: (m: ChatMessage[]) => number, budget: number): ChatMessage[] {
  if (messages.length === 0 || count(messages) <= budget) return messages;
  const dialogue = messages.filter((m) => m.role !== 'system');
  // Drop from the oldest until it fits; keep at least the newest message.
  let from = 0;
  const build = (start: number): ChatMessage[] => {
    const kept = new Set(dialogue.slice(start));
    return messages.filter((m) => m.role === 'system' || kept.has(m));
  };
  while (from < dialogue.length - 1 && count(build(from)) > budget) from++;
  let fitted = build(from);
  if (count(fitted) <= budget || !fitted.some((m) => m.role === 'system')) return fitted;
  // Still too long: shorten the first system text, keeping its beginning (persona, instructions).
  const at = fitted.findIndex((m) => m.role === 'system');
  const full = fitted[at].content;
  let keep = full.length;
  for (let i = 0; i < 12 && keep > 0 && count(fitted) > budget; i++) {
    keep = Math.floor(keep * Math.min(0.9, budget / Math.max(1, count(fitted))));
    fitted = fitted.map((m, j) => (j === at ? { role: 'system', content: full.slice(0, keep) } : m));
  }
  return fitted;
}
