// Speaker-aware retrieval. Memories carry who they are about (their subject). A question that names
// one of the people the memories are about ("What does Melanie do to destress?") is about that
// person: memories about the other people would spend the budget on the wrong life, and BM25 sees a
// frequent name as a weak term, so it does not keep them out by itself.

/** Subjects that are roles, not names: never matched in a query, never left out. */
const ROLES: ReadonlySet<string> = new Set(['user', 'assistant']);

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The known subjects (lower case) that the query names as whole words ("Melanie's" names Melanie). */
export function namedSubjects(query: string, subjects: readonly string[]): Set<string> {
  const named = new Set<string>();
  for (const s of subjects) {
    const name = s.trim().toLowerCase();
    if (name.length < 2 || ROLES.has(name) || named.has(name)) continue;
    if (new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(name)}(?![\\p{L}\\p{N}])`, 'iu').test(query)) named.add(name);
  }
  return named;
}

/**
 * The subjects a unit may be about for this query, or undefined when the query names none of the
 * known people or all of them (nothing to leave out). Roles stay allowed: a question about a friend
 * may still need what the user said.
 */
export function allowedSubjects(query: string, subjects: readonly string[]): Set<string> | undefined {
  const named = namedSubjects(query, subjects);
  if (named.size === 0) return undefined;
  const people = new Set(subjects.map((s) => s.trim().toLowerCase()).filter((s) => s.length >= 2 && !ROLES.has(s)));
  if ([...people].every((p) => named.has(p))) return undefined;
  for (const r of ROLES) named.add(r);
  return named;
}
