// Runs the model self-test (src/memory/eval/self-test.ts) in the background once a chat model is
// ready: once per model (the result is remembered in the settings, model-checks.ts), one run at a
// time, stopped when the model changes or goes away, and set aside while a reply is being written
// (chat comes first: the engine writes one answer at a time), then started again once chat is idle.
// A model server the test moved to words is put back in words whenever that model is used again.
import type { LanguageModel } from '../../ports';
import { errorText } from '../../errors';
import { checkModel, type SelfTestResult } from '../../memory/eval/self-test';
import type { SettingsService } from '../settings';
import { ignoreFullDisk } from '../storage-state';
import { isCurrent, toRecord, withCheck, type ModelCheckRecord } from './model-checks';

/** What the Models view and the chat see of the check of the model in use. */
export interface ModelCheckSnapshot {
  /** The model's key in `modelChecks`. */
  key: string;
  label: string;
  /** 'waiting': set aside while chat writes a reply; 'failed': the run itself broke (not the model's answers). */
  state: 'running' | 'waiting' | 'done' | 'failed';
  result?: ModelCheckRecord;
  message?: string;
}

export interface ModelCheckOptions {
  settings: SettingsService;
  onState(check: ModelCheckSnapshot | undefined): void;
  /** The test itself (tests pass a double). */
  check?: (llm: LanguageModel, options: { signal: AbortSignal }) => Promise<SelfTestResult>;
  now?: () => number;
  /** After chat went idle, how long before the test starts again (a reply is often followed by another). */
  resumeDelayMs?: number;
}

interface Current {
  llm: LanguageModel;
  key: string;
  label: string;
  controller?: AbortController;
}

const stopped = (why: string) => new DOMException(why, 'AbortError');

export class ModelCheckRunner {
  /** Off: the e2e build turns it off unless a test asks (its scripted model would answer every test's extra calls). */
  enabled = true;
  private current?: Current;
  private snapshot?: ModelCheckSnapshot;
  /** The run in progress (or the last one): the next waits for it, so one runs at a time. */
  private run: Promise<void> = Promise.resolve();
  private busy = false;
  private resumeTimer?: ReturnType<typeof setTimeout>;

  constructor(private readonly options: ModelCheckOptions) {}

  get state(): ModelCheckSnapshot | undefined {
    return this.snapshot;
  }

  private publish(patch: Partial<ModelCheckSnapshot> | undefined): void {
    const cur = this.current;
    this.snapshot = patch && cur ? { key: cur.key, label: cur.label, state: 'running', ...patch } : undefined;
    this.options.onState(this.snapshot);
  }

  /** The chat model is ready (or gone: undefined). `key` names it in `modelChecks`. */
  modelChanged(llm: LanguageModel | undefined, key = '', label = ''): void {
    const cur = this.current;
    if (llm && cur && cur.llm === llm && cur.key === key) {
      // The same model back (a model server reconnected): go on where the check was.
      if (this.snapshot?.state !== 'done') this.start();
      return;
    }
    this.stop('The chat model changed.');
    this.current = llm && this.enabled ? { llm, key, label } : undefined;
    if (!llm || !this.current) return this.publish(undefined);
    const stored = this.options.settings.value.modelChecks[key];
    if (isCurrent(stored)) {
      if (stored.mode === 'words' && stored.switched) llm.setStructuredMode?.('words');
      return this.publish({ state: 'done', result: stored });
    }
    this.start();
  }

  /** A reply is being written (or chat is idle again): the test steps aside, then starts over. */
  chatBusy(busy: boolean): void {
    if (busy === this.busy) return;
    this.busy = busy;
    clearTimeout(this.resumeTimer);
    if (busy) {
      if (this.snapshot?.state !== 'running') return;
      this.stop('A reply is being written.');
      this.publish({ state: 'waiting' });
    } else if (this.snapshot?.state === 'waiting') {
      this.resumeTimer = setTimeout(() => this.start(), this.options.resumeDelayMs ?? 3000);
    }
  }

  /** "Test again": the model in use is tested now, whatever was remembered. */
  retest(): void {
    if (!this.current) return;
    this.stop('Tested again.');
    // From the engine's grammar again, where it has one: the test chooses anew.
    if (this.current.llm.structuredMode === 'words') this.current.llm.setStructuredMode?.('grammar');
    this.start();
  }

  /** The user hid the chat's notice about this model (remembered with its result). */
  async hideNotice(): Promise<void> {
    const cur = this.current;
    const result = this.snapshot?.result;
    if (!cur || !result) return;
    const record = { ...result, noticeHidden: true };
    this.publish({ state: 'done', result: record });
    await this.remember(cur.key, record);
  }

  /** Resolves once the run in progress (if any) has ended. */
  settled(): Promise<void> {
    return this.run;
  }

  private stop(why: string): void {
    clearTimeout(this.resumeTimer);
    this.current?.controller?.abort(stopped(why));
  }

  private remember(key: string, record: ModelCheckRecord): Promise<unknown> {
    const { settings } = this.options;
    return ignoreFullDisk(settings.update({ modelChecks: withCheck(settings.value.modelChecks, key, record) })).catch(() => undefined);
  }

  private start(): void {
    const cur = this.current;
    if (!cur) return;
    if (this.busy) return this.publish({ state: 'waiting' });
    const controller = new AbortController();
    cur.controller = controller;
    this.publish({ state: 'running' });
    const previous = this.run;
    this.run = (async () => {
      await previous;
      if (controller.signal.aborted) return;
      let result: SelfTestResult;
      try {
        result = await (this.options.check ?? checkModel)(cur.llm, { signal: controller.signal });
      } catch (e) {
        // Stopped: whoever stopped it has said what happens next.
        if (controller.signal.aborted || this.current !== cur) return;
        return this.publish({ state: 'failed', message: errorText(e) });
      }
      if (controller.signal.aborted || this.current !== cur) return;
      const record = toRecord(result, cur.label, (this.options.now ?? Date.now)());
      this.publish({ state: 'done', result: record });
      await this.remember(cur.key, record);
    })();
  }
}
