// The memory's messages between this app's tabs, on one BroadcastChannel ('tealeaf-memory'): a tab
// that changed the memory says so, a tab about to import or delete everything asks the others to
// stop their memorising jobs, and the tab running sync passes on what another device wrote, as
// written (outbox.ts). Where the browser has no BroadcastChannel, a tab hears and says nothing.
import type { AppliedChange } from '../../ports';

export interface HeardFromTabs {
  /** Another tab is about to import or delete everything: stop writing now. */
  cancelJobs(): void;
  /** Another tab changed the store: what it wrote where it said so (a remote change), else nothing. */
  changed(change: AppliedChange | undefined): void;
}

export class MemoryTabs {
  private readonly channel?: BroadcastChannel;

  constructor(heard: HeardFromTabs) {
    if (typeof BroadcastChannel === 'undefined') return;
    this.channel = new BroadcastChannel('tealeaf-memory');
    this.channel.onmessage = (event: MessageEvent<{ type?: string; change?: AppliedChange }>) => {
      if (event.data?.type === 'cancel-jobs') heard.cancelJobs();
      else heard.changed(event.data?.change);
    };
  }

  /** Tells the other tabs that this one changed the memory: they read it again from the store. */
  announce(): void {
    this.channel?.postMessage({ type: 'memory-changed' });
  }

  /** Asks the other tabs to stop their memorising jobs at once. */
  cancelJobs(): void {
    this.channel?.postMessage({ type: 'cancel-jobs' });
  }
}
