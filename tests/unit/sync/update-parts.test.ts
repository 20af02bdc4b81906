// A large remote update is applied in parts (update-parts.ts). Applied in
// order, the parts give exactly the document the whole update gives: checked on generated
// histories of several devices (sets, overwrites, deletes, cleared maps, updates that start mid-way).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { startRelay } from '../../../relay/relay.mjs';
import { Sealer } from '../../../src/services/sync/envelope';
import { SyncEngine, type SyncState } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import { generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { updateParts } from '../../../src/services/sync/update-parts';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { memory, session } from './records';

/** Everything a document holds, comparable. */
function contents(doc: Y.Doc): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of ['a', 'b', 'meta']) out[name] = doc.getMap(name).toJSON();
  return out;
}

const op = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    map: fc.constantFrom('a', 'b'),
    key: fc.integer({ min: 0, max: 30 }),
    value: fc.string(),
  }),
  fc.record({ kind: fc.constant('delete' as const), map: fc.constantFrom('a', 'b'), key: fc.integer({ min: 0, max: 30 }) }),
  fc.record({ kind: fc.constant('clear' as const), map: fc.constantFrom('a', 'b') }),
  fc.record({ kind: fc.constant('sync' as const) }),
);

describe('an update in parts', () => {
  it('applied part by part, gives the same document as the whole, for any history of three devices', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), op), { maxLength: 80 }),
        fc.integer({ min: 1, max: 7 }),
        (ops, size) => {
          const docs = [new Y.Doc(), new Y.Doc(), new Y.Doc()];
          const mark = Y.encodeStateVector(docs[0]);
          for (const [who, o] of ops) {
            const d = docs[who];
            if (o.kind === 'set') d.getMap(o.map).set(String(o.key), { text: o.value, n: o.key });
            else if (o.kind === 'delete') d.getMap(o.map).delete(String(o.key));
            else if (o.kind === 'clear') d.getMap(o.map).clear();
            else Y.applyUpdate(docs[(who + 1) % 3], Y.encodeStateAsUpdate(d));
          }
          for (const d of docs.slice(1)) Y.applyUpdate(docs[0], Y.encodeStateAsUpdate(d));
          // The whole history, and a part of it that starts mid-way (what a later message holds).
          for (const update of [Y.encodeStateAsUpdate(docs[0]), Y.encodeStateAsUpdate(docs[0], mark)]) {
            const whole = new Y.Doc();
            Y.applyUpdate(whole, update);
            const parted = new Y.Doc();
            for (const part of updateParts(update, size)) Y.applyUpdate(parted, part);
            expect(contents(parted)).toEqual(contents(whole));
            expect(Y.encodeStateVector(parted)).toEqual(Y.encodeStateVector(whole));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('cuts 20,000 records into parts of at most 500', () => {
    const doc = new Y.Doc();
    doc.transact(() => {
      for (let i = 0; i < 20_000; i++) doc.getMap('e0/memories').set(`m${i}`, { id: `m${i}`, text: `memory ${i}` });
    });
    const parts = [...updateParts(Y.encodeStateAsUpdate(doc), 500)];
    expect(parts.length).toBe(41); // 40 runs and the delete set
    const parted = new Y.Doc();
    for (const p of parts) Y.applyUpdate(parted, p);
    expect(parted.getMap('e0/memories').size).toBe(20_000);
  });
});

describe('a device receiving thousands of records in one message', () => {
  it('merges and writes them in parts, each with what is left; a crash half-way resumes with the rest', async () => {
    const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-parts-')) });
    try {
      const key = await generateSyncKey();
      const room = await roomOf(key);
      const sealer = await Sealer.of(key, room);
      const client = new RelayClient(relay.url);
      const engine = (id: string, store = new InMemoryRepository(), state?: SyncState) =>
        new SyncEngine({ store, relay: client, room, sealer, deviceId: id, wipe: async () => undefined, state });
      const a = engine('a'.repeat(32));
      await writeLocal(a, { sessions: [session], memories: Array.from({ length: 5000 }, (_, i) => memory(`m${i}`, `memory number ${i}`)) });
      await a.push();
      expect((await client.read(room, 0)).last).toBe(1);

      const b = new InMemoryRepository();
      await engine('b'.repeat(32), b).pull();
      expect(b.memories.size).toBe(5000);
      expect(b.commits).toBeGreaterThanOrEqual(10);

      // The tab dies at the fourth write: three parts are in, the state written with them names the rest.
      let writes = 0;
      let saved: SyncState | undefined;
      const c = new InMemoryRepository({
        beforeApply: () => {
          if (++writes === 4) throw new Error('tab killed');
        },
      });
      const dying = engine('c'.repeat(32), c);
      const apply = c.apply.bind(c);
      c.apply = async (change) => {
        const done = await apply(change);
        saved = dying.state();
        return done;
      };
      await expect(dying.pull()).rejects.toThrow('tab killed');
      expect(c.memories.size).toBeLessThan(5000);
      expect(saved!.unapplied!.flatMap(([, ids]) => ids).length).toBe(5001 - c.memories.size - c.sessions.size);
      writes = -Infinity;
      c.apply = apply;
      await engine('c'.repeat(32), c, saved).pull();
      expect(c.memories.size).toBe(5000);
    } finally {
      await relay.close();
    }
  });
});
