// Small presentation helpers shared by the explorer components.

import type { Id, Millis } from '../../memory/types';
import type { DrawStats } from '../../viz/canvas';

export type ExplorerTab = 'timeline' | 'graph' | 'persona' | 'list';

/** Reported by TimelineView after each draw (benchmarks). */
export interface RenderInfo {
  renderer: 'svg' | 'canvas';
  ms: number;
  stats?: DrawStats;
}

/** What the explorer needs of a session. */
export interface ExplorerSession {
  id: Id;
  startedAt: Millis;
  title: string;
}

/** What the explorer needs of a turn to show a source excerpt. */
export interface TurnExcerpt {
  id: Id;
  sessionId: Id;
  role: 'user' | 'assistant';
  text: string;
  time: Millis;
  /** The turn no longer exists (its chat was deleted; the memory was kept). */
  deleted?: boolean;
}

const dateFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
});

/** A date for the user; a time outside the Date range shows as unknown instead of throwing. */
export function formatDate(t: Millis): string {
  return Number.isNaN(new Date(t).getTime()) ? 'unknown date' : dateFmt.format(t);
}

export function formatDateTime(t: Millis): string {
  return Number.isNaN(new Date(t).getTime()) ? 'unknown date' : dateTimeFmt.format(t);
}

export function excerpt(text: string, max = 160): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
}

/** "1 memory", "3 memories", "12,000 links": the count in the user's locale with the right noun. */
export function countOf(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** Who a memory is about, in words, where its kind does not say it already ("About you" for a trait of the user). */
export function aboutWords(kind: string, subject: string | undefined): string | undefined {
  if (!subject) return undefined;
  if (subject === 'user') return kind === 'event' ? 'about you' : undefined;
  if (subject === 'assistant') return kind === 'event' ? 'about Tealeaf' : undefined;
  return `about ${subject}`;
}
