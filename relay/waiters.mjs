// Long polls waiting on rooms, in this process. A waiter is answered when its room's last position
// passes the one it asked after (the store says so: in this process, or from another through the
// database), when its time is up, or when the relay shuts down.
//
// `known` keeps the last position of rooms polled here, as the store last told it: while the store's
// notifications arrive without a break, it can only lag the truth, and whatever it lags by is on its
// way as a notification, which wakes the poll. A waiter is registered before its query, and the
// notifications for its room are taken from then on, so a query that answers late cannot hold a
// position older than one already notified. So a device's next poll (after it read what it was
// woken for) needs no query. A break (the database restarted) forgets it all. Pairing mailboxes are
// left out: they expire by time, with no notification.
export class Waiters {
  constructor() {
    /** room -> Set of { after, finish } */
    this.rooms = new Map();
    this.count = 0;
    this.known = new Map();
    this.epoch = 0;
  }

  /** The room's last position as known here, or undefined. */
  lastKnown(room) {
    return this.known.get(room);
  }

  /** Remembers what the store answered, unless notifications broke off since `epoch` was read. */
  remember(room, last, epoch) {
    if (epoch !== this.epoch || room.startsWith('pair-')) return;
    this.known.set(room, Math.max(last, this.known.get(room) ?? 0));
  }

  /** Notifications broke off: nothing known holds any more. */
  lost() {
    this.epoch++;
    this.known.clear();
  }

  /** Forgets rooms nobody waits on here (each minute), so the map stays as small as the polls. */
  sweepKnown() {
    for (const room of this.known.keys()) if (!this.rooms.has(room)) this.known.delete(room);
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
    // Rooms with a waiter too: its query may answer older than a notification that came meanwhile.
    if (this.known.has(room) || this.rooms.has(room)) this.known.set(room, last === 0 ? 0 : Math.max(last, this.known.get(room) ?? 0));
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
