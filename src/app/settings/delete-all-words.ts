// What "Delete all my data" says it will do, from the one sync state: with sync on, paired devices
// are asked to empty too and the relay is told to drop its encrypted copies (compaction),
// so "nothing is stored anywhere else" is said only while sync is off.
import type { SyncStatus } from '../../services/sync';

export interface DeleteAllWords {
  /** The danger zone's line in Settings. */
  zone: string;
  /** The confirmation dialog's message. */
  dialog: string;
}

const BACKUP = 'Export a backup first if you may want them later.';
const RELAY = 'The relay is told to drop its encrypted copies of past changes (it could not read them), once this device reaches it.';

export function deleteAllWords(s: SyncStatus): DeleteAllWords {
  if (s.phase === 'off')
    return {
      zone: 'Removes every conversation, memory and setting from this device. Nothing is stored anywhere else, so this cannot be undone.',
      dialog: `Every conversation, memory and setting is deleted from this device. This cannot be undone.\n${BACKUP}`,
    };
  if (s.phase === 'unpaired')
    return {
      zone: 'Removes every conversation, memory and setting from this device. This device no longer syncs: what your other devices received from it stays on them.',
      dialog: `Every conversation, memory and setting is deleted from this device. Your other devices keep what they received before this device was unpaired. This cannot be undone here.\n${BACKUP}`,
    };
  const others = s.devices.filter((d) => d.id !== s.selfId).length;
  const later = s.phase === 'offline' || s.phase === 'error' ? ' once this device reaches the relay again' : ' when they next sync';
  // Each other device asks its user before it empties (SyncResetChoice): "keep" sends its data back.
  const where =
    others === 0
      ? 'from this device (sync is on, with no other device paired yet)'
      : `from this device. Sync is on: your ${others === 1 ? 'other paired device is' : `${others} other paired devices are`} asked to delete theirs too${later}, and one that keeps its data sends it back here`;
  return {
    zone: `Removes every conversation, memory and setting ${where}. ${RELAY} This cannot be undone.`,
    dialog: `Every conversation, memory and setting is deleted ${where}. ${RELAY} This cannot be undone.\n${BACKUP}`,
  };
}
