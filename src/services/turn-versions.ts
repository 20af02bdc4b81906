// Versions of a turn: an edited message or a regenerated reply becomes a new version of the same
// turn, and the turns that followed the old version are put away inside it (a branch, as in
// ChatGPT). Flipping back brings them back. The store only ever holds the branch that is shown,
// so memorising, the prompt history and search read the versions shown last and nothing else.
// Pure: returns the change to write.
import type { Id, Turn, TurnVersion } from '../memory/types';

export interface VersionChange {
  /** The session's turns after the change (shown branch, by index). */
  turns: Turn[];
  put: Turn[];
  deleteTurnIds: Id[];
}

export function versionCount(t: Turn): number {
  return (t.versions?.length ?? 0) + 1;
}

/** Position of the shown version among all versions (0-based). */
export function shownVersion(t: Turn): number {
  const others = t.versions?.length ?? 0;
  return Math.max(0, Math.min(t.shown ?? others, others));
}

function versionOf(t: Turn, after: Turn[]): TurnVersion {
  const v: TurnVersion = { text: t.text, time: t.time, status: t.status };
  if (t.modelId !== undefined) v.modelId = t.modelId;
  if (t.usedMemory !== undefined) v.usedMemory = t.usedMemory;
  if (after.length > 0) v.after = after;
  return v;
}

/** Every version in order; the shown one carries the live turns after it. */
function allVersions(t: Turn, after: Turn[]): TurnVersion[] {
  const others = t.versions ?? [];
  const k = shownVersion(t);
  return [...others.slice(0, k), versionOf(t, after), ...others.slice(k)];
}

/** The turn showing version k of `list`; the others are kept on it. */
function showing(t: Turn, list: TurnVersion[], k: number): Turn {
  const v = list[k];
  const next: Turn = { ...t, text: v.text, time: v.time, status: v.status, versions: list.filter((_, i) => i !== k), shown: k };
  delete next.modelId;
  delete next.usedMemory;
  if (v.modelId !== undefined) next.modelId = v.modelId;
  if (v.usedMemory !== undefined) next.usedMemory = v.usedMemory;
  return next;
}

/**
 * Adds a version to turns[i] and shows it; the turns after it go with the version they followed.
 * `turns` is the session's shown branch ordered by index.
 */
export function addVersion(turns: readonly Turn[], i: number, version: Omit<TurnVersion, 'after'>): VersionChange {
  const t = turns[i];
  if (!t) throw new Error(`no turn at position ${i}`);
  const tail = turns.slice(i + 1);
  const list = [...allVersions(t, tail), { ...version }];
  const next = showing(t, list, list.length - 1);
  return { turns: [...turns.slice(0, i), next], put: [next], deleteTurnIds: tail.map((x) => x.id) };
}

/** Shows version k of turns[i], bringing back the turns that followed it. */
export function showVersion(turns: readonly Turn[], i: number, k: number): VersionChange {
  const t = turns[i];
  if (!t) throw new Error(`no turn at position ${i}`);
  if (k < 0 || k >= versionCount(t) || k === shownVersion(t)) return { turns: [...turns], put: [], deleteTurnIds: [] };
  const tail = turns.slice(i + 1);
  const list = allVersions(t, tail);
  const next = showing(t, list, k);
  // They had these positions when they were put away: the turns before them are the same.
  const restored = (list[k].after ?? []).map((x, j) => ({ ...x, sessionId: t.sessionId, index: t.index + 1 + j }));
  return { turns: [...turns.slice(0, i), next, ...restored], put: [next, ...restored], deleteTurnIds: tail.map((x) => x.id) };
}
