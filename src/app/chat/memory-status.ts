// What the app says about a session's memory, from ONE state per session: the chat list, the chat's
// header badge, the app header's job badge, the ended-chat line and the memory notice all read
// their words from sessionState, so they cannot disagree. Pure (tests/unit/app/memory-status.test.ts).
import type { Id, Memory, Session } from '../../memory/types';
import type { JobSnapshot } from '../../services/memory/jobs';
import type { EngineKind } from '../engine-status';
import { CHAT_PAUSE_MS, type Hold } from '../../services/models/conversation-first';

/** The memorise job's steps in order (src/memory/ingest/memorise.ts). */
const STEPS: Array<[string, string]> = [
  ['summarise', 'summarising the chat'],
  ['embed', 'indexing new memories'],
  ['link', 'linking them to what it knew'],
  ['segment', 'splitting the chat into topics'],
  ['done', 'finishing'],
];
/** "done" is the last moment of step 4 (the record is finished, then the session is memorised). */
const TOTAL = STEPS.length - 1;

export type SessionStateKind =
  /** Still being written in. */
  | 'open'
  /** Ended, queued, memory creation on, but no model to memorise with (none, loading, not reachable). */
  | 'waiting-model'
  /** Ended and queued, but making new memories is switched off: the job waits. */
  | 'waiting-off'
  /** Queued with everything it needs: it runs after the jobs before it. */
  | 'queued'
  /** Being memorised in this tab now (step n of m). */
  | 'memorising'
  /** Being memorised, its next model call held until the chat pauses (one-conversation engines). */
  | 'waiting-chat'
  /** Memorising failed (after its attempts); can be tried again now. */
  | 'failed'
  /** Ended while memory creation was off: no job was queued, it is not remembered. */
  | 'not-remembered'
  /** Memorised, and memories made from it exist. */
  | 'remembered'
  /** Memorised, and nothing from it was worth remembering. */
  | 'nothing'
  /** Memorised; how many memories it has is not known yet (memory still loading). */
  | 'memorised';

export interface SessionStateInput {
  session: Pick<Session, 'id' | 'status'>;
  /** The session's memorise job, if one is listed (done jobs are not). */
  job?: JobSnapshot;
  /** "Make new memories from chats" (settings memoryCreation). */
  creationOn: boolean;
  /** Whether a chat model is there to memorise with, and if not, why. */
  engine: EngineKind;
  /** Memories made from the session; undefined while the live memory is still loading. */
  memories?: number;
  /** Background model calls held until the chat pauses (services/models/conversation-first.ts). */
  hold?: Hold;
}

export interface SessionState {
  kind: SessionStateKind;
  /** Short, for the chat list and the badges. */
  label: string;
  /** A sentence for the chat itself (the memory notice); undefined when there is nothing to say. */
  detail?: string;
  /** Ends "This chat has ended…" under an ended chat. */
  ended?: string;
  tone: 'open' | 'busy' | 'wait' | 'done' | 'off' | 'failed';
  /** The failed job that "Try again now" retries. */
  retryJobId?: Id;
  /** Where memorising is: step n of m, and n of m within the step when it has parts. */
  step?: { n: number; of: number; part?: { n: number; of: number } };
}

/** The session's memorise job among those listed. */
export function jobOf(sessionId: Id, jobs: readonly JobSnapshot[]): JobSnapshot | undefined {
  return jobs.find((j) => j.sessionId === sessionId);
}

/** A reason as the end of a sentence: "…running?" stays, "…failed" gets its full stop. */
export function sentence(text: string): string {
  const t = text.trim();
  return /[.!?…]["”')]*$/.test(t) ? t : `${t}.`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const WAITING_FOR: Record<Exclude<EngineKind, 'ready'>, { label: string; detail: string; ended: string }> = {
  none: {
    label: 'waiting for a model',
    detail: 'Waiting to memorise this chat: memorising needs a loaded model. Load one in Models.',
    ended: ' and will be remembered once a model is loaded',
  },
  loading: {
    label: 'waiting for the model',
    detail: 'Waiting to memorise this chat until the model has loaded.',
    ended: ' and will be remembered once the model has loaded',
  },
  unreachable: {
    label: 'waiting for the model server',
    detail: 'Waiting to memorise this chat until the model server answers again.',
    ended: ' and will be remembered once the model server answers again',
  },
};

const PAUSE_MINUTES = Math.round(CHAT_PAUSE_MS / 60_000);

export function sessionState({ session, job, creationOn, engine, memories, hold }: SessionStateInput): SessionState {
  if (session.status === 'open') return { kind: 'open', label: 'open', tone: 'open' };
  if (session.status === 'memorised') {
    if (memories === undefined) return { kind: 'memorised', label: 'memorised', ended: ' and is memorised', tone: 'done' };
    if (memories === 0)
      return {
        kind: 'nothing',
        label: 'nothing to remember',
        detail: 'Nothing from this chat needed remembering.',
        ended: ' and was memorised: nothing in it needed remembering',
        tone: 'done',
      };
    return {
      kind: 'remembered',
      label: 'remembered',
      detail: `Tealeaf learned ${plural(memories, 'new memory', 'new memories')} from this chat.`,
      ended: ' and is remembered',
      tone: 'done',
    };
  }
  if (!job)
    return {
      kind: 'not-remembered',
      label: 'not remembered',
      detail: 'This chat ended while making new memories was switched off, so Tealeaf did not remember it.',
      ended: ' and is not remembered: making new memories was switched off when it ended',
      tone: 'off',
    };
  if (job.status === 'failed')
    return {
      kind: 'failed',
      label: 'memorising failed',
      detail: `Memorising this chat failed: ${sentence(job.lastError || 'an unknown error')}`,
      ended: '; memorising it failed',
      tone: 'failed',
      retryJobId: job.id,
    };
  if (!creationOn)
    return {
      kind: 'waiting-off',
      label: 'waiting: memory off',
      detail: 'Waiting to memorise this chat: making new memories is switched off in Settings. It is memorised once you switch it on.',
      ended: ' and waits to be remembered: making new memories is switched off',
      tone: 'wait',
    };
  if (job.active) {
    const found = STEPS.findIndex(([step]) => step === job.step);
    const n = Math.min(Math.max(0, found), TOTAL - 1) + 1;
    const what = STEPS[Math.max(0, found)]![1];
    const count = /^(\d+)\/(\d+)$/.exec(job.progress);
    const part = count && Number(count[2]) > 1 && job.step !== 'done' ? { n: Number(count[1]), of: Number(count[2]) } : undefined;
    const step = { n, of: TOTAL, ...(part ? { part } : {}) };
    // Only the running job makes model calls: a held call is its call.
    if (hold && hold.waiting > 0)
      return {
        kind: 'waiting-chat',
        label: 'waiting for a pause in the chat',
        detail:
          `Memorising this chat (step ${n} of ${TOTAL}) waits until you pause: on this model, work between two replies ` +
          `would make the next reply read the whole chat again. ` +
          (hold.until === undefined
            ? `It goes on ${PAUSE_MINUTES} minutes after the reply under way ends, if no other reply comes first.`
            : `It goes on ${PAUSE_MINUTES} minutes after the last reply, if no other reply comes first.`),
        ended: ' and will be remembered once you pause chatting',
        tone: 'wait',
        step,
      };
    return {
      kind: 'memorising',
      label: `memorising ${n}/${TOTAL}`,
      detail: `Memorising this chat: step ${n} of ${TOTAL}, ${what}${part ? ` (${part.n} of ${part.of})` : ''}.`,
      ended: ' and is being remembered',
      tone: 'busy',
      step,
    };
  }
  if (engine !== 'ready') return { kind: 'waiting-model', ...WAITING_FOR[engine], tone: 'wait' };
  return {
    kind: 'queued',
    label: 'queued to memorise',
    detail: 'Queued to memorise: Tealeaf memorises one chat at a time, oldest first.',
    ended: ' and will be remembered',
    tone: 'wait',
  };
}

export interface HeaderJob {
  label: string;
  tone: SessionState['tone'];
  detail?: string;
  /** The chat it is about (absent for indexing, which is about no one chat). */
  sessionId?: Id;
}

/**
 * The app header's job badge: the job under way, else a failed one, else one that waits; in the
 * words of its session's state. Undefined when no job is listed.
 */
export function headerJob(jobs: readonly JobSnapshot[], stateOf: (sessionId: Id) => SessionState | undefined): HeaderJob | undefined {
  const ranked = [
    ...jobs.filter((j) => j.active),
    ...jobs.filter((j) => !j.sessionId && j.status === 'running'),
    ...jobs.filter((j) => j.status === 'failed'),
    ...jobs.filter((j) => j.status === 'pending' || j.status === 'running'),
  ];
  for (const j of ranked) {
    // Indexing for search by meaning (reembed.ts) belongs to no chat.
    if (!j.sessionId) return { label: 'indexing memories…', tone: 'busy', detail: `${j.label} ${j.progress}`.trim() };
    const state = stateOf(j.sessionId);
    if (state && state.kind !== 'open') return { label: state.label, tone: state.tone, detail: state.detail, sessionId: j.sessionId };
  }
  return undefined;
}

/** How many memories each session made (one pass over the live memories). */
export function memoriesBySession(memories: Iterable<Memory>): Map<Id, number> {
  const counts = new Map<Id, number>();
  for (const m of memories) if (m.sessionId) counts.set(m.sessionId, (counts.get(m.sessionId) ?? 0) + 1);
  return counts;
}

export interface Learned {
  /** Memories made from the session, oldest first. */
  memories: Memory[];
  /** What the session changed: the older memory it retired and the one that changed it (any kinds). */
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
