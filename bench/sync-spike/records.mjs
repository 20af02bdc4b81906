// Memory-sized records for the sync spike (docs/SYNC.md): the fields and typical lengths of a
// stored Memory (src/memory/types.ts), deterministic so every candidate syncs the same bytes.
import { gzipSync } from 'node:zlib';

const WORDS =
  'the user said she likes hiking in autumn and her sister moved to Lisbon last spring after a new job at a small design studio near the river'.split(
    ' ',
  );

function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}
const hex = (r, n) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
const uuid = (r) => `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`;

export function makeMemories(n, seed = 1) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = 18 + Math.floor(r() * 30);
    const text = Array.from({ length: len }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
    const time = 1.6e12 + Math.floor(r() * 1e11);
    out.push({
      id: `mem:${uuid(r)}`,
      kind: ['event', 'user-trait', 'assistant-trait', 'note'][i % 4],
      text,
      subject: 'user',
      time,
      sourceTurnIds: [uuid(r), uuid(r)],
      sessionId: uuid(r),
      edited: false,
      createdAt: time + 1000,
    });
  }
  return out;
}

/** The gzipped size of a backup holding just these records (the 1.5x yardstick). */
export function gzippedBackupBytes(records) {
  return gzipSync(JSON.stringify({ format: 'tealeaf-backup', version: 1, data: { memories: records } })).length;
}

export const mb = (bytes) => Math.round(bytes / 1e5) / 10;
