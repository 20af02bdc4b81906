// Imports never write into the demo (an import there vanished with "Remove the demo" and was
// missing from the user's own memory after "Leave the demo"). The UI offers none in the demo; this
// checks the composition root refuses too, with nothing written to either database, and that the
// same import goes into the user's own memory once the demo is left.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DemoImportError, Tealeaf } from '../../../src/services/tealeaf';
import { IdbRepository } from '../../../src/store/repository';
import { DB_NAME, DEMO_DB_NAME } from '../../../src/store/schema';

const FIXTURES = join(__dirname, '../../fixtures');
const locomo = readFileSync(join(FIXTURES, 'locomo-mini.json'), 'utf8');
const chatgpt = readFileSync(join(FIXTURES, 'chatgpt-conversations.json'), 'utf8');

/** sessionStorage as a tab has it (the space lives there). */
function tabStorage(): Storage {
  const m = new Map<string, string>();
  return {
    get length() {
      return m.size;
    },
    clear: () => m.clear(),
    getItem: (k) => m.get(k) ?? null,
    key: (i) => [...m.keys()][i] ?? null,
    removeItem: (k) => void m.delete(k),
    setItem: (k, v) => void m.set(k, String(v)),
  };
}

const open = () => Tealeaf.open({ onVersionChange: () => {}, onBlocked: () => {} });

async function counts(name: string) {
  const repo = await IdbRepository.open({ name });
  try {
    return { sessions: (await repo.listSessions()).length, memories: (await repo.listMemories()).length };
  } finally {
    repo.close();
  }
}

const opened: Tealeaf[] = [];
beforeEach(() => {
  globalThis.indexedDB = new IDBFactory();
  Object.defineProperty(globalThis, 'sessionStorage', { value: tabStorage(), configurable: true });
});
afterEach(() => {
  for (const t of opened.splice(0)) t.repo.close();
});

describe('imports in the demo', () => {
  it('are refused with nothing written anywhere, and the same files import into your own memory after leaving', async () => {
    const own = await open();
    opened.push(own);
    await own.enterDemo();
    own.repo.close();
    const demo = await open();
    opened.push(demo);
    expect(demo.space).toBe('demo');
    const demoBefore = await counts(DEMO_DB_NAME);
    expect(demoBefore.sessions).toBeGreaterThan(0);

    await expect(demo.importLocomo(locomo)).rejects.toBeInstanceOf(DemoImportError);
    await expect(demo.importHistory(new Blob([chatgpt]))).rejects.toBeInstanceOf(DemoImportError);
    await expect(demo.importBackup(new Blob(['{}']), 'merge')).rejects.toBeInstanceOf(DemoImportError);
    await expect(demo.importBackup(new Blob(['{}']), 'replace')).rejects.toBeInstanceOf(DemoImportError);
    expect(await counts(DEMO_DB_NAME)).toEqual(demoBefore);
    expect(await counts(DB_NAME)).toEqual({ sessions: 0, memories: 0 });

    demo.leaveDemo();
    demo.repo.close();
    const back = await open();
    opened.push(back);
    expect(back.space).toBe('own');
    const imported = await back.importLocomo(locomo);
    expect(imported.sessions).toBeGreaterThan(0);
    await back.importHistory(new Blob([chatgpt]));
    const after = await counts(DB_NAME);
    expect(after.sessions).toBeGreaterThan(imported.sessions);
    expect(after.memories).toBeGreaterThan(0);
    // The demo is as it was.
    expect(await counts(DEMO_DB_NAME)).toEqual(demoBefore);
  });
});
