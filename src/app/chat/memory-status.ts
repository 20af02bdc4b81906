// What the chat says about a session's memory: where its memorising job is, and once memorised,
// what Tealeaf learned from it. Pure (tests/unit/app/memory-status.test.ts).
import type { Id, Memory, Session } from '../../memory/types';
import type { JobSnapshot } from '../../services/jobs';

/** The memorise job's steps in order (src/memory/ingest/memorise.ts). */
const STEPS: Array<[string, string]> = [
  ['summarise', 'summarising the chat'],
  ['embed', 'indexing new memories'],
  ['link', 'linking them to what it knew'],
  ['segment', 'splitting the chat into topics'],
  ['done', 'finishing'],
];

export interface SessionMemoryStatus {
  /** Short, for the session list and the header badge. */
  label: string;
  /** Longer, for the chat itself (undefined when there is nothing to say). */
  detail?: string;
  tone: 'open' | 'busy' | 'done' | 'off' | 'failed';
}

export function sessionMemoryStatus(session: Session, jobs: readonly JobSnapshot[]): SessionMemoryStatus {
  if (session.status === 'open') return { label: 'open', tone: 'open' };
  if (session.status === 'memorised') return { label: 'remembered', tone: 'done' };
  const job = jobs.find((j) => j.sessionId === session.id);
  if (!job)
    return {
      label: 'not remembered',
      detail: 'This chat ended while making memories was switched off, so Tealeaf did not remember it.',
      tone: 'off',
    };
  if (job.status === 'failed')
    return {
      label: 'memorising failed',
      detail: `Memorising failed${job.lastError ? `: ${job.lastError}` : ''}. It is retried when Tealeaf opens again.`,
      tone: 'failed',
    };
  const found = STEPS.findIndex(([step]) => step === job.step);
  // "done" is the last moment of step 4 (the record is finished, then the session is memorised).
  const at = Math.min(Math.max(0, found), STEPS.length - 2);
  const what = STEPS[Math.max(0, found)]![1];
  const total = STEPS.length - 1;
  const count = /^(\d+)\/(\d+)$/.exec(job.progress);
  const part = count && Number(count[2]) > 1 && job.step !== 'done' ? ` (${count[1]} of ${count[2]})` : '';
  if (job.status === 'pending' && job.step === 'summarise') {
    return {
      label: 'waiting to memorise',
      detail: 'Waiting to memorise this chat: it needs a loaded model, and memory creation switched on.',
      tone: 'busy',
    };
  }
  return {
    label: `memorising ${at + 1}/${total}`,
    detail: `Memorising this chat: step ${at + 1} of ${total}, ${what}${part}.`,
    tone: 'busy',
  };
}

export interface Learned {
  /** Memories made from the session, oldest first. */
  memories: Memory[];
  /** Traits the session changed: the older trait and the one that replaced it. */
  changed: Array<{ before: Memory; after: Memory }>;
}

/** What a memorised session added to memory (read from the live memories, so it follows edits). */
export function learnedFrom(sessionId: Id, memories: Iterable<Memory>): Learned {
  const all = [...memories];
  const own = all.filter((m) => m.sessionId === sessionId).sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : 1));
  const ownIds = new Set(own.map((m) => m.id));
  const byId = new Map(own.map((m) => [m.id, m]));
  const changed = all
    .filter((m) => m.supersededBy !== undefined && ownIds.has(m.supersededBy) && m.sessionId !== sessionId)
    .map((before) => ({ before, after: byId.get(before.supersededBy!)! }));
  return { memories: own, changed };
}
