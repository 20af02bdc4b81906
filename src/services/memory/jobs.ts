// How background jobs show in the UI, and how they share the page and the tabs: one tab runs them
// (Web Locks), and long work gives the page back in slices.
import type { Id, Job } from '../../memory/types';

export interface JobSnapshot {
  id: Id;
  sessionId?: Id;
  status: Job['status'];
  step: string;
  /** e.g. "2/5" */
  progress: string;
  label: string;
  lastError?: string;
  /** This tab's runner is working on it now (a stored "running" may be a closed tab's). */
  active?: boolean;
}

const STEP_LABEL: Record<string, string> = {
  summarise: 'Summarising the session',
  embed: 'Embedding new memories',
  link: 'Linking memories',
  segment: 'Splitting the session into topics',
  done: 'Done',
};

export function jobSnapshot(j: Job): JobSnapshot {
  const p = j.progress;
  return {
    id: j.id,
    sessionId: j.sessionId,
    status: j.status,
    step: j.step,
    progress: p ? `${p.done}/${p.total}` : '',
    label: p?.label ?? STEP_LABEL[j.step] ?? j.step,
    lastError: j.lastError,
  };
}

const SLICE_MS = 30;
const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());
/** Gives the page a chance to paint and handle input between slices of long work. */
export const yieldToPage = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Runs `fn` over every item, giving the page back every SLICE_MS (no long task at 100k records). */
export async function inSlices<T>(items: Iterable<T>, fn: (item: T) => void): Promise<void> {
  let sliceStart = now();
  for (const item of items) {
    fn(item);
    if (now() - sliceStart > SLICE_MS) {
      await yieldToPage();
      sliceStart = now();
    }
  }
}

/** Only one tab runs jobs (Web Locks); where locks are unsupported, this tab just runs them. */
export async function withJobLock(fn: () => Promise<void>, wait = false): Promise<void> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return fn();
  await locks.request('tealeaf-jobs', { ifAvailable: !wait }, async (lock) => {
    if (lock) await fn();
  });
}

/** `list` with `snap` first in place of the entry of the same job (a job's progress updates the list shown). */
export function withJob(list: readonly JobSnapshot[], snap: JobSnapshot): JobSnapshot[] {
  return [snap, ...list.filter((j) => j.id !== snap.id)];
}
