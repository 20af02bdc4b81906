// A day as the date field writes it (YYYY-MM-DD, the user's own calendar), and back to a time.
import type { Millis } from '../../memory/types';

const two = (n: number): string => String(n).padStart(2, '0');

/** The local calendar day of a time, as an `<input type="date">` value. */
export function dateValue(t: Millis): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/** Noon of a day (a time zone change moves it by hours, never to another day); NaN when not a day. */
export function fromDateValue(value: string): Millis {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return NaN;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12).getTime();
}
