// Device names told apart (docs/SYNC.md, "Device names"). Two browsers of the same kind both call
// themselves "Chromium on Linux". The device showing a pairing code knows the list, so it names the
// new device there ("Chromium on Linux 2"). Two devices paired at the same moment through two
// different devices can still end with one name (neither list had the other yet), so every list is
// also shown with its later duplicates numbered, in the order the devices were paired (then by
// id): every device of the ring shows the same names, and none shows two alike.
import type { DeviceInfo } from './keys';
import { MAX_DEVICE_NAME } from './ring';

const fold = (name: string) => name.trim().toLowerCase();

/** `name` if no name in `taken` is the same (case and outer spaces aside), else `name 2`, `name 3`... */
export function freeName(name: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map(fold));
  if (!used.has(fold(name))) return name;
  for (let n = 2; ; n++) {
    const suffix = ` ${n}`;
    const numbered = `${name.trim().slice(0, MAX_DEVICE_NAME - suffix.length)}${suffix}`;
    if (!used.has(fold(numbered))) return numbered;
  }
}

/** The devices as shown: the first paired of each name keeps it, later ones are numbered past every name in the list. */
export function distinctNames<T extends Pick<DeviceInfo, 'id' | 'name' | 'pairedAt'>>(devices: readonly T[]): T[] {
  const order = [...devices].sort((a, b) => a.pairedAt - b.pairedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const kept = new Set<string>();
  const again: T[] = [];
  for (const d of order) {
    if (kept.has(fold(d.name))) again.push(d);
    else kept.add(fold(d.name));
  }
  if (again.length === 0) return [...devices];
  const renamed = new Map<string, string>();
  const taken = devices.map((d) => d.name);
  for (const d of again) {
    const name = freeName(d.name, taken);
    taken.push(name);
    renamed.set(d.id, name);
  }
  return devices.map((d) => (renamed.has(d.id) ? { ...d, name: renamed.get(d.id)! } : d));
}
