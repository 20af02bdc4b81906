// Writing what sync merged into this device's store (docs/SYNC.md, "Engine"): the keys a merge
// touched go to the store through its `apply`, in parts, past the gate that holds back what
// another device sent malformed; what a failed write left is written at the next pull. Also how
// this device follows another's delete-all (wipe, or keep its data in the new epoch).
import type { Epoch, Kind, RecordDoc, Admit, Touched } from './record-doc';
import { Quarantine, type Quarantined } from './record-gate';
import { storeAsChange } from './store-records';
import type { SyncEngineOptions } from './engine-types';
import { PART, inKeyParts, unionOf } from './touched';
import { breathe } from './update-parts';

type WriterOptions = Pick<SyncEngineOptions, 'store' | 'wipe' | 'onReset' | 'joinedAt'>;

export class StoreWriter {
  /** Keys merged into the document whose write to the store has not happened (or failed). */
  unapplied: Touched;
  readonly quarantine: Quarantine;

  constructor(
    private readonly records: RecordDoc,
    private readonly o: WriterOptions,
    saved?: { unapplied?: Array<[string, string[]]>; quarantine?: Quarantined[] },
  ) {
    this.unapplied = new Map((saved?.unapplied ?? []).map(([k, ids]) => [k as Kind, new Set(ids)]));
    this.quarantine = new Quarantine(saved?.quarantine);
  }

  /** What is left to write, as the engine's saved state keeps it. */
  saved(): Array<[string, string[]]> {
    return [...this.unapplied].map(([k, ids]) => [k, [...ids]]);
  }

  /**
   * Writes the touched keys (and any left from a failed write) to the store through `apply`, in
   * parts of at most PART records (what others refer to first), letting the page breathe between
   * them. Each part's write keeps the state with what is still left to write, so a tab closed
   * half-way resumes with the rest.
   */
  async catchUp(touched: Touched, from?: string): Promise<void> {
    const keys: Touched = this.unapplied;
    for (const [kind, ids] of touched) {
      const set = keys.get(kind) ?? new Set<string>();
      ids.forEach((id) => set.add(id));
      keys.set(kind, set);
    }
    const parts = inKeyParts(keys, PART);
    for (let i = 0; i < parts.length; i++) {
      // Out of `unapplied` while written: the state saved with the records lists only the rest.
      this.unapplied = unionOf(parts.slice(i + 1));
      try {
        await this.o.store.apply(await this.records.changeFor(parts[i], this.o.store, this.gate(from)));
      } catch (e) {
        this.unapplied = unionOf(parts.slice(i));
        throw e;
      }
      if (i + 1 < parts.length) await breathe();
    }
    this.unapplied = new Map();
  }

  /** The gate for what `from` sent: a record that fails it is held back, named, and not written. */
  private gate(from?: string): Admit {
    const admit: Admit = (kind, key, value) => this.quarantine.admit(kind, key, value, from);
    admit.release = (kind, key) => this.quarantine.release(kind, key);
    return admit;
  }

  /**
   * Another device deleted everything (the document is in its new epoch already): wipe here, or
   * keep this device's data and write it into the new epoch. Either way in as few transactions as
   * can be, each with the state that says where it stands: "keep" wipes nothing (its data and the
   * new epoch's records are written together); "wipe" writes the new epoch and what is left to
   * write with the wipe itself.
   */
  async reset(choice: 'wipe' | 'keep'): Promise<void> {
    if (choice === 'keep') {
      this.records.record(await storeAsChange(this.o.store));
      await this.catchUp(this.records.everything());
      return;
    }
    this.unapplied = this.records.everything();
    await this.o.wipe();
    await this.catchUp(new Map());
  }

  /** Asks how to follow another device's delete-all (default: wipe). */
  askReset(epoch: Epoch): Promise<'wipe' | 'keep'> {
    // A delete-all from before this device was paired: it joins the epoch with what it brought.
    if (epoch.at < (this.o.joinedAt ?? -Infinity)) return Promise.resolve('keep');
    return this.o.onReset?.(epoch) ?? Promise.resolve('wipe');
  }
}
