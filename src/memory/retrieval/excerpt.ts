// Query-focused excerpts of segments. Under a small budget a whole segment (a topic run of several
// turns, ~100 words) costs as much as five or six memories, while the question is usually answered
// by the turns that match it and their neighbours. Like a search engine's snippet, the prompt gets
// those turns (each with the turn before and after it for context); the rest of the budget goes to
// other units, which is what questions whose evidence is spread over sessions need.
import { tokenize } from './tokenize';

export interface Excerpt {
  text: string;
  turnIds: string[];
}

/**
 * The lines of a segment (one per turn, "Speaker: words") that share a term with the query, each
 * with `context` neighbouring turns on both sides, gaps marked "...". Undefined when nothing would
 * be cut, when no line matches (the segment came in on other evidence: keep it whole), or when the
 * lines do not line up with the turns.
 */
export function segmentExcerpt(text: string, turnIds: readonly string[], query: string, context = 1): Excerpt | undefined {
  const lines = text.split('\n');
  if (lines.length !== turnIds.length || lines.length <= 1) return undefined;
  const terms = new Set(tokenize(query));
  if (terms.size === 0) return undefined;
  // The words after the speaker's label: a name in the question must not match every line they spoke.
  const words = (line: string) => line.slice(line.indexOf(': ') + 2);
  const keep = new Array<boolean>(lines.length).fill(false);
  let matched = false;
  lines.forEach((line, i) => {
    if (!tokenize(words(line)).some((t) => terms.has(t))) return;
    matched = true;
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) keep[j] = true;
  });
  if (!matched || keep.every(Boolean)) return undefined;
  const out: string[] = [];
  const ids: string[] = [];
  keep.forEach((k, i) => {
    if (!k) return;
    if (i > 0 && !keep[i - 1] && out.length > 0) out.push('...');
    out.push(lines[i]!);
    ids.push(turnIds[i]!);
  });
  return { text: out.join('\n'), turnIds: ids };
}
