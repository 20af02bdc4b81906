import { describe, expect, it } from 'vitest';
import { tickUnit, timeTicks } from '../../../src/viz/time-axis';

// Local times, so the labels do not depend on the machine's time zone.
const at = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number => new Date(y, mo - 1, d, h, mi, s).getTime();
const labels = (t0: number, t1: number, width = 1200): string[] => timeTicks(t0, t1, width, 'en-US').map((t) => t.label);
// d3's own multi-scale fragments: ":05", ".500", "PM" alone, "11 PM".
const FRAGMENT = /^[:.]|^\d+ ?[AP]M$|^\.\d/;

describe('timeTicks', () => {
  it('a chat seconds long: whole seconds with the time of day, the day on the first tick', () => {
    const t0 = at(2024, 3, 4, 11, 7, 3);
    const ls = labels(t0, t0 + 20_000);
    expect(ls.length).toBeGreaterThan(2);
    expect(ls[0]).toMatch(/^Mar 4, 11:07:\d\d AM$/);
    for (const l of ls.slice(1)) expect(l).toMatch(/^11:07:\d\d AM$/);
    for (const l of ls) expect(l).not.toMatch(FRAGMENT);
  });

  it('never ticks fractions of a second; a range under a second gets one full label', () => {
    const t0 = at(2024, 3, 4, 11, 7, 5);
    const two = timeTicks(t0, t0 + 3000, 1200, 'en-US');
    expect(two.every((t) => !/\.\d/.test(t.label))).toBe(true);
    const one = labels(t0, t0 + 400);
    expect(one).toEqual(['Mar 4, 11:07:05 AM']);
    expect(labels(t0, t0)).toEqual(['Mar 4, 11:07:05 AM']);
  });

  it('hours: times of day, and the date where a new day starts', () => {
    const ls = labels(at(2024, 3, 4, 18), at(2024, 3, 5, 6));
    expect(ls[0]).toMatch(/^Mar 4, \d{1,2}:00 PM$/);
    expect(ls).toContain('Mar 5');
    for (const l of ls) expect(l).not.toMatch(FRAGMENT);
  });

  it('days and months: dates, the year on the first tick and where it changes', () => {
    const days = labels(at(2023, 7, 20), at(2023, 11, 20));
    expect(days[0]).toMatch(/^(Jul|Aug) \d{1,2}, 2023$|^(Jul|Aug) 2023$/);
    const months = labels(at(2023, 1, 10), at(2024, 12, 1));
    expect(months[0]).toMatch(/2023$/);
    expect(months.some((l) => /2024$/.test(l))).toBe(true);
  });

  it('years: the year alone', () => {
    expect(labels(at(2001, 1, 1), at(2024, 1, 1)).every((l) => /^\d{4}$/.test(l))).toBe(true);
  });

  it('keeps labels inside the axis and apart from each other', () => {
    for (const width of [320, 600, 1200]) {
      const ts = timeTicks(at(2024, 3, 4, 11, 7, 3), at(2024, 3, 4, 11, 9, 0), width, 'en-US');
      let right = -Infinity;
      for (const t of ts) {
        const half = (t.label.length * 6.2) / 2;
        expect(t.x + t.dx - half).toBeGreaterThanOrEqual(1.99);
        expect(t.x + t.dx + half).toBeLessThanOrEqual(width - 1.99);
        expect(t.x + t.dx - half).toBeGreaterThan(right);
        right = t.x + t.dx + half;
      }
    }
  });

  it('names the unit of a step', () => {
    expect(tickUnit(5_000)).toBe('second');
    expect(tickUnit(15 * 60_000)).toBe('minute');
    expect(tickUnit(7 * 86_400_000)).toBe('day');
    expect(tickUnit(90 * 86_400_000)).toBe('month');
    expect(tickUnit(400 * 86_400_000)).toBe('year');
  });
});
