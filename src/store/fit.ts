// The store's last guard of the limits (src/memory/limits.ts): whatever a writer hands over, a
// record is kept only in a form a backup accepts, so what the app stores it can always export and
// import again. The ways in (the composer, imports, replies, the pipeline, model servers) apply the
// limits first and say so; this only catches what slipped past them, and an older version's data
// (the v4 migration, and backups made before). Same object when nothing needs fitting.
import { clampModelId, clampText, MAX_MODEL_ID, MAX_TEXT } from '../memory/limits';
import type { BranchTurn, Memory, Segment, Session, Turn, TurnVersion } from '../memory/types';

const over = (s: string | undefined) => s !== undefined && s.length > MAX_TEXT;
const overName = (s: string | undefined) => s !== undefined && s.length > MAX_MODEL_ID;

/** One version's own fields (a turn, a version, a branch turn). */
function fitFields<T extends TurnVersion & { externalId?: string }>(x: T): T {
  if (!over(x.text) && !overName(x.modelId) && !over(x.externalId)) return x;
  const next = { ...x, text: clampText(x.text, MAX_TEXT) };
  if (x.modelId !== undefined) next.modelId = clampModelId(x.modelId);
  if (x.externalId !== undefined) next.externalId = clampText(x.externalId, MAX_TEXT);
  return next;
}

function fitVersions<T extends Pick<Turn, 'versions'>>(x: T): T {
  const versions = x.versions?.map(fitFields);
  return versions && versions.some((v, i) => v !== x.versions![i]) ? { ...x, versions } : x;
}

export function fitTurn(t: Turn): Turn {
  const own = fitVersions(fitFields(t));
  const branches = t.branches?.map((b): BranchTurn => fitVersions(fitFields(b)));
  if (own === t && (branches === undefined || branches.every((b, i) => b === t.branches![i]))) return t;
  return branches ? { ...own, branches } : own;
}

export function fitSegment(s: Segment): Segment {
  if (!over(s.text) && !over(s.indexText)) return s;
  return { ...s, text: clampText(s.text, MAX_TEXT), indexText: clampText(s.indexText, MAX_TEXT) };
}

export function fitMemory(m: Memory): Memory {
  if (!over(m.text) && !over(m.subject) && !over(m.context)) return m;
  const next = { ...m, text: clampText(m.text, MAX_TEXT) };
  if (m.subject !== undefined) next.subject = clampText(m.subject, MAX_TEXT);
  if (m.context !== undefined) next.context = clampText(m.context, MAX_TEXT);
  return next;
}

export function fitSession(s: Session): Session {
  return over(s.title) ? { ...s, title: clampText(s.title, MAX_TEXT) } : s;
}
