// Forgotten lines: a turn the user forgot stays in its chat, marked, and every passage
// (segment) holding it is rebuilt without it. Pure: the store runs these inside the write's
// transaction (src/store/forgotten-lines.ts), so no passage ever holds a forgotten line.
import type { TurnPatch } from '../../ports';
import type { Id, Role, Segment, Turn } from '../types';
import { clampText, MAX_TEXT } from '../limits';
import { denoiseForIndex } from '../ingest/segments/denoise';

export const isForgotten = (t: Pick<Turn, 'forgotten'> | undefined): boolean => t?.forgotten !== undefined;

/** The turn with a patch's marks applied (the same object when nothing changes). */
export function patchTurn(t: Turn, p: TurnPatch): Turn {
  const by = new Set(t.forgotten?.by ?? []);
  for (const id of p.forget?.by ?? []) by.add(id);
  for (const id of p.unforget ?? []) by.delete(id);
  return withForgotten(t, by, t.forgotten?.at ?? p.forget?.at ?? 0);
}

/** The turn forgotten for the memories `by` since `at`, or not at all when `by` is empty (the same object when nothing changes). */
export function withForgotten(t: Turn, by: ReadonlySet<Id>, at: number): Turn {
  if (by.size === 0) {
    if (!t.forgotten) return t;
    const next = { ...t };
    delete next.forgotten;
    return next;
  }
  const ids = [...by].sort();
  if (t.forgotten && t.forgotten.at === at && t.forgotten.by.join('\u0000') === ids.join('\u0000')) return t;
  return { ...t, forgotten: { at, by: ids } };
}

/** Labels a speaker may have in a passage without being a name (buildSegments' default). */
const ROLES: ReadonlySet<string> = new Set<Role>(['user', 'assistant']);

/**
 * Where each turn's line (`label: words`) is in a passage's text, by the label it has there.
 * Turns whose line is not there (forgotten earlier, or cut off by the length limit) are absent.
 */
function labelsIn(text: string, turns: readonly Turn[]): Map<Id, string> {
  const out = new Map<Id, string>();
  let at = 0;
  for (const t of turns) {
    if (t.text === '') continue;
    const i = text.indexOf(`: ${t.text}`, at);
    if (i < 0) continue;
    const label = text.slice(at, i);
    const end = i + 2 + t.text.length;
    if (label === '' || label.length > 80 || label.includes('\n') || (end !== text.length && text[end] !== '\n')) continue;
    out.set(t.id, label);
    at = end + 1;
  }
  return out;
}

/**
 * A passage as its lines are now: the words of every line not forgotten, with the speaker labels
 * the passage had (a line coming back gets its role's label), and the index copy denoised again.
 * The turn ids stay, so a line that comes back finds its passage. Same object when nothing changes.
 */
export function rebuildSegment(s: Segment, turns: ReadonlyMap<Id, Turn>): Segment {
  const run = s.turnIds.map((id) => turns.get(id)).filter((t): t is Turn => t !== undefined);
  const labels = labelsIn(s.text, run);
  const byRole = new Map<Role, string>();
  for (const t of run) {
    const label = labels.get(t.id);
    if (label !== undefined && !byRole.has(t.role)) byRole.set(t.role, label);
  }
  const kept = run.filter((t) => !isForgotten(t) && t.text.trim() !== '');
  const text = clampText(kept.map((t) => `${labels.get(t.id) ?? byRole.get(t.role) ?? t.role}: ${t.text}`).join('\n'), MAX_TEXT);
  const names = [...new Set(labels.values())].filter((l) => !ROLES.has(l));
  const indexText = clampText(
    denoiseForIndex(
      kept.map((t) => t.text),
      names,
    ),
    MAX_TEXT,
  );
  if (text === s.text && indexText === s.indexText) return s;
  return { ...s, text, indexText };
}

/** Whether a passage has any words left to recall (one whose every line is forgotten has none). */
export const hasLines = (s: Pick<Segment, 'text'>): boolean => s.text.trim() !== '';
