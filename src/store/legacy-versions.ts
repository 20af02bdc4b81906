// Turns written before the branches were flat (schema v3 and older, and backups made then) kept the
// turns put away with a version inside it (`versions[k].after`), each of which could hold versions
// with turns of their own: a record nested deeper with every edit, and after about fifteen edits a
// backup the app could not import again. This turns such a record into the flat form
// (`Turn.branches`, src/services/turn-versions.ts). Used by the schema migration and by backup
// import, on values not checked yet: it only moves what is well formed and leaves anything else
// where it is for the backup's checks to name. Iterative: no nesting can overflow the stack.

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A version that still holds its turns, in a shape that can be moved. */
const movable = (v: unknown): v is Obj & { after: Obj[] } => isObject(v) && Array.isArray(v.after) && v.after.every(isObject);

/** Position of the shown version among all versions, as turn-versions.ts reads it. */
function shownOf(node: Obj): number {
  const others = Array.isArray(node.versions) ? node.versions.length : 0;
  const k = typeof node.shown === 'number' ? node.shown : others;
  return Math.max(0, Math.min(k, others));
}

/** Whether the turn holds nested branches to flatten. */
export function hasNestedVersions(turn: unknown): boolean {
  return isObject(turn) && Array.isArray(turn.versions) && turn.versions.some(movable);
}

/**
 * The turn with its nested branches moved into `branches`, each turn naming the version it
 * followed; the same value when there is nothing to move.
 */
export function flattenVersions(turn: unknown): unknown {
  if (!hasNestedVersions(turn)) return turn;
  const root = { ...(turn as Obj) };
  const branches: unknown[] = Array.isArray(root.branches) ? [...root.branches] : [];
  const work: Obj[] = [root];
  for (let node = work.pop(); node; node = work.pop()) {
    if (!Array.isArray(node.versions) || !node.versions.some(movable)) continue;
    const k = shownOf(node);
    node.versions = node.versions.map((v: unknown, o: number) => {
      if (!movable(v)) return v;
      // The stored list leaves out the shown version: positions at and after it move up by one.
      let follows = { turnId: node!.id, version: o < k ? o : o + 1 };
      for (const a of v.after) {
        const b: Obj = { ...a, follows };
        // A branch turn takes its session and position back from the turn that holds it; derived
        // fields are recomputed by the store.
        delete b.sessionId;
        delete b.index;
        delete b.drewOn;
        branches.push(b);
        work.push(b);
        follows = { turnId: a.id, version: shownOf(a) };
      }
      const rest: Obj = { ...v };
      delete rest.after;
      return rest;
    });
  }
  if (branches.length > 0) root.branches = branches;
  return root;
}
