// What the Memory view brings in: the demo, a ChatGPT or Claude history, a LoCoMo conversation.
// One of them at a time: what is running is said (`busy`), a history import shows its progress and
// can be cancelled, and what the last import said (or why it could not run) stays until the next.
import { errorText } from '../../errors';
import type { AppState } from '../state.svelte';
import { locomoImportedWords } from '../done-words';
import type { HistoryTask } from './history-task';

export interface ImportNote {
  tone: 'info' | 'error';
  text: string;
}

// By name: the error class is the service's; a cancel is news, not an error.
const isCancelled = (e: unknown) => e instanceof Error && e.name === 'HistoryImportCancelledError';

export class MemoryImports {
  /** What is under way, in words ("Importing conversations.json…"); null when nothing is. */
  busy = $state<string | null>(null);
  /** What the last import (history or LoCoMo) said, or why it could not run. */
  note = $state<ImportNote | null>(null);
  /** The history import under way: its progress and Cancel (the worker parses, the page saves). */
  history = $state<(HistoryTask & { controller: AbortController }) | null>(null);
  private readonly app: () => AppState;

  constructor(app: () => AppState) {
    this.app = app;
  }

  async loadDemo(): Promise<void> {
    this.busy = 'Opening the demo…';
    try {
      await this.app().enterDemo();
    } catch (e) {
      this.app().toast('error', `Could not open the demo: ${errorText(e)}`);
    }
    this.busy = null;
  }

  /** The file picked in a LoCoMo picker (`e` its change event). */
  async importLocomo(e: Event): Promise<void> {
    const file = picked(e);
    if (!file) return;
    this.note = null;
    this.busy = `Importing ${file.name}…`;
    try {
      const r = await this.app().tealeaf!.importLocomo(
        await file.text(),
        (done, total, label) => (this.busy = `${label} (${done}/${total})`),
      );
      this.note = { tone: 'info', text: `${file.name}: ${locomoImportedWords(r)}` };
    } catch (err) {
      this.note = { tone: 'error', text: `Could not import ${file.name}: ${errorText(err)}` };
    }
    this.busy = null;
  }

  /** The file picked in a history picker (`e` its change event). */
  async importHistory(e: Event): Promise<void> {
    const file = picked(e);
    if (!file) return;
    this.note = null;
    this.busy = `Importing ${file.name}…`;
    const task = (this.history = { file: file.name, progress: null, cancelling: false, controller: new AbortController() });
    try {
      const message = await this.app().tealeaf!.importHistory(file, {
        signal: task.controller.signal,
        onProgress: (_label, progress) => {
          if (this.history?.controller === task.controller) this.history.progress = progress;
        },
      });
      this.note = { tone: 'info', text: message };
    } catch (err) {
      this.note = isCancelled(err)
        ? { tone: 'info', text: `${file.name}: ${errorText(err)}` }
        : { tone: 'error', text: `Could not import ${file.name}: ${errorText(err)}` };
    }
    this.history = null;
    this.busy = null;
  }

  cancelHistory(): void {
    if (!this.history || this.history.cancelling) return;
    this.history.cancelling = true;
    this.history.controller.abort();
  }
}

/** The file of a picker's change event; the picker is cleared, so the same file can be picked again. */
function picked(e: Event): File | undefined {
  const input = e.currentTarget as HTMLInputElement;
  const file = input.files?.[0];
  input.value = '';
  return file;
}
