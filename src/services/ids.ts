/** Random ids for records created by the user's actions (deterministic ids are used by jobs). */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID()}`;
}
