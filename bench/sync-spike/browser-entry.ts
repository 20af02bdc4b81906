// The sync foundations in Chromium (bench/sync-spike/browser-smoke.mjs): pairing by code through
// the relay, a first sync of N memories between two engines in this page, and single changes.
import { SyncEngine } from '../../src/services/sync/engine';
import { Sealer } from '../../src/services/sync/envelope';
import { generateDevice, generateSyncKey, roomOf } from '../../src/services/sync/keys';
import { newPairingCode, payloadOf } from '../../src/services/sync/pairing';
import { joinWithCode, offerPairing } from '../../src/services/sync/pairing-session';
import { RelayClient } from '../../src/services/sync/relay-client';
import { InMemoryRepository } from '../../tests/support/in-memory-repository';
import { writeLocal } from '../../tests/unit/sync/local-write';
import { makeMemories } from './records.mjs';

async function run(relayUrl: string, n: number) {
  const relay = new RelayClient(relayUrl);
  const laptop = await generateDevice('Laptop');
  const key = await generateSyncKey();
  const code = newPairingCode();
  const { joined: offered } = await offerPairing(relay, code, payloadOf(key, [laptop.info], relayUrl));
  const phone = await joinWithCode(relay, code, 'Phone');
  await offered;
  const room = await roomOf(key);
  const engine = async (id: string, store: InMemoryRepository, k = key) =>
    new SyncEngine({ store, relay, room: await roomOf(k), sealer: await Sealer.of(k, room), deviceId: id, wipe: async () => undefined });

  const storeA = new InMemoryRepository();
  const records = makeMemories(n);
  for (let i = 0; i < n; i += 5000) await storeA.apply({ memories: records.slice(i, i + 5000) });
  const a = await engine(laptop.info.id, storeA);
  const tUp = performance.now();
  await a.adoptStore();
  const uploadMs = performance.now() - tUp;

  const long: number[] = [];
  const obs = new PerformanceObserver((l) => l.getEntries().forEach((e) => long.push(e.duration)));
  obs.observe({ type: 'longtask', buffered: false });
  const storeB = new InMemoryRepository();
  const b = await engine(phone.device.info.id, storeB, phone.key);
  const t0 = performance.now();
  await b.pull();
  const firstSyncMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 100));
  obs.disconnect();

  const lat: number[] = [];
  let cursor = (await relay.read(room, 0, 1)).last;
  for (let i = 0; i < 11; i++) {
    const t = performance.now();
    const waiting = relay.wait(room, cursor).then(() => b.pull());
    await writeLocal(a, { memoryPatches: [{ id: records[i].id, text: `edited ${i}`, edited: true }] });
    await a.push();
    await waiting;
    if (storeB.memories.get(records[i].id)?.text !== `edited ${i}`) throw new Error('change lost');
    lat.push(performance.now() - t);
    cursor++;
  }
  lat.sort((x, y) => x - y);
  return {
    paired: phone.key.id === key.id,
    n,
    received: storeB.memories.size,
    uploadMs: Math.round(uploadMs),
    firstSyncMs: Math.round(firstSyncMs),
    longTasks: long.length,
    longestTaskMs: Math.round(Math.max(0, ...long)),
    changeMedianMs: Math.round(lat[5]),
  };
}

(globalThis as unknown as { runSmoke: typeof run }).runSmoke = run;
