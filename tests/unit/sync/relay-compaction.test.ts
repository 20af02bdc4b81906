// A read of a room while a compacting post rewrites its log must hand out only messages that were
// posted. The store renames the rewritten log over the old one, then updates its in-memory offsets;
// a read in between read the new file at the old offsets (zero bytes), and a device refused such a
// message as malformed and moved its cursor past it, missing what another device posted (a
// delete-all's question, tests/unit/sync/remote-reset.test.ts, one run in some thirty on a busy
// machine). Reads now wait for the room's queued writes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { utf8 } from '../../../src/services/sync/bytes';
import { generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (open.length) await open.pop()!();
});

describe('the relay while it compacts a room', () => {
  it('a read during a compacting post hands out only messages that were posted', async () => {
    const relay = await startRelay({
      port: 0,
      dir: mkdtempSync(join(tmpdir(), 'tealeaf-compact-read-')),
      limits: { addressRoomsPerHour: 1000, roomPostsPerMinute: 1000, addressPostsPerMinute: 1000 },
    });
    open.push(relay.close);
    const client = new RelayClient(relay.url);
    const strange: string[] = [];
    // Rounds until a read fell inside a rewrite (each round reads for as long as its post takes).
    for (let round = 0; round < 40 && strange.length === 0; round++) {
      const room = await roomOf(await generateSyncKey());
      const posted = new Set<string>();
      const post = async (text: string, compact?: number) => {
        posted.add(text);
        await client.post(room, utf8(text), undefined, compact);
      };
      for (let i = 1; i <= 4; i++) await post(`message ${i} `.padEnd(100 * i, '.'));
      let done = false;
      const compacting = post('the snapshot '.padEnd(600, '.'), 4).then(() => (done = true));
      while (!done) {
        for (const m of (await client.read(room, 3)).messages) {
          const text = Buffer.from(m.bytes).toString();
          if (!posted.has(text)) strange.push(`seq ${m.seq}: ${JSON.stringify(text.slice(0, 12))}`);
        }
      }
      await compacting;
    }
    expect(strange).toEqual([]);
  });
});
