// What Tealeaf says once a big action is done, in the user's words: chats, messages and memories,
// never the stores behind them (sessions, turns, edges, segments). Each function takes what the
// action reported (counted by the store where it can be), so the words cannot drift from the data.

const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
const chats = (n: number) => count(n, 'chat', 'chats');
const messages = (n: number) => count(n, 'message', 'messages');
const memories = (n: number) => count(n, 'memory', 'memories');

/** "a", "a and b", "a, b and c". */
export function listWords(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/** A chat title as quoted in a sentence: long ones are cut. */
export function quoted(text: string, max = 60): string {
  const t = text.trim().replace(/\s+/g, ' ');
  return `“${t.length > max ? `${t.slice(0, max - 1)}…` : t}”`;
}

/** After "Delete everything" (shown once the page has reloaded). */
export function deletedEverythingWords(d: { chats: number; memories: number; demo: boolean }, modelsToo: boolean): string {
  const what =
    d.chats + d.memories === 0
      ? `Everything was deleted (there were no chats or memories${d.demo ? ' but the demo' : ''})`
      : `Everything was deleted: ${chats(d.chats)} and ${memories(d.memories)}${d.demo ? ', and the demo' : ''}`;
  return `${what}. ${modelsToo ? 'Downloaded models were deleted too.' : 'Downloaded models were kept.'}`;
}

/** Record counts as an export or an import reports them (the store's collection names). */
export interface RecordCounts {
  sessions: number;
  turns: number;
  memories: number;
  settings: number;
}

/** After an export: the file's name and what it holds. */
export function exportedWords(fileName: string, c: Pick<RecordCounts, 'sessions' | 'memories'>, demo = false): string {
  const what = c.sessions + c.memories === 0 ? 'no chats or memories yet' : `${chats(c.sessions)} and ${memories(c.memories)}`;
  return `Saved ${fileName}: ${demo ? `the demo’s ${what}` : what}.`;
}

/** After a backup import: what came back, what was skipped and why. */
export function importedWords(r: { added: RecordCounts; skipped: RecordCounts; selfLinks?: number }, mode: 'merge' | 'replace'): string {
  const { added: a, skipped: k } = r;
  const restored = [
    a.sessions > 0
      ? `${chats(a.sessions)}${a.turns > 0 ? ` (${messages(a.turns)})` : ''}`
      : a.turns > 0
        ? `${messages(a.turns)} in chats you had`
        : '',
    a.memories > 0 ? memories(a.memories) : '',
  ].filter(Boolean);
  const sentences: string[] = [];
  if (mode === 'replace') {
    const settings = a.settings > 0 ? ['the backup’s settings'] : [];
    sentences.push(
      restored.length + settings.length > 0
        ? `Replaced your data with the backup: ${listWords([...restored, ...settings])}.`
        : 'Replaced your data with the backup, which held no chats, memories or settings.',
    );
  } else {
    sentences.push(restored.length > 0 ? `Restored ${listWords(restored)}.` : 'Nothing new was restored.');
    const skipped = [
      k.sessions > 0 ? chats(k.sessions) : '',
      k.turns > 0 ? messages(k.turns) : '',
      k.memories > 0 ? memories(k.memories) : '',
    ].filter(Boolean);
    if (skipped.length > 0)
      sentences.push(`Skipped ${listWords(skipped)}: ${k.sessions + k.turns + k.memories === 1 ? 'it was' : 'they were'} already there.`);
    // Merge keeps the settings in use; the backup's come only where there were none.
    if (k.settings > 0) sentences.push('Your settings were kept (the backup’s were not applied).');
    else if (a.settings > 0) sentences.push('The backup’s settings were applied.');
  }
  const self = r.selfLinks ?? 0;
  if (self > 0) sentences.push(`Left out ${count(self, 'link', 'links')} from a memory to itself (a link joins two different memories).`);
  return sentences.join(' ');
}

/** After deleting a chat: what happened to the memories made from it (deleted, kept). */
export function chatDeletedWords(title: string, memoriesDeleted: number, memoriesKept: number): string {
  const gone =
    memoriesDeleted === 0
      ? ''
      : memoriesDeleted === 1
        ? ' and the memory made from it'
        : ` and the ${memories(memoriesDeleted)} made from it`;
  const head = `Deleted ${quoted(title)}${gone}`;
  if (memoriesKept === 0) return `${head}.`;
  const source = `the explorer shows ${memoriesKept === 1 ? 'its' : 'their'} source as deleted`;
  if (memoriesDeleted > 0) return `${head}; ${count(memoriesKept, 'other memory was', 'other memories were')} kept: ${source}.`;
  return `${head}. ${memoriesKept === 1 ? 'Its memory was kept' : `Its ${memories(memoriesKept)} were kept`}; ${source}.`;
}

/** After a LoCoMo conversation was imported through the memorise pipeline. */
export function locomoImportedWords(r: { sessions: number; turns: number; memories: number; edges: number; skipped: number }): string {
  const already = r.skipped > 0 ? `${chats(r.skipped)} of this conversation ${r.skipped === 1 ? 'was' : 'were'} already there` : '';
  if (r.sessions === 0) return `Nothing new was imported${already ? `: ${already}` : ''}.`;
  const links = r.edges > 0 ? ` and ${count(r.edges, 'link', 'links')}` : '';
  return `Imported ${chats(r.sessions)} (${messages(r.turns)}), remembered as ${memories(r.memories)}${links}${already ? `; ${already}` : ''}.`;
}

/** After removing the records an earlier version's demo left in the user's own memory. */
export function legacyDemoRemovedWords(c: { sessions: number; memories: number }): string {
  return `Removed the old demo from your memory: ${chats(c.sessions)} and ${memories(c.memories)}. Your own chats and memories were not touched.`;
}

/** After "Delete all downloaded models": how many went, and how many could not be deleted. */
export function modelsDeletedWords(deleted: number, left = 0): string {
  const still = left > 0 ? ` ${count(left, 'model', 'models')} could not be deleted; try again after a reload.` : '';
  if (deleted === 0) return left > 0 ? `No model was deleted.${still}` : 'There were no downloaded models to delete.';
  return `Deleted ${count(deleted, 'downloaded model', 'downloaded models')}; ${deleted === 1 ? 'it downloads' : 'they download'} again when you choose ${deleted === 1 ? 'it' : 'one'}.${still}`;
}

/** After leaving or removing the demo (shown once the page has reloaded into the user's memory). */
export const DEMO_WORDS = {
  removed: 'The demo was removed. You are back in your own memory, which it never touched.',
  left: 'You left the demo; it is kept for next time. You are back in your own memory.',
} as const;
