// The model self-test in the background (src/services/models/model-check.ts and its wiring in
// ModelService): once per model, its result remembered in the settings; stopped when the model
// changes; one run at a time; set aside while a reply is written; "Test again"; and a model server
// whose response_format answers do not read moved to words, which is remembered for that model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, JsonSchema, LanguageModel } from '../../../../src/ports';
import { InMemoryRepository } from '../../../support/in-memory-repository';
import { until as waitUntil } from '../../../support/until';
import { SettingsService } from '../../../../src/services/settings';
import { ModelCheckRunner, type ModelCheckSnapshot } from '../../../../src/services/models/model-check';
import { readModelChecks } from '../../../../src/services/models/model-checks';
import { SELF_TEST_VERSION, type SelfTestResult } from '../../../../src/memory/eval/self-test';
import { ModelService, registerChatModel, SERVER_CHOICE_ID } from '../../../../src/services/models/models';
import { buildOptions } from '../../../../src/services/models/model-env';
import { startFakeOpenAiServer } from '../../../support/fake-openai-server.mjs';

const model = (modelId: string): LanguageModel => ({
  modelId,
  chat: async () => '',
  json: async () => '{}',
});

const result = (verdict: SelfTestResult['verdict'] = 'good'): SelfTestResult => ({
  version: SELF_TEST_VERSION,
  verdict,
  checks: [
    { id: 'summary-repeats', passed: verdict === 'good', reason: verdict === 'good' ? 'it wrote each memory once' : 'it repeated items' },
  ],
  structured: { mode: 'grammar', canSwitch: false, switched: false },
  calls: 2,
});

/** A test double of the self-test: each run waits until released (or its signal stops it). */
class Gate {
  runs: Array<{ llm: LanguageModel; signal: AbortSignal; release: (r?: SelfTestResult) => void }> = [];
  active = 0;
  maxActive = 0;
  check = (llm: LanguageModel, { signal }: { signal: AbortSignal }) =>
    new Promise<SelfTestResult>((resolve, reject) => {
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      const done = () => this.active--;
      signal.addEventListener('abort', () => (done(), reject(signal.reason)), { once: true });
      this.runs.push({ llm, signal, release: (r = result()) => (done(), resolve(r)) });
    });
}

const tick = () => new Promise((r) => setTimeout(r, 0));
/** Waits on the condition, for as long as it takes (tests/support/until.ts). */
const until = (ok: () => boolean, what: string) => waitUntil(what, ok);

async function setup() {
  const settings = new SettingsService(new InMemoryRepository());
  await settings.load();
  const gate = new Gate();
  const states: Array<ModelCheckSnapshot | undefined> = [];
  const runner = new ModelCheckRunner({ settings, onState: (s) => states.push(s), check: gate.check, now: () => 1000, resumeDelayMs: 1 });
  return { settings, gate, states, runner };
}

describe('ModelCheckRunner', () => {
  it('tests a model once, remembers the result, and does not test it again', async () => {
    const { settings, gate, runner } = await setup();
    const llm = model('small');
    runner.modelChanged(llm, 'small', 'Small model');
    expect(runner.state?.state).toBe('running');
    await until(() => gate.runs.length === 1, 'the run');
    gate.runs[0]!.release(result('weak'));
    await runner.settled();
    expect(runner.state).toMatchObject({ key: 'small', label: 'Small model', state: 'done', result: { verdict: 'weak', at: 1000 } });
    expect(settings.value.modelChecks.small).toMatchObject({ verdict: 'weak', version: SELF_TEST_VERSION });
    // Another start (a new runner over the same settings): remembered, not run again.
    const again = new ModelCheckRunner({ settings, onState: () => undefined, check: gate.check });
    again.modelChanged(model('small'), 'small', 'Small model');
    expect(again.state?.state).toBe('done');
    await tick();
    expect(gate.runs).toHaveLength(1);
  });

  it('stops the run when the model changes or goes, and runs one at a time', async () => {
    const { settings, gate, runner } = await setup();
    runner.modelChanged(model('a'), 'a', 'A');
    await until(() => gate.runs.length === 1, 'the first run');
    runner.modelChanged(model('b'), 'b', 'B');
    expect(gate.runs[0]!.signal.aborted).toBe(true);
    await until(() => gate.runs.length === 2, 'the second run');
    expect(gate.maxActive).toBe(1);
    runner.modelChanged(undefined);
    expect(gate.runs[1]!.signal.aborted).toBe(true);
    expect(runner.state).toBeUndefined();
    await runner.settled();
    expect(settings.value.modelChecks).toEqual({});
  });

  it('steps aside while a reply is written, then starts again', async () => {
    const { gate, runner } = await setup();
    runner.modelChanged(model('a'), 'a', 'A');
    await until(() => gate.runs.length === 1, 'the run');
    runner.chatBusy(true);
    expect(gate.runs[0]!.signal.aborted).toBe(true);
    expect(runner.state?.state).toBe('waiting');
    runner.chatBusy(false);
    await until(() => gate.runs.length === 2, 'the run after the reply');
    gate.runs[1]!.release();
    await runner.settled();
    expect(runner.state?.state).toBe('done');
  });

  it('tests again when asked, and remembers a hidden notice', async () => {
    const { settings, gate, runner } = await setup();
    runner.modelChanged(model('a'), 'a', 'A');
    await until(() => gate.runs.length === 1, 'the run');
    gate.runs[0]!.release(result('weak'));
    await runner.settled();
    await runner.hideNotice();
    expect(settings.value.modelChecks.a!.noticeHidden).toBe(true);
    runner.retest();
    expect(runner.state?.state).toBe('running');
    await until(() => gate.runs.length === 2, 'the second run');
    gate.runs[1]!.release(result('good'));
    await runner.settled();
    expect(settings.value.modelChecks.a).toMatchObject({ verdict: 'good' });
    expect(settings.value.modelChecks.a!.noticeHidden).toBeUndefined();
  });

  it('says when the run itself broke', async () => {
    const { runner, settings } = await setup();
    const broken = new ModelCheckRunner({ settings, onState: () => undefined, check: async () => Promise.reject(new Error('no memory')) });
    broken.modelChanged(model('a'), 'a', 'A');
    await broken.settled();
    expect(broken.state).toMatchObject({ state: 'failed', message: 'no memory' });
    expect(runner.state).toBeUndefined();
  });
});

describe('readModelChecks', () => {
  it('keeps what reads, drops the rest, and the newest first', () => {
    const good = { version: 1, verdict: 'good', checks: [], mode: 'grammar', at: 5, label: 'A' };
    const read = readModelChecks({
      a: good,
      b: { ...good, verdict: 'great' },
      c: { ...good, checks: [{ id: 'x', passed: 'yes', reason: '' }] },
      ['__proto__']: good,
      d: { ...good, at: 9, mode: 'words', switched: true },
    });
    expect(Object.keys(read)).toEqual(['d', 'a']);
    expect(read.d).toMatchObject({ mode: 'words', switched: true, canSwitch: false });
    expect(readModelChecks('nonsense')).toEqual({});
  });
});

/** A model that counts its JSON calls and answers as a competent model would. */
class Counting implements LanguageModel {
  readonly modelId = 'counting-double';
  jsonCalls = 0;
  async chat(): Promise<string> {
    return '';
  }
  async json(_m: ChatMessage[], schema: JsonSchema): Promise<string> {
    this.jsonCalls++;
    if (schema.title === 'relation_labels')
      return JSON.stringify({
        labels: [
          { candidate: 1, relation: 'None' },
          { candidate: 2, relation: 'Changed' },
        ],
      });
    const text = (t: string, turn: string) => ({ text: t, turns: [turn] });
    return JSON.stringify({
      events: [
        text('You moved to Lisbon.', 'T1'),
        text('Your sister Ana lives nearby.', 'T3'),
        text('You eat fish again.', 'T5'),
        text('You train for a half marathon.', 'T7'),
      ],
    });
  }
}

describe('ModelService', () => {
  const counting = new Counting();
  registerChatModel({
    choice: { id: 'check-double', label: 'Check double', description: '', sizeMB: 0, needsGpu: false },
    create: () => counting,
  });
  buildOptions.searchModelWithChat = false;

  it('tests each chat model that becomes ready once, and stops when it changes', async () => {
    const settings = new SettingsService(new InMemoryRepository());
    await settings.load();
    const models = new ModelService(settings);
    await models.load('check-double');
    await until(() => models.snapshot.check?.state === 'done', 'the check');
    expect(models.snapshot.check).toMatchObject({ key: 'check-double', label: 'check-double', result: { verdict: 'good' } });
    expect(counting.jsonCalls).toBe(2);
    await models.unload();
    expect(models.snapshot.check).toBeUndefined();
    await models.load('check-double');
    expect(models.snapshot.check?.state).toBe('done');
    await models.check.settled();
    expect(counting.jsonCalls).toBe(2);
  });

  it("stops a model's test when another model is loaded, and tests that one", async () => {
    const stopped: string[] = [];
    const slow: LanguageModel = {
      modelId: 'slow-double',
      chat: async () => '',
      json: (_m, _s, options = {}) =>
        new Promise((_resolve, reject) =>
          options.signal?.addEventListener('abort', () => (stopped.push(String(options.signal?.reason)), reject(options.signal?.reason)), {
            once: true,
          }),
        ),
    };
    registerChatModel({
      choice: { id: 'slow-double', label: 'Slow double', description: '', sizeMB: 0, needsGpu: false },
      create: () => slow,
    });
    const settings = new SettingsService(new InMemoryRepository());
    await settings.load();
    const models = new ModelService(settings);
    await models.load('slow-double');
    expect(models.snapshot.check).toMatchObject({ key: 'slow-double', state: 'running' });
    await until(() => models.check.state?.state === 'running', 'the slow check');
    await tick();
    const before = counting.jsonCalls;
    await models.load('check-double');
    expect(stopped).toEqual(['AbortError: The chat model changed.']);
    await until(() => models.snapshot.check?.state === 'done', 'the second check');
    expect(models.snapshot.check?.key).toBe('check-double');
    expect(settings.value.modelChecks['slow-double']).toBeUndefined();
    // check-double was tested in the test before, in other settings: here it is tested again.
    expect(counting.jsonCalls - before).toBe(2);
  });

  describe('with a model server', () => {
    let fake: Awaited<ReturnType<typeof startFakeOpenAiServer>>;
    beforeAll(async () => {
      // llama.cpp: a 4,096-token window counted exactly (a server that says nothing gets 2,048, and
      // estimated: the summary's schema asked in words does not fit beside its prompt there).
      fake = await startFakeOpenAiServer({ schemaIgnored: true, kind: 'llama.cpp', contextTokens: 4096 });
    });
    afterAll(async () => {
      await fake.close();
    });

    it('moves a server whose response_format answers do not read to words, and keeps it there for that model', async () => {
      const settings = new SettingsService(new InMemoryRepository());
      await settings.load();
      const models = new ModelService(settings);
      await models.connectServer(fake.url);
      await models.useServerModel('tiny-chat');
      await until(() => models.snapshot.check?.state === 'done', 'the check');
      const key = `${SERVER_CHOICE_ID}:tiny-chat`;
      expect(models.snapshot.check).toMatchObject({ key, label: 'tiny-chat', result: { mode: 'words', switched: true, canSwitch: true } });
      // The fake labels every pair SameTopic: readable, but it misses the change.
      expect(settings.value.modelChecks[key]).toMatchObject({ verdict: 'weak', mode: 'words' });
      expect(models.languageModel?.structuredMode).toBe('words');

      // The next start: the same model is asked in words at once, with no test.
      const later = new ModelService(settings);
      await later.connectServer(fake.url);
      const before = fake.requests.length;
      await later.useServerModel('tiny-chat');
      expect(later.snapshot.check?.state).toBe('done');
      expect(later.languageModel?.structuredMode).toBe('words');
      await later.languageModel!.json([{ role: 'user', content: 'Candidate 1' }], { title: 'relation_labels', type: 'object' });
      expect(fake.requests.slice(before).map((r) => (r.body as { response_format?: { type: string } }).response_format?.type)).toEqual([
        'json_object',
      ]);
    });
  });
});
