// Versions of a turn: an edited message or a regenerated reply becomes a new version of the same
// turn, and the turns that followed the old version are put away (a branch, as in ChatGPT).
// Flipping back brings them back. The store only ever holds the branch that is shown as turns, so
// memorising, the prompt history and search read the versions shown last and nothing else.
//
// The branches are kept flat: a turn's `branches` holds every turn put away below it, each naming
// the version it followed (`follows`), so a record nests no deeper however often the user edits
// (nested branches made a backup the app could not import again). Pure: returns the change to write.
import type { BranchTurn, Id, Turn, TurnVersion } from '../../memory/types';

export interface VersionChange {
  /** The session's turns after the change (shown branch, by index). */
  turns: Turn[];
  put: Turn[];
  deleteTurnIds: Id[];
}

type Versioned = Pick<Turn, 'versions' | 'shown'>;

export function versionCount(t: Versioned): number {
  return (t.versions?.length ?? 0) + 1;
}

/** Position of the shown version among all versions (0-based). */
export function shownVersion(t: Versioned): number {
  const others = t.versions?.length ?? 0;
  return Math.max(0, Math.min(t.shown ?? others, others));
}

function versionOf(t: Turn): TurnVersion {
  const v: TurnVersion = { text: t.text, time: t.time, status: t.status };
  if (t.modelId !== undefined) v.modelId = t.modelId;
  if (t.usedMemory !== undefined) v.usedMemory = t.usedMemory;
  if (t.start !== undefined) v.start = t.start;
  return v;
}

/** Every version in order (positions never move: a new version goes last). */
function allVersions(t: Turn): TurnVersion[] {
  const others = t.versions ?? [];
  const k = shownVersion(t);
  return [...others.slice(0, k), versionOf(t), ...others.slice(k)];
}

/** The turn showing version k of `list`; the others are kept on it. */
function showing(t: Turn, list: TurnVersion[], k: number): Turn {
  const v = list[k];
  const next: Turn = { ...t, text: v.text, time: v.time, status: v.status, versions: list.filter((_, i) => i !== k), shown: k };
  delete next.modelId;
  delete next.usedMemory;
  delete next.start;
  if (v.modelId !== undefined) next.modelId = v.modelId;
  if (v.usedMemory !== undefined) next.usedMemory = v.usedMemory;
  if (v.start !== undefined) next.start = v.start;
  return next;
}

/** A stored turn as it is kept in a branch: no session, position, derived fields or branches of its own. */
function toBranch(t: Turn, follows: BranchTurn['follows']): BranchTurn {
  const b: BranchTurn = { id: t.id, role: t.role, text: t.text, time: t.time, status: t.status, follows };
  if (t.modelId !== undefined) b.modelId = t.modelId;
  if (t.usedMemory !== undefined) b.usedMemory = t.usedMemory;
  if (t.externalId !== undefined) b.externalId = t.externalId;
  if (t.versions !== undefined) b.versions = t.versions;
  if (t.shown !== undefined) b.shown = t.shown;
  if (t.command !== undefined) b.command = t.command;
  return b;
}

function fromBranch(b: BranchTurn, sessionId: Id, index: number): Turn {
  const t: Turn = { id: b.id, sessionId, index, role: b.role, text: b.text, time: b.time, status: b.status };
  if (b.modelId !== undefined) t.modelId = b.modelId;
  if (b.usedMemory !== undefined) t.usedMemory = b.usedMemory;
  if (b.externalId !== undefined) t.externalId = b.externalId;
  if (b.versions !== undefined) t.versions = b.versions;
  if (b.shown !== undefined) t.shown = b.shown;
  if (b.command !== undefined) t.command = b.command;
  return t;
}

/**
 * The turns after `t` put away: each follows the shown version of the one before it (the first,
 * the shown version of `t`), and brings the branches it held along.
 */
function putAway(t: Turn, tail: readonly Turn[]): BranchTurn[] {
  const out: BranchTurn[] = [...(t.branches ?? [])];
  let before: Turn = t;
  for (const x of tail) {
    out.push(toBranch(x, { turnId: before.id, version: shownVersion(before) }), ...(x.branches ?? []));
    before = x;
  }
  return out;
}

/** `t` with `branches` set (or left out when empty). */
function withBranches(t: Turn, branches: BranchTurn[]): Turn {
  const next = { ...t };
  if (branches.length > 0) next.branches = branches;
  else delete next.branches;
  return next;
}

/**
 * Adds a version to turns[i] and shows it; the turns after it go with the version they followed.
 * `turns` is the session's shown branch ordered by index.
 */
export function addVersion(turns: readonly Turn[], i: number, version: TurnVersion): VersionChange {
  const t = turns[i];
  if (!t) throw new Error(`no turn at position ${i}`);
  const tail = turns.slice(i + 1);
  const list = [...allVersions(t), { ...version }];
  const next = withBranches(showing(t, list, list.length - 1), putAway(t, tail));
  return { turns: [...turns.slice(0, i), next], put: [next], deleteTurnIds: tail.map((x) => x.id) };
}

/** Shows version k of turns[i], bringing back the turns that followed it. */
export function showVersion(turns: readonly Turn[], i: number, k: number): VersionChange {
  const t = turns[i];
  if (!t) throw new Error(`no turn at position ${i}`);
  if (k < 0 || k >= versionCount(t) || k === shownVersion(t)) return { turns: [...turns], put: [], deleteTurnIds: [] };
  const tail = turns.slice(i + 1);
  const pool = putAway(t, tail);
  const key = (turnId: Id, version: number) => `${version}\u0000${turnId}`;
  const following = new Map<string, BranchTurn>();
  const children = new Map<Id, BranchTurn[]>();
  for (const b of pool) {
    following.set(key(b.follows.turnId, b.follows.version), b);
    children.set(b.follows.turnId, [...(children.get(b.follows.turnId) ?? []), b]);
  }
  // The branch that followed version k: each turn followed the version of the one before it that
  // was shown when it was put away.
  const chain: BranchTurn[] = [];
  for (let b = following.get(key(t.id, k)); b && !chain.includes(b); b = following.get(key(b.id, shownVersion(b)))) chain.push(b);
  const onChain = new Set(chain.map((b) => b.id));
  // Each turn brought back takes along the branches below its own other versions.
  const held = new Set<Id>();
  const below = (id: Id): BranchTurn[] => {
    const out: BranchTurn[] = [];
    const queue = [...(children.get(id) ?? [])];
    for (let b = queue.shift(); b; b = queue.shift()) {
      if (onChain.has(b.id) || held.has(b.id)) continue;
      held.add(b.id);
      out.push(b);
      queue.push(...(children.get(b.id) ?? []));
    }
    return out;
  };
  const back = chain.map((b, j) => {
    const own = new Set(below(b.id));
    return withBranches(
      fromBranch(b, t.sessionId, t.index + 1 + j),
      pool.filter((x) => own.has(x)),
    );
  });
  const next = withBranches(
    showing(t, allVersions(t), k),
    pool.filter((b) => !onChain.has(b.id) && !held.has(b.id)),
  );
  return { turns: [...turns.slice(0, i), next, ...back], put: [next, ...back], deleteTurnIds: tail.map((x) => x.id) };
}
