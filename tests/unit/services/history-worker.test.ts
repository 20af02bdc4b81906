// History import with the parsing in a worker (history.worker.ts, run here in-process
// with every reply cloned as postMessage does). The records written are the ones the import wrote
// when it parsed on the page (parseHistory, then one apply per batch); a cancel while reading or
// while saving, and a write that fails half way, leave the store as it was before the import; an
// error in the worker comes back in the parser's own words.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importHistory, type HistoryImportDeps } from '../../../src/services/history/import';
import { HistoryImportCancelledError, HistoryImportError } from '../../../src/services/history/errors';
import { inProcessHistoryParser, type HistoryParserPort } from '../../../src/services/history/parse-client';
import { chunked } from '../../../src/services/history/parse-worker-core';
import { parseHistory } from '../../../src/services/history/parse';
import type { HistoryProgress } from '../../../src/services/history/progress';
import type { ParserReply } from '../../../src/services/history/parse-messages';
import { IdbRepository } from '../../../src/store/repository';
import { dump, freshFactory } from '../store/helpers';
import { makeChatgptExport } from '../../support/history-export.mjs';
import type { Repository } from '../../../src/ports';
import type { Tombstone } from '../../../src/memory/types';

const ROOT = resolve(import.meta.dirname, '../../..');
const CHATGPT = readFileSync(resolve(ROOT, 'tests/fixtures/chatgpt-conversations.json'), 'utf8');
const CLAUDE = readFileSync(resolve(ROOT, 'tests/fixtures/claude-conversations.json'), 'utf8');
const NOW = Date.UTC(2025, 4, 1);
const file = (text: string) => new Blob([text], { type: 'application/json' });
const open = () => IdbRepository.open({ factory: freshFactory() });
const RECORDS = ['sessions', 'turns', 'jobs', 'tombstones'] as const;

function deps(repo: Repository, more: Partial<HistoryImportDeps> = {}): HistoryImportDeps {
  return { repo, exclusive: (fn) => fn(), now: () => NOW, startParser: inProcessHistoryParser, ...more };
}

/** The import as it was before the worker: parse on the page, then write the batches. */
async function importOnThePage(repo: Repository, text: string) {
  const parsed = parseHistory(text, NOW);
  for (let i = 0; i < parsed.chats.length; i += 100) {
    const batch = parsed.chats.slice(i, i + 100);
    await repo.apply({ sessions: batch.map((c) => c.session), turns: batch.flatMap((c) => c.turns), jobs: batch.map((c) => c.job) });
  }
}

describe('the records are the same as when the page parsed the file', () => {
  const generated = makeChatgptExport({ mb: 1, messagesPerChat: 9, wordsPerMessage: 40 }).text;
  it.each([
    ['the ChatGPT fixture', CHATGPT],
    ['the Claude fixture', CLAUDE],
    ['a generated 1 MB ChatGPT export', generated],
  ])('%s, handed over one chat per chunk', async (_name, text) => {
    const before = await open();
    await importOnThePage(before, text);
    const now = await open();
    const progress: HistoryProgress[] = [];
    await importHistory(file(text), deps(now, { batchSize: 1, onProgress: (_l, p) => progress.push(p) }));
    expect(await dump(now.db, RECORDS)).toBe(await dump(before.db, RECORDS));
    expect((await now.listSessions()).length).toBeGreaterThan(1);
    // Every phase was reported, in order.
    const phases = progress.map((p) => p.phase).filter((p, i, all) => p !== all[i - 1]);
    expect(phases).toEqual(['reading', 'opening', 'checking', 'waiting', 'saving', 'saved']);
  });
});

describe('chunks', () => {
  const records = parseHistory(CHATGPT, NOW).chats;
  const size = (i: number) => records[i].turns.reduce((n, t) => n + t.text.length, 0);
  it('hold whole chats in order, at most `most` chats and `chars` characters, but always one chat', () => {
    expect(chunked(records, 2, Infinity).map((c) => c.length)).toEqual([2, 1]);
    expect(chunked(records, 100, 0).map((c) => c.length)).toEqual([1, 1, 1]);
    expect(chunked(records, 100, size(0) + size(1)).map((c) => c.length)).toEqual([2, 1]);
    expect(chunked(records, 100, size(0) + size(1) - 1).map((c) => c.length)).toEqual([1, 1, 1]);
    expect(chunked(records, 100, Infinity).flat()).toEqual(records);
    expect(chunked([], 100, Infinity)).toEqual([]);
  });
});

describe('cancel and failure leave the store as it was before the import', () => {
  const big = makeChatgptExport({ mb: 1, messagesPerChat: 9, wordsPerMessage: 40 });

  /** A store with the Claude chats, one of the generated chats already there and one deleted. */
  async function seeded() {
    const repo = await open();
    await importHistory(file(CLAUDE), deps(repo));
    const gen = parseHistory(big.text, NOW).chats;
    const [there, gone] = [gen[5], gen[9]];
    const tombstone: Tombstone = { kind: 'session', id: gone.session.id, deletedAt: NOW };
    await repo.apply({ sessions: [there.session], turns: there.turns, jobs: [there.job], tombstones: [tombstone] });
    return { repo, before: await dump(repo.db, RECORDS), gone: gone.session.id };
  }

  it('a cancel while the worker reads: nothing is written and no exclusive operation starts', async () => {
    const { repo, before } = await seeded();
    const controller = new AbortController();
    let exclusive = 0;
    const importing = importHistory(
      file(big.text),
      deps(repo, {
        signal: controller.signal,
        exclusive: (fn) => (exclusive++, fn()),
        onProgress: (_l, p) => p.phase === 'checking' && controller.abort(),
      }),
    );
    await expect(importing).rejects.toBeInstanceOf(HistoryImportCancelledError);
    await expect(importing).rejects.toThrow('Import cancelled. Nothing was changed.');
    expect(exclusive).toBe(0);
    expect(await dump(repo.db, RECORDS)).toBe(before);
  });

  it('a cancel while saving: the chats saved so far are taken back, the ones there before stay', async () => {
    const { repo, before, gone } = await seeded();
    const controller = new AbortController();
    const progress: HistoryProgress[] = [];
    let writes = 0;
    const watched: Repository = Object.assign(Object.create(repo) as Repository, {
      apply: async (change: Parameters<Repository['apply']>[0]) => {
        const applied = await repo.apply(change);
        // After the third chunk is written the user presses Cancel.
        if (change.sessions?.length && ++writes === 3) controller.abort();
        return applied;
      },
    });
    await expect(
      importHistory(file(big.text), deps(watched, { signal: controller.signal, batchSize: 4, onProgress: (_l, p) => progress.push(p) })),
    ).rejects.toBeInstanceOf(HistoryImportCancelledError);
    expect(writes).toBe(3);
    expect(progress.filter((p) => p.phase === 'undoing').length).toBeGreaterThan(0);
    // Three chunks of four: one chat of the second was there, one of the third deleted.
    expect(progress.at(-1)).toEqual({ phase: 'undoing', done: 0, total: 10 });
    expect(await dump(repo.db, RECORDS)).toBe(before);
    expect(await repo.getSession(gone)).toBeUndefined();
  });

  it('a write that fails half way: the chats saved before it are taken back, and the words say so', async () => {
    const { repo, before } = await seeded();
    let writes = 0;
    const failing: Repository = Object.assign(Object.create(repo) as Repository, {
      apply: (change: Parameters<Repository['apply']>[0]) => {
        if (change.sessions?.length && ++writes === 4) return Promise.reject(new Error('The disk is full'));
        return repo.apply(change);
      },
    });
    const importing = importHistory(file(big.text), deps(failing, { batchSize: 4 }));
    await expect(importing).rejects.toBeInstanceOf(HistoryImportError);
    await expect(importing).rejects.toThrow(
      'Saving the chats failed (The disk is full). The chats saved before it were taken back: nothing was imported.',
    );
    expect(await dump(repo.db, RECORDS)).toBe(before);
  });
});

describe('errors in the worker come back in plain words', () => {
  it('malformed JSON, a chat that cannot be read late in the file, and a worker that stops', async () => {
    const repo = await open();
    await importHistory(file(CLAUDE), deps(repo));
    const before = await dump(repo.db, RECORDS);
    const big = makeChatgptExport({ mb: 1, messagesPerChat: 9, wordsPerMessage: 40 });
    await expect(importHistory(file(big.text.slice(0, -1000)), deps(repo))).rejects.toThrow(
      /^This file is not JSON\. Tealeaf imports conversations\.json from a ChatGPT data export/,
    );
    const list = JSON.parse(big.text) as Array<Record<string, unknown>>;
    list[list.length - 1].mapping = 'gone';
    await expect(importHistory(file(JSON.stringify(list)), deps(repo))).rejects.toThrow(
      new HistoryImportError(
        `This looks like a ChatGPT export, but one chat could not be read (chat ${list.length.toLocaleString('en-US')} mapping: expected an object of message nodes). ` +
          'Nothing was imported. Export your data from ChatGPT again and choose the conversations.json inside it, unchanged.',
      ),
    );
    // The worker itself fails (out of memory, say): its error event.
    const crashing = (): HistoryParserPort => {
      const port: HistoryParserPort = {
        onmessage: null,
        onerror: null,
        postMessage: () => setTimeout(() => port.onerror?.({ message: 'Uncaught RangeError: Out of memory' } as ErrorEvent), 0),
        terminate: () => undefined,
      };
      return port;
    };
    await expect(importHistory(file(CHATGPT), deps(repo, { startParser: crashing }))).rejects.toThrow(
      'The history could not be read: Uncaught RangeError: Out of memory.',
    );
    // A failure the parser reports that is not about the file keeps its words.
    const odd = (): HistoryParserPort => {
      const port: HistoryParserPort = {
        onmessage: null,
        onerror: null,
        postMessage: () => {
          const reply: ParserReply = { type: 'failed', kind: 'other', message: 'Something else went wrong.' };
          setTimeout(() => port.onmessage?.({ data: reply } as MessageEvent<ParserReply>), 0);
        },
        terminate: () => undefined,
      };
      return port;
    };
    await expect(importHistory(file(CHATGPT), deps(repo, { startParser: odd }))).rejects.toThrow('Something else went wrong.');
    expect(await dump(repo.db, RECORDS)).toBe(before);
  });
});
