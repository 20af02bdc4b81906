// Backups with awkward link structures, built in the test: one memory with
// very many links, and link cycles. Shared by tests/e2e/explorer-scale.spec.mjs and
// bench/explorer-links.mjs.

const T0 = Date.UTC(2024, 0, 1);
const MIN = 60_000;
const RELS = ['Cause', 'Reason', 'SameTopic', 'React', 'Want', 'HinderedBy', 'Changed'];

function memory(id, text, minute, sessionId) {
  return {
    id,
    kind: 'event',
    text,
    time: T0 + minute * MIN,
    sourceTurnIds: [],
    sessionId,
    edited: false,
    createdAt: T0 + minute * MIN,
  };
}

function edge(id, from, to, relation, minute) {
  return { id, from, to, relation, origin: 'model', createdAt: T0 + minute * MIN };
}

function backup(sessions, memories, edges) {
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: T0 + 10_000_000 * MIN,
    data: { sessions, turns: [], memories, edges, segments: [], settings: [] },
  };
}

function session(id, title) {
  return { id, title, startedAt: T0, lastActivityAt: T0, endedAt: T0, status: 'memorised', endReason: 'import' };
}

/**
 * One hub memory with `links` links: the first `incoming` come into it from older memories (so
 * the detail panel lists them first), the rest leave it for newer ones. Every other memory has
 * exactly one link (to or from the hub). The hub is neither the oldest nor the newest memory.
 */
export function hubBackup(links, { incoming = 3 } = {}) {
  const memories = [];
  const edges = [];
  const hubMinute = incoming + 1;
  for (let i = 0; i < incoming; i++) {
    const id = `hub-in-${i}`;
    memories.push(memory(id, `Before the hub, memory ${i}: a walk by the river.`, i + 1, 'hub-s'));
    edges.push(edge(`e-in-${i}`, id, 'hub', RELS[i % RELS.length], hubMinute));
  }
  memories.push(memory('hub', 'The hub memory: the day everything changed.', hubMinute, 'hub-s'));
  for (let i = 0; i < links - incoming; i++) {
    const id = `hub-out-${i}`;
    memories.push(memory(id, `After the hub, memory ${i}: a letter from a friend.`, hubMinute + 1 + i, 'hub-s'));
    edges.push(edge(`e-out-${i}`, 'hub', id, RELS[i % RELS.length], hubMinute + 1 + i));
  }
  // One memory before everything, unlinked, so Home on the timeline does not land on the hub by chance.
  memories.push(memory('lonely', 'An unlinked memory from long ago.', -10, 'hub-s'));
  return backup([session('hub-s', 'The hub chat')], memories, edges);
}

/**
 * Link cycles: A→B→C→A (three memories), D↔E (two edges, one each way) and a self-link F→F,
 * with F also linked to G so it has a link that stays. Texts are unique per memory.
 */
export function cycleBackup() {
  const memories = [
    memory('cyc-a', 'Cycle A: planted the apple tree.', 1, 'cyc-s'),
    memory('cyc-b', 'Cycle B: the apple tree bloomed.', 2, 'cyc-s'),
    memory('cyc-c', 'Cycle C: made apple pie.', 3, 'cyc-s'),
    memory('pair-d', 'Pair D: met Dana at the market.', 4, 'cyc-s'),
    memory('pair-e', 'Pair E: Dana called back.', 5, 'cyc-s'),
    memory('self-f', 'Self F: kept a diary.', 6, 'cyc-s'),
    memory('self-g', 'Self G: read the old diary.', 7, 'cyc-s'),
  ];
  const edges = [
    edge('c-ab', 'cyc-a', 'cyc-b', 'Cause', 2),
    edge('c-bc', 'cyc-b', 'cyc-c', 'Cause', 3),
    edge('c-ca', 'cyc-c', 'cyc-a', 'React', 3),
    edge('p-de', 'pair-d', 'pair-e', 'Want', 5),
    edge('p-ed', 'pair-e', 'pair-d', 'React', 5),
    edge('s-ff', 'self-f', 'self-f', 'SameTopic', 6),
    edge('s-fg', 'self-f', 'self-g', 'Cause', 7),
  ];
  return backup([session('cyc-s', 'Cycles')], memories, edges);
}
