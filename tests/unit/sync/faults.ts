// The fault matrix's tools: devices whose tab can be killed at any step of an action.
// A step is a write transaction on the device's IndexedDB or a post to the relay; a kill at step k
// refuses step k and everything after it (the tab is gone), and the device is then opened again
// on the same database with a fresh SyncService, as a reopened tab would be. A kill "after step k"
// is a kill before step k + 1: what happened in memory in between dies with the tab.
import 'fake-indexeddb/auto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IDBFactory } from 'fake-indexeddb';
import { startRelay } from '../../../relay/relay.mjs';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { SyncService, type SyncServiceOptions } from '../../../src/services/sync/sync-service';
import { type TealeafDb, openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { freshFactory } from '../store/helpers';
import { onDevice, until } from './devices';

export class Killed extends Error {
  override readonly name = 'Killed';
}

/** Counts the steps of one device; throws at step `at` and at every step after it. */
export class Killer {
  readonly steps: string[] = [];
  /** What each step wrote (store names, and the keys of the sync rows), once it ran. */
  readonly wrote: Array<Set<string>> = [];
  at = Infinity;
  dead = false;
  /** Counting starts here (the action's first step is 1). */
  arm(at = Infinity): void {
    this.steps.length = 0;
    this.wrote.length = 0;
    this.at = at;
  }
  step(name: string): Set<string> {
    if (this.dead) throw new Killed(`${name} (the tab is gone)`);
    this.steps.push(name);
    const wrote = new Set<string>();
    this.wrote.push(wrote);
    if (this.steps.length === this.at) {
      this.dead = true;
      throw new Killed(`killed before ${name}`);
    }
    return wrote;
  }
}

/** The database with every write transaction counted as a step, and what it writes noted. */
function counted(db: TealeafDb, killer: Killer): TealeafDb {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return (stores: string | string[], mode?: IDBTransactionMode, opts?: IDBTransactionOptions) => {
          const tx = target.transaction(stores as never, mode, opts);
          if (mode !== 'readwrite') return tx;
          const wrote = killer.step('a write');
          return new Proxy(tx, {
            get(t, p) {
              if (p !== 'objectStore') return Reflect.get(t, p, t);
              return (name: string) => {
                const store = t.objectStore(name as never);
                return new Proxy(store, {
                  get(st, q) {
                    const v: unknown = Reflect.get(st, q, st);
                    if (q !== 'put' && q !== 'delete' && q !== 'clear')
                      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(st) : v;
                    return (...args: unknown[]) => {
                      if (name === 'sync') wrote.add(rowWords(q, args[0]));
                      else wrote.add(q === 'clear' ? 'a wipe' : 'records');
                      return (v as (...a: unknown[]) => unknown).apply(st, args);
                    };
                  },
                });
              };
            },
          });
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A sync row written or deleted, by its key (numbered keys shortened: `doc:u:…`, `out:…`). */
function rowWords(op: string | symbol, arg: unknown): string {
  const short = (k: string) => k.replace(/:[0-9][^:]*$/, ':…');
  if (op === 'put') return short(String((arg as { key?: unknown }).key));
  if (op === 'clear') return 'every sync row cleared';
  const key = typeof arg === 'string' ? short(arg) : `${String((arg as IDBKeyRange).lower)}*`;
  return `${key} deleted`;
}

/** What a step wrote, in words: "records, state, config" (sync rows by their key). */
export function wroteWords(wrote: Set<string> | undefined): string {
  if (!wrote || wrote.size === 0) return 'a write';
  const order = (x: string) => (x === 'records' || x === 'a wipe' ? 0 : 1);
  return [...wrote].sort((a, b) => order(a) - order(b) || (a < b ? -1 : 1)).join(', ');
}

/** fetch with every post to the relay counted as a step. */
function countedFetch(killer: Killer): typeof fetch {
  return (input, init) => {
    if (init?.method === 'POST')
      killer.step(
        String(input).includes('/pair-')
          ? 'a post to the pairing mailbox'
          : String(input).includes('compact=')
            ? 'the post of a snapshot (compact)'
            : 'a post to the relay',
      );
    return fetch(input, init);
  };
}

export interface Device {
  name: string;
  factory: IDBFactory;
  repo: IdbRepository;
  sync: SyncService;
  killer: Killer;
  options: SyncServiceOptions;
}

export async function device(name: string, options: SyncServiceOptions = {}): Promise<Device> {
  const factory = freshFactory();
  return open(name, factory, options);
}

async function open(name: string, factory: IDBFactory, options: SyncServiceOptions = {}): Promise<Device> {
  const killer = new Killer();
  const repo = new IdbRepository(counted(await openTealeafDb({ factory }), killer));
  const sync = onDevice(name, () => new SyncService(repo, { ...options, fetch: countedFetch(killer) }));
  return { name, factory, repo, sync, killer, options };
}

/** The tab is gone (killed or closed): a new one opens the same database and resumes (unless `start` is false). */
export async function reopen(d: Device, start = true): Promise<Device> {
  d.killer.dead = true;
  d.sync.stop();
  // Whatever the dead tab still had in flight fails against the dead killer. A read of every store
  // waits for the write transactions it had already begun: none lands after the new tab has read.
  const db = d.repo.db;
  await db.transaction(Array.from(db.objectStoreNames), 'readonly').done;
  d.repo.close();
  const again = await open(d.name, d.factory, d.options);
  if (start) await again.sync.start();
  return again;
}

/** A relay on 127.0.0.1 with its own folder; closed by `closers`. */
export async function relayFor(closers: Array<() => Promise<void> | void>, waitMs = 2000) {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-faults-')), waitMs });
  closers.push(() => relay.close());
  return relay;
}

/**
 * Each device's loop is idle: synced, nothing waiting to be sent, and waiting on the relay with
 * nothing woken since (a status says "synced" from the round before too).
 */
export async function settled(what: string, ...ds: Device[]): Promise<void> {
  await until(what, () => ds.every((d) => d.sync.idle && d.sync.status.phase === 'synced' && !d.sync.status.pending));
}

/**
 * Nothing more will happen on this device until something new does: its loop waits (idle), nothing
 * is waiting to be sent, and the relay holds nothing after what it has read (the loop's long poll
 * would wake for that).
 */
export async function quiet(d: Device, relayUrl: string): Promise<boolean> {
  if (!d.sync.idle || d.sync.status.pending) return false;
  const engine = d.sync['engine'];
  if (!engine) return true;
  const position = engine.position;
  const { last } = await new RelayClient(relayUrl).read(engine.room, position, 1);
  return last <= position && d.sync.idle;
}

/** Runs `action` with the device's tab killed at step `at` (Infinity: not killed). True when it was killed. */
export async function killedAt(
  d: Device,
  at: number,
  action: () => Promise<unknown>,
  done: () => Promise<boolean> | boolean,
): Promise<boolean> {
  d.killer.arm(at);
  try {
    await action();
    await until('the action to end', async () => d.killer.dead || (await done()));
  } catch (e) {
    if (!(e instanceof Killed) && !d.killer.dead) throw e;
  }
  return d.killer.dead;
}
