// Ticks of the timeline's time axis for the time range on screen. The labels follow the step
// between ticks (seconds, minutes, days, months, years), in the user's locale, and the first
// tick also says the day (or year) the others belong to: a first chat seconds long reads
// "Mar 4, 11:07:05 AM · 11:07:10 AM", never d3's ":05 / .500" fragments.

import { scaleTime, timeSecond } from 'd3';
import type { Millis } from '../memory/types';

export interface AxisTick {
  /** Screen x. */
  x: number;
  label: string;
  /** Shift of the (centred) label from its tick, so that a long label stays inside the axis. */
  dx: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Unit = 'second' | 'minute' | 'day' | 'month' | 'year';

const FORMATS: Record<Unit | 'date' | 'dateYear' | 'monthYear', Intl.DateTimeFormatOptions> = {
  second: { hour: 'numeric', minute: '2-digit', second: '2-digit' },
  minute: { hour: 'numeric', minute: '2-digit' },
  day: { month: 'short', day: 'numeric' },
  month: { month: 'short' },
  year: { year: 'numeric' },
  date: { month: 'short', day: 'numeric' },
  dateYear: { year: 'numeric', month: 'short', day: 'numeric' },
  monthYear: { year: 'numeric', month: 'short' },
};
const formatters = new Map<string, Intl.DateTimeFormat>();
function fmt(kind: keyof typeof FORMATS, d: Date, locale?: string): string {
  const key = `${locale ?? ''}|${kind}`;
  let f = formatters.get(key);
  if (!f) formatters.set(key, (f = new Intl.DateTimeFormat(locale, FORMATS[kind])));
  return f.format(d);
}

/** The unit a tick step reads in. */
export function tickUnit(step: Millis): Unit {
  if (step < MINUTE) return 'second';
  if (step < DAY) return 'minute';
  if (step < 28 * DAY) return 'day';
  if (step < 365 * DAY) return 'month';
  return 'year';
}

const startOfDay = (d: Date): boolean => d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0;

/** One tick's label: in the step's unit, with the larger unit where it changes or on the first. */
function label(d: Date, prev: Date | null, unit: Unit, locale?: string): string {
  const newDay = !prev || prev.toDateString() !== d.toDateString();
  const newYear = !prev || prev.getFullYear() !== d.getFullYear();
  switch (unit) {
    case 'second':
    case 'minute': {
      const time = fmt(unit, d, locale);
      if (!prev) return `${fmt('date', d, locale)}, ${time}`;
      // Midnight of a new day reads as the day itself.
      if (newDay) return startOfDay(d) ? fmt('date', d, locale) : `${fmt('date', d, locale)}, ${time}`;
      return time;
    }
    case 'day':
      return newYear ? fmt('dateYear', d, locale) : fmt('day', d, locale);
    case 'month':
      return newYear ? fmt('monthYear', d, locale) : fmt('month', d, locale);
    case 'year':
      return fmt('year', d, locale);
  }
}

/**
 * Ticks for [t0, t1] drawn over `width` px, about one per 120 px, none within 22 px of an end,
 * never closer than a second apart. A range too short for two ticks gets one, in the middle,
 * with its full time.
 */
export function timeTicks(t0: Millis, t1: Millis, width: number, locale?: string): AxisTick[] {
  if (width <= 0 || !Number.isFinite(t0) || !Number.isFinite(t1)) return [];
  const s = scaleTime()
    .domain([new Date(t0), new Date(t1 > t0 ? t1 : t0 + 1)])
    .range([0, width]);
  let dates = s.ticks(Math.max(2, Math.floor(width / 120)));
  let step = dates.length > 1 ? dates[1].getTime() - dates[0].getTime() : t1 - t0;
  if (step < SECOND) {
    // Memories do not happen in fractions of a second: tick whole seconds, thinned to fit.
    const every = Math.max(1, Math.ceil((t1 - t0) / SECOND / Math.max(2, Math.floor(width / 120))));
    dates = s.ticks(timeSecond.every(every)!);
    step = every * SECOND;
  }
  const inside = dates.map((d) => ({ d, x: s(d) })).filter((t) => t.x >= 22 && t.x <= width - 22);
  if (inside.length === 0) {
    const mid = new Date((t0 + t1) / 2);
    return [{ x: width / 2, label: label(mid, null, 'second', locale), dx: 0 }];
  }
  const unit = tickUnit(step);
  const out: AxisTick[] = [];
  let right = -Infinity;
  inside.forEach((t, i) => {
    const text = label(t.d, i === 0 ? null : inside[i - 1].d, unit, locale);
    const half = (text.length * CHAR_PX) / 2;
    const dx = Math.max(0, 2 + half - t.x) - Math.max(0, t.x + half - (width - 2));
    // A label that would touch the one before it is left out (its tick mark too).
    if (t.x + dx - half < right + 8) return;
    right = t.x + dx + half;
    out.push({ x: t.x, label: text, dx });
  });
  return out;
}

/** About the width of a character of the axis' 11 px labels. */
const CHAR_PX = 6.2;
