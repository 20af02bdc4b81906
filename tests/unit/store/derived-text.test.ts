// No deleted fact lives on: a reply's stored notes (usedMemory.refined) and the ids it
// drew on follow their memories. Run against both repositories, since both settle every change
// the same way; the IndexedDB one also through its migration and a backup import.
import { describe, expect, it } from 'vitest';
import { freshFactory } from './helpers';
import { IdbRepository } from '../../../src/store/repository';
import { openTealeafDb } from '../../../src/store/db';
import { MIGRATIONS } from '../../../src/store/schema';
import { exportBackup, importBackup, serializeBackup } from '../../../src/store/backup';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { followSources, turnSources } from '../../../src/memory/derived';
import type { Repository } from '../../../src/ports';
import type { BranchTurn, Memory, Session, Turn, UsedMemory } from '../../../src/memory/types';

const SECRET = 'diagnosed with epilepsy';
const session = (id: string): Session => ({ id, title: id, startedAt: 1, lastActivityAt: 1, status: 'ended' });
const memory = (id: string, text: string, extra: Partial<Memory> = {}): Memory => ({
  id,
  kind: 'event',
  text,
  time: 10,
  sourceTurnIds: [],
  sessionId: 'old',
  edited: false,
  createdAt: 10,
  ...extra,
});

/** Two timelines: [m1 -> m2] whose note repeats the secret, and [m3] about something else. */
const used = (): UsedMemory => ({
  memoryIds: ['m2', 'm3'],
  segmentIds: [],
  timelines: [
    { memoryIds: ['m1', 'm2'], relations: ['Cause'], through: 'm2' },
    { memoryIds: ['m3'], relations: [], through: 'm3' },
  ],
  refined: [`Earlier the user told you they were ${SECRET}.`, 'They like long walks.'],
  scores: [
    { unitId: 'm2', unitKind: 'memory', fused: 0.5 },
    { unitId: 'm3', unitKind: 'memory', fused: 0.4 },
  ],
  personaIds: ['m4'],
});
const reply = (extra: Partial<Turn> = {}): Turn => ({
  id: 't1',
  sessionId: 'now',
  index: 1,
  role: 'assistant',
  text: 'Hello again.',
  time: 500,
  status: 'complete',
  usedMemory: used(),
  ...extra,
});

async function seeded(repo: Repository, turn: Turn = reply()) {
  await repo.apply({
    sessions: [session('old'), session('now')],
    memories: [
      memory('m1', `The user was ${SECRET}.`),
      memory('m2', 'The user started a new medicine.'),
      memory('m3', 'The user walks every day.'),
      memory('m4', 'The user is a teacher.', { kind: 'user-trait' }),
    ],
    turns: [turn],
  });
  return repo;
}

const stored = async (repo: Repository) => (await repo.getTurns(['t1']))[0]!;
const holdsSecret = (t: Turn) => JSON.stringify(t).includes(SECRET);

const repos: Array<[string, () => Promise<Repository>]> = [
  ['in-memory', async () => new InMemoryRepository()],
  ['IndexedDB', async () => IdbRepository.open({ factory: freshFactory() })],
];

describe.each(repos)('%s repository: derived text follows its memories', (_name, make) => {
  it('a written reply records the memories it drew on', async () => {
    const repo = await seeded(await make());
    expect((await stored(repo)).drewOn).toEqual(['m1', 'm2', 'm3', 'm4']);
  });

  it('deleting a memory takes the timeline and note built from it, and its id, out of every reply', async () => {
    const repo = await seeded(await make());
    const applied = await repo.apply({ deleteMemories: ['m1'] });
    const t = await stored(repo);
    expect(holdsSecret(t)).toBe(false);
    // The timeline keeps the unbroken part around the memory it was retrieved through; the other
    // timeline keeps its own note.
    expect(t.usedMemory!.timelines).toEqual([
      { memoryIds: ['m2'], relations: [], through: 'm2' },
      { memoryIds: ['m3'], relations: [], through: 'm3' },
    ]);
    expect(t.usedMemory!.refined).toEqual(['', 'They like long walks.']);
    expect(t.drewOn).toEqual(['m2', 'm3', 'm4']);
    // The caller is told, so the live views follow.
    expect(applied.turns?.map((x) => x.id)).toEqual(['t1']);
  });

  it('a timeline whose retrieved memory is deleted goes whole', async () => {
    const repo = await seeded(await make());
    await repo.apply({ deleteMemories: ['m2'] });
    const t = await stored(repo);
    expect(holdsSecret(t)).toBe(false);
    expect(t.usedMemory!.timelines.map((x) => x.through)).toEqual(['m3']);
    expect(t.usedMemory!.memoryIds).toEqual(['m3']);
    expect(t.usedMemory!.scores.map((x) => x.unitId)).toEqual(['m3']);
  });

  it('editing or ending a memory drops the note written from its old words, not the memory', async () => {
    for (const patch of [
      { id: 'm2', text: 'The user stopped the medicine.', edited: true },
      { id: 'm2', endedAt: 900 },
    ]) {
      const repo = await seeded(await make());
      await repo.apply({ memoryPatches: [patch] });
      const t = await stored(repo);
      expect(holdsSecret(t), JSON.stringify(patch)).toBe(false);
      expect(t.usedMemory!.timelines).toHaveLength(2);
      expect(t.usedMemory!.refined).toEqual(['', 'They like long walks.']);
      expect(t.usedMemory!.memoryIds).toEqual(['m2', 'm3']);
    }
  });

  it('a memory replaced by a job (a put with other words) counts as edited', async () => {
    const repo = await seeded(await make());
    await repo.apply({ memories: [memory('m1', 'The user had a check-up.')] });
    expect(holdsSecret(await stored(repo))).toBe(false);
  });

  it('a change that touches no source leaves the reply alone', async () => {
    const repo = await seeded(await make());
    const applied = await repo.apply({ memoryPatches: [{ id: 'm4', edited: true }], memories: [memory('m9', 'New.')] });
    expect(applied.turns).toBeUndefined();
    expect((await stored(repo)).usedMemory).toEqual(used());
  });

  it('removing the persona trait takes it out of personaIds', async () => {
    const repo = await seeded(await make());
    await repo.apply({ deleteMemories: ['m4'] });
    const t = await stored(repo);
    expect(t.usedMemory!.personaIds).toBeUndefined();
    expect(t.usedMemory!.refined).toEqual(used().refined);
  });

  it('a late save of the reply being written cannot bring a removed note back', async () => {
    const repo = await seeded(await make(), reply({ status: 'streaming', text: 'Hel' }));
    await repo.apply({ memoryPatches: [{ id: 'm1', text: 'The user had a check-up.', edited: true }] });
    // The reply saver still holds the usedMemory it was prepared with.
    await repo.apply({ turns: [reply({ status: 'complete', text: 'Hello again.' })] });
    const t = await stored(repo);
    expect(t.text).toBe('Hello again.');
    expect(holdsSecret(t)).toBe(false);
    expect(t.usedMemory!.refined).toEqual(['', 'They like long walks.']);
  });

  it('a save that names a memory deleted before it loses that memory', async () => {
    const repo = await seeded(await make());
    await repo.apply({ deleteMemories: ['m1'] });
    await repo.apply({ turns: [reply({ time: 700 })] });
    const t = await stored(repo);
    expect(holdsSecret(t)).toBe(false);
    expect(t.drewOn).toEqual(['m2', 'm3', 'm4']);
  });

  it('a regenerated reply (another time) keeps the notes it was prepared with', async () => {
    const repo = await seeded(await make());
    await repo.apply({ memoryPatches: [{ id: 'm1', text: 'The user had a check-up.', edited: true }] });
    const fresh = reply({ time: 800, usedMemory: { ...used(), refined: ['They had a check-up.', 'They like long walks.'] } });
    await repo.apply({ turns: [fresh] });
    expect((await stored(repo)).usedMemory!.refined).toEqual(['They had a check-up.', 'They like long walks.']);
  });

  it('versions put away (an edited or regenerated turn) follow too', async () => {
    const old: Turn = reply({ id: 't2', index: 3, time: 300 });
    const put: BranchTurn = {
      id: old.id,
      role: old.role,
      text: old.text,
      time: old.time,
      status: old.status,
      usedMemory: old.usedMemory,
      follows: { turnId: 't1', version: 0 },
    };
    const repo = await seeded(
      await make(),
      reply({
        usedMemory: undefined,
        versions: [{ text: 'Before', time: 200, status: 'complete', usedMemory: used() }],
        branches: [put],
      }),
    );
    expect((await stored(repo)).drewOn).toEqual(['m1', 'm2', 'm3', 'm4']);
    await repo.apply({ deleteMemories: ['m1'] });
    const t = await stored(repo);
    expect(holdsSecret(t)).toBe(false);
    expect(t.branches![0]!.usedMemory!.timelines.map((x) => x.memoryIds)).toEqual([['m2'], ['m3']]);
  });

  it('deleting the chat of the reply and the memory in one change writes no turn back', async () => {
    const repo = await seeded(await make());
    const applied = await repo.apply({ deleteSessions: ['now'], deleteTurns: ['t1'], deleteMemories: ['m1'] });
    expect(applied.turns).toBeUndefined();
    expect(await repo.getTurns(['t1'])).toEqual([]);
  });
});

describe.each(repos)('%s repository: the re-query keywords follow what the reflection was shown', (_name, make) => {
  // The reflection was shown m1 and m5 (m5 did not reach the prompt) and wrote keywords from them.
  const KEYWORDS = 'epilepsy seizure clinic';
  const reflected = (extra: Partial<Turn> = {}) =>
    reply({ usedMemory: { ...used(), reflected: 'searched', requery: KEYWORDS, reflectedOn: ['m1', 'm5'] }, ...extra });
  const seed = async (turn: Turn = reflected()) => {
    const repo = await make();
    await repo.apply({ memories: [memory('m5', 'The user visited a clinic.')], sessions: [session('old')] });
    return seeded(repo, turn);
  };

  it('a reply records what its reflection was shown among what it drew on', async () => {
    expect((await stored(await seed())).drewOn).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
  });

  it('deleting, editing or ending a memory it was shown takes the keywords out, and says a search ran', async () => {
    for (const change of [
      { deleteMemories: ['m5'] },
      { memoryPatches: [{ id: 'm5', text: 'The user skipped the clinic.', edited: true }] },
      { memoryPatches: [{ id: 'm1', endedAt: 900 }] },
    ]) {
      const repo = await seed();
      await repo.apply(change);
      const u = (await stored(repo)).usedMemory!;
      expect(JSON.stringify(u), JSON.stringify(change)).not.toContain(KEYWORDS);
      expect(u.reflected).toBe('searched');
      expect(u.reflectedOn).toBeUndefined();
    }
    // Only the keywords: what the reply used stays as it was.
    const repo = await seed();
    await repo.apply({ deleteMemories: ['m5'] });
    const u = (await stored(repo)).usedMemory!;
    expect(u.refined).toEqual(used().refined);
    expect(u.memoryIds).toEqual(used().memoryIds);
  });

  it('a change to a memory it was not shown keeps the keywords', async () => {
    const repo = await seed();
    await repo.apply({ deleteMemories: ['m3'] });
    expect((await stored(repo)).usedMemory).toMatchObject({ requery: KEYWORDS, reflectedOn: ['m1', 'm5'] });
  });

  it('a late save of the reply being written cannot bring the keywords back', async () => {
    const repo = await seed(reflected({ status: 'streaming', text: 'Hel' }));
    await repo.apply({ memoryPatches: [{ id: 'm5', text: 'The user skipped the clinic.', edited: true }] });
    await repo.apply({ turns: [reflected({ status: 'complete', text: 'Hello again.' })] });
    const t = await stored(repo);
    expect(t.text).toBe('Hello again.');
    expect(JSON.stringify(t)).not.toContain(KEYWORDS);
    expect(t.usedMemory!.reflected).toBe('searched');
  });
});

describe('the rule itself', () => {
  it('turnSources names every version, sorted and once', () => {
    const t = reply({
      versions: [{ text: 'x', time: 1, status: 'complete', usedMemory: { ...used(), memoryIds: ['m9'], personaIds: [] } }],
    });
    expect(turnSources(t)).toEqual(['m1', 'm2', 'm3', 'm4', 'm9']);
  });

  it('returns the same object when nothing it names changed (no needless writes)', () => {
    const u = used();
    expect(followSources(u, { deleted: new Set(['x']), changed: new Set(['y']) })).toBe(u);
  });

  it('a reply whose every note went has no refined list (nothing claims a note was written)', () => {
    const u = followSources(used(), { deleted: new Set(), changed: new Set(['m1', 'm3']) });
    expect(u.refined).toBeUndefined();
    expect(u.timelines).toHaveLength(2);
  });
});

describe('IndexedDB: existing data and backups', () => {
  it('the v3 migration records what stored replies drew on, and a later delete finds them', async () => {
    const factory = freshFactory();
    const v2 = await openTealeafDb({ factory, migrations: MIGRATIONS.slice(0, 2) });
    await v2.put('sessions', session('old'));
    await v2.put('sessions', session('now'));
    await v2.put('memories', memory('m1', `The user was ${SECRET}.`));
    await v2.put('turns', reply());
    v2.close();
    const repo = await IdbRepository.open({ factory });
    expect((await stored(repo)).drewOn).toEqual(['m1', 'm2', 'm3', 'm4']);
    await repo.apply({ deleteMemories: ['m1'] });
    expect(holdsSecret(await stored(repo))).toBe(false);
  });

  it('an import recomputes drewOn instead of trusting the file', async () => {
    const from = await openTealeafDb({ factory: freshFactory() });
    await from.put('sessions', session('old'));
    await from.put('sessions', session('now'));
    for (const m of ['m1', 'm2', 'm3', 'm4']) await from.put('memories', memory(m, `memory ${m}`));
    await from.put('turns', {
      ...reply(),
      usedMemory: { ...used(), reflected: 'searched', requery: 'walks', reflectedOn: ['m3'] },
      drewOn: ['m3'],
    });
    const text = serializeBackup(await exportBackup(from));
    const factory = freshFactory();
    const to = await openTealeafDb({ factory });
    await importBackup(to, JSON.parse(text), { mode: 'replace' });
    to.close();
    const repo = await IdbRepository.open({ factory });
    expect((await stored(repo)).drewOn).toEqual(['m1', 'm2', 'm3', 'm4']);
    // The self-reflection's record comes through the backup's checks.
    expect((await stored(repo)).usedMemory).toMatchObject({ reflected: 'searched', requery: 'walks', reflectedOn: ['m3'] });
    await repo.apply({ deleteMemories: ['m1'] });
    expect((await stored(repo)).usedMemory!.timelines.map((x) => x.memoryIds)).toEqual([['m2'], ['m3']]);
  });
});
