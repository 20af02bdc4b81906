// The tabs of one profile share one database, and one of them runs the sync loop (docs/SYNC.md,
// "Tabs"): it holds the `tealeaf-sync` Web Lock while the loop runs and tells the others its
// status on the `tealeaf-sync` channel; they forward what their user asks (an answer, turn off).
import type { SyncStatus } from './sync-status';

/** Between the tabs of one profile, on the `tealeaf-sync` channel. */
export type TabMessage =
  { type: 'queued' | 'reset' | 'ask' | 'turn-off' } | { type: 'status'; status: SyncStatus } | { type: 'answer'; choice: 'wipe' | 'keep' };

export class TabLink {
  /** This tab runs the sync loop (it holds the Web Lock). */
  holdsLoop = false;
  private readonly channel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-sync') : undefined;
  private stopped?: () => void;

  constructor(heard: (m: TabMessage) => void) {
    if (this.channel) this.channel.onmessage = (e: MessageEvent<TabMessage>) => heard(e.data);
  }

  post(m: TabMessage): void {
    this.channel?.postMessage(m);
  }

  /**
   * Runs `run` once this tab holds the lock; held while the loop runs (`running`), let go at once
   * when there was nothing to run (sync turned off meanwhile), so a tab that turns it on again
   * later is not left waiting behind an idle one.
   */
  hold(run: () => Promise<void>, running: () => boolean): void {
    const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
    const held = () => {
      this.holdsLoop = true;
      return run();
    };
    if (!locks) {
      void held();
      return;
    }
    void locks.request('tealeaf-sync', async () => {
      await held();
      if (running()) await new Promise<void>((ok) => (this.stopped = ok));
      else this.holdsLoop = false;
    });
    // Until this tab gets the loop: the status of the tab that has it.
    this.post({ type: 'ask' });
  }

  /** The loop ended in this tab: the lock goes to another. */
  release(): void {
    this.holdsLoop = false;
    this.stopped?.();
  }
}
