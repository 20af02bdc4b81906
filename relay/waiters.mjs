// Long polls waiting on rooms, in this process. A waiter is answered when its room's last position
// passes the one it asked after (the store says so: in this process, or from another through the
// database), when its time is up, or when the relay shuts down.
export class Waiters {
  constructor() {
    /** room -> Set of { after, finish } */
    this.rooms = new Map();
    this.count = 0;
  }

  add(room, after, finish) {
    let set = this.rooms.get(room);
    if (!set) this.rooms.set(room, (set = new Set()));
    const w = { after, finish };
    set.add(w);
    this.count++;
    return () => {
      if (!set.delete(w)) return;
      this.count--;
      if (set.size === 0 && this.rooms.get(room) === set) this.rooms.delete(room);
    };
  }

  /** A room's last position is now `last`: answers its waiters that asked after an earlier one. */
  wake(room, last) {
    for (const w of [...(this.rooms.get(room) ?? [])]) if (last > w.after) w.finish(last);
  }

  /** Every room with a waiter (to look again after notifications were lost). */
  waitedRooms() {
    return [...this.rooms.keys()];
  }

  /** Answers everyone now (shutdown); `lastOf` gives what to answer. */
  finishAll(lastOf) {
    for (const [room, set] of this.rooms) for (const w of [...set]) w.finish(lastOf(room, w.after));
  }
}
