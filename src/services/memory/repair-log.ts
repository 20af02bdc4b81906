// The start-up repair's log (planRepair in src/memory/repair.ts): kept in settings, newest last, so
// Settings can say what was repaired and when.
import type { ChangeSet, Repository } from '../../ports';
import { REPAIR_LOG_KEY, REPAIR_LOG_SIZE, type RepairLogEntry } from '../../memory/repair';

/** Writes a repair and adds its notes to the log. Throws if the store refused either. */
export async function writeRepair(repo: Repository, change: ChangeSet, notes: string[]): Promise<void> {
  await repo.apply(change);
  const log = await readRepairLog(repo);
  await repo.putSetting(REPAIR_LOG_KEY, [...log, { at: Date.now(), notes }].slice(-REPAIR_LOG_SIZE));
}

/** The repair log, newest last. */
export async function readRepairLog(repo: Repository): Promise<RepairLogEntry[]> {
  const log = await repo.getSetting<RepairLogEntry[]>(REPAIR_LOG_KEY);
  return Array.isArray(log) ? log : [];
}
