// A store whose writes can be made to "kill the tab": before write #k lands (the transaction never
// happens) or after it (it landed, but the tab closed before the job learnt so). Trust tests.
import type { ChangeSet } from '../../src/ports';
import { InMemoryRepository } from './in-memory-repository';

export class Killed extends Error {
  constructor(where: string) {
    super(`tab closed ${where}`);
  }
}

export type KillMode = 'before-write' | 'after-write';

/** A store whose writes can be made to "kill the tab" at write #k (counting from when armed). */
export function killableRepo() {
  const ctl = { armed: false, writes: 0, killAt: 0, mode: 'before-write' as KillMode, dead: false };
  const repo = new InMemoryRepository({
    beforeApply: () => {
      if (!ctl.armed) return;
      // A dead tab writes nothing more (a late promise in the old page must not land).
      if (ctl.dead) throw new Killed('(already)');
      ctl.writes++;
      if (ctl.mode === 'before-write' && ctl.writes === ctl.killAt) {
        ctl.dead = true;
        throw new Killed(`before write #${ctl.writes}`);
      }
    },
  });
  const apply = repo.apply.bind(repo);
  repo.apply = async (change: ChangeSet) => {
    const applied = await apply(change);
    if (ctl.armed && ctl.mode === 'after-write' && ctl.writes === ctl.killAt && !ctl.dead) {
      ctl.dead = true;
      throw new Killed(`after write #${ctl.writes}`);
    }
    return applied;
  };
  return { repo, ctl };
}
