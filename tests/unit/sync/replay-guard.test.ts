// The replay guard once marked a message seen before it was
// processed, so a message whose processing failed (a passing failure: the key store busy, the
// question about a delete-all not answered) was refused as a replay when read again, for good.
// Now a message is marked only once it did what it means, with the state written after it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { utf8 } from '../../../src/services/sync/bytes';
import { Sealer } from '../../../src/services/sync/envelope';
import { generateDevice, generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { onRotationOf, signedRotation } from './ring-helpers';
import { KIND, encodeBody } from '../../../src/services/sync/messages';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { SyncEngine, type SyncEngineOptions } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { memory, session } from './records';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function world() {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-guard-')) });
  closers.push(() => relay.close());
  const key = await generateSyncKey();
  const room = await roomOf(key);
  const sealer = await Sealer.of(key, room);
  const client = new RelayClient(relay.url);
  const engine = (id: string, opts: Partial<SyncEngineOptions> = {}) => {
    const store = new InMemoryRepository();
    return { store, engine: new SyncEngine({ store, relay: client, room, sealer, deviceId: id, wipe: async () => undefined, ...opts }) };
  };
  return { client, key, room, sealer, engine };
}

describe('a message whose processing failed', () => {
  it('a key change is taken when read again, not refused as a replay', async () => {
    const w = await world();
    const [laptop, phone] = await Promise.all([generateDevice('Laptop'), generateDevice('Phone')]);
    let busy = 1;
    const ring = [laptop.info, phone.info];
    const accept = onRotationOf(phone, w.key, ring);
    const a = w.engine(laptop.info.id);
    const b = w.engine(phone.info.id, {
      onRotation: async (notice) => {
        if (busy-- > 0) throw new Error('the key store is busy');
        return accept(notice);
      },
    });
    await writeLocal(a.engine, { sessions: [session], memories: [memory('m1', 'before the new key')] });
    await a.engine.push();
    await b.engine.pull();
    const { key, notice } = await signedRotation(laptop, w.key, ring, ring);
    await a.engine.rekey(key, notice);
    await expect(b.engine.pull()).rejects.toThrow('busy');
    await b.engine.pull();
    expect(b.engine.state().room).toBe(await roomOf(key));
    expect(b.engine.refused).toBe(0);
    await writeLocal(a.engine, { memories: [memory('m2', 'after the new key')] });
    await a.engine.push();
    await b.engine.pull();
    expect(b.store.memories.has('m2')).toBe(true);
  });

  it('another device’s delete-all is asked again when the first question was not answered', async () => {
    const w = await world();
    let asked = 0;
    const a = w.engine('a'.repeat(32));
    const b = w.engine('b'.repeat(32), {
      onReset: async () => {
        if (asked++ === 0) throw new Error('the question was closed');
        return 'wipe';
      },
    });
    await writeLocal(a.engine, { sessions: [session], memories: [memory('m1', 'one')] });
    await a.engine.push();
    await b.engine.pull();
    await a.engine.deleteAll();
    await a.engine.push();
    await expect(b.engine.pull()).rejects.toThrow('closed');
    await b.engine.pull();
    expect(asked).toBe(2);
    expect(b.engine.records.epoch).toEqual(a.engine.records.epoch);
    expect(b.engine.refused).toBe(0);
  });

  it('an authentic message that does not parse is refused once, and what comes after applies', async () => {
    const w = await world();
    const a = w.engine('a'.repeat(32));
    const b = w.engine('b'.repeat(32));
    const refusals: string[] = [];
    const c = w.engine('c'.repeat(32), { onRefused: (_, e) => refusals.push(e.reason) });
    await w.client.post(w.room, await w.sealer.seal('b'.repeat(32), 1, encodeBody(KIND.update, 0, 0, utf8('not gzip at all'))));
    await writeLocal(a.engine, { sessions: [session], memories: [memory('m1', 'after the broken one')] });
    await a.engine.push();
    await c.engine.pull();
    await c.engine.pull();
    expect(refusals).toEqual(['malformed']);
    expect(c.store.memories.has('m1')).toBe(true);
    void b;
  });
});
