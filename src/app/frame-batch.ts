// A streaming reply changes with every token (hundreds of times a second, or thousands at once
// when a server sends a burst). The view takes the newest version of each item once per
// animation frame: rendering never runs more often than the page can show it.

type Schedule = (run: () => void) => void;

const nextFrame: Schedule = (run) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => run());
  else setTimeout(run, 16);
};

export class FrameBatch<T extends { id: string }> {
  private pending = new Map<string, T>();
  private scheduled = false;

  constructor(
    private readonly apply: (item: T) => void,
    private readonly schedule: Schedule = nextFrame,
  ) {}

  /** Shown at the next frame (a newer version pushed before then replaces it). */
  push(item: T): void {
    this.pending.set(item.id, item);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      const items = [...this.pending.values()];
      this.pending.clear();
      for (const x of items) this.apply(x);
    });
  }

  /** Shown now; a version still waiting for the frame is older, so it is dropped. */
  now(item: T): void {
    this.pending.delete(item.id);
    this.apply(item);
  }

  /** Forgets what waits (the whole list was replaced). */
  drop(): void {
    this.pending.clear();
  }
}
