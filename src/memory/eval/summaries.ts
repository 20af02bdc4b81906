// TeaFarm step 1 (Theanine §5): the past, summarised session by session. Tealeaf already keeps a
// session's memories, so a session's summary is its memories in time order; a trait that stopped
// being true says so, because the questions must counter the latest stage of each story.
import type { Id, Memory, Millis } from '../types';
import { compareChronological } from '../order';
import { pastNote } from '../past';
import { promptDate } from '../text';
import { countWords } from '../retrieval/tokenize';

export interface SessionSummary {
  sessionId: Id;
  /** Time of the session's first and last memory. */
  start: Millis;
  end: Millis;
  lines: string[];
}

/** Sessions oldest first, each with its memories (oldest first) as lines. */
export function sessionSummaries(memoriesById: ReadonlyMap<Id, Memory>): SessionSummary[] {
  const bySession = new Map<Id, Memory[]>();
  for (const m of memoriesById.values()) {
    const list = bySession.get(m.sessionId);
    if (list) list.push(m);
    else bySession.set(m.sessionId, [m]);
  }
  return [...bySession.entries()]
    .map(([sessionId, ms]) => {
      ms.sort(compareChronological);
      return {
        sessionId,
        start: ms[0]!.time,
        end: ms[ms.length - 1]!.time,
        lines: ms.map((m) => `${m.text}${pastNote(m, memoriesById)}`),
      };
    })
    .sort((a, b) => a.start - b.start || (a.sessionId < b.sessionId ? -1 : 1));
}

/**
 * The summaries as the question generator reads them, oldest first, within maxWords: the oldest
 * sessions give way first (a small model's context is short, and the questions counter the
 * latest stage of each story). Returns the text and how many sessions it holds.
 */
export function summariesText(summaries: readonly SessionSummary[], maxWords: number): { text: string; sessions: number } {
  const blocks = summaries.map((s, i) => `Session ${i + 1} (${promptDate(s.start)}):\n${s.lines.map((l) => `- ${l}`).join('\n')}`);
  const kept: string[] = [];
  let words = 0;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const w = countWords(blocks[i]!);
    if (words + w > maxWords) {
      // The newest session alone is too long: its latest lines, as many as fit.
      if (kept.length === 0) {
        const s = summaries[i]!;
        const head = `Session ${i + 1} (${promptDate(s.start)}):`;
        const lines: string[] = [];
        let used = countWords(head);
        for (let j = s.lines.length - 1; j >= 0; j--) {
          const lw = countWords(s.lines[j]!) + 1;
          if (used + lw > maxWords) break;
          lines.unshift(`- ${s.lines[j]!}`);
          used += lw;
        }
        if (lines.length > 0) kept.unshift([head, ...lines].join('\n'));
      }
      break;
    }
    kept.unshift(blocks[i]!);
    words += w;
  }
  return { text: kept.join('\n\n'), sessions: kept.length };
}
