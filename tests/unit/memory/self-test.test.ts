// The model self-test (src/memory/eval/self-test.ts) under the tokenizer-counted stand-in: a
// competent double is 'good' under every engine profile, the small-model faults (schema echoed,
// JSON cut, a false "Changed", repeated items) each fail the check they should with words that
// say so, a failing or stopped model is handled, and an engine that offers both structured modes
// moves to words only where its grammar answers do not read and its words do.
import { describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel, StructuredMode } from '../../../src/ports';
import { checkModel, runSelfTest, SELF_TEST_VERSION, verdictOf, type SelfTestResult } from '../../../src/memory/eval/self-test';
import { SELF_TEST_FACTS } from '../../../src/memory/eval/self-test-fixture';
import { ModelDouble } from '../../support/model-double';
import { enforce, type FaultName } from '../../support/standin';

/** ModelDouble, with relation labels a competent model gives: a change where a fact turned around. */
class CompetentDouble extends ModelDouble {
  temperatures: Array<number | undefined> = [];
  override async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    this.temperatures.push(options.temperature);
    if (schema.title !== 'relation_labels') return super.json(messages, schema);
    const text = messages.map((m) => m.content).join('\n');
    const target = /^New memory \([^)]*\): (.*)$/m.exec(text)?.[1] ?? '';
    const candidates = [...text.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)];
    const turned = (c: string) => /\bagain\b/.test(target) && /\bfish\b/.test(c) && /\bfish\b/.test(target);
    return JSON.stringify({ labels: candidates.map((m, i) => ({ candidate: i + 1, relation: turned(m[2]!) ? 'Changed' : 'None' })) });
  }
}

/** Answers every JSON call with the same text (a scripted bad answerer). */
class Scripted implements LanguageModel {
  readonly modelId = 'scripted';
  constructor(private readonly answer: (schema: JsonSchema) => string) {}
  async chat(): Promise<string> {
    return '';
  }
  async json(_m: ChatMessage[], schema: JsonSchema): Promise<string> {
    return this.answer(schema);
  }
}

const failed = (r: SelfTestResult) => r.checks.filter((c) => !c.passed).map((c) => c.id);
const reasons = (r: SelfTestResult) =>
  r.checks
    .filter((c) => !c.passed)
    .map((c) => c.reason)
    .join('; ');

const faulty = (fault: FaultName, profile = 'webgpu-4096') =>
  enforce(new CompetentDouble(), profile, { faults: { rate: 1, seed: 1, only: [fault] } });

describe('runSelfTest', () => {
  it.each(['webgpu-4096', 'cpu-2048', 'llama3.2-4096', 'phi3.5-4096'])(
    'finds a competent model good under %s, every call fitted',
    async (profile) => {
      const double = new CompetentDouble();
      const llm = enforce(double, profile);
      const r = await runSelfTest(llm);
      expect(reasons(r)).toBe('');
      expect(r.verdict).toBe('good');
      expect(r.version).toBe(SELF_TEST_VERSION);
      expect(r.calls).toBe(2);
      expect(r.checks.find((c) => c.id === 'summary-facts')!.reason).toBe(
        `it found ${SELF_TEST_FACTS.length} of ${SELF_TEST_FACTS.length} facts`,
      );
      // Bounded and deterministic: nothing refused or cut, every call at temperature 0.
      expect(llm.calls.map((c) => [c.title, c.overflowed, c.cut])).toEqual([
        ['session_memories', false, false],
        ['relation_labels', false, false],
      ]);
      expect(double.temperatures).toEqual([0, 0]);
      // The CPU engine asks for JSON in words (schema in the prompt) and has no other way.
      expect(r.structured).toEqual({ mode: profile === 'cpu-2048' ? 'words' : 'grammar', canSwitch: false, switched: false });
    },
  );

  it('gives the same result twice', async () => {
    const a = await runSelfTest(enforce(new CompetentDouble(), 'cpu-2048', { faults: { rate: 1, seed: 3 } }));
    const b = await runSelfTest(enforce(new CompetentDouble(), 'cpu-2048', { faults: { rate: 1, seed: 3 } }));
    expect(b).toEqual(a);
  });

  it('is unusable when the model writes the schema back', async () => {
    const r = await runSelfTest(faulty('schema-echo'));
    expect(r.verdict).toBe('unusable');
    expect(failed(r)).toEqual(['summary-readable', 'labels-readable']);
    expect(reasons(r)).toMatch(/wrote the answer format back instead of an answer/);
  });

  it('is not good when the JSON is cut, and says so', async () => {
    const r = await runSelfTest(faulty('cut-json'));
    expect(r.verdict).not.toBe('good');
    expect(reasons(r)).toMatch(/cut off|stopped short/);
  });

  it('is weak when it calls unrelated memories a change', async () => {
    const r = await runSelfTest(faulty('wrong-relation'));
    expect(r.verdict).toBe('weak');
    expect(failed(r)).toEqual(['labels-no-false-change']);
    expect(reasons(r)).toMatch(/called unrelated memories a change/);
  });

  it('is weak when it repeats items until the cap', async () => {
    const r = await runSelfTest(faulty('repeated-item', 'cpu-2048'));
    expect(r.verdict).toBe('weak');
    expect(failed(r)).toContain('summary-repeats');
    expect(reasons(r)).toMatch(/repeated items/);
  });

  it('is not good under every fault at once (the e2e script: rate 1, seed 1)', async () => {
    const r = await runSelfTest(enforce(new CompetentDouble(), 'webgpu-4096', { faults: { rate: 1, seed: 1 } }));
    expect(r.verdict).not.toBe('good');
  });

  it('is weak when it labels everything Changed, and when it misses the change', async () => {
    const summary = JSON.stringify({
      events: [{ text: 'You moved to Lisbon near your sister Ana, eat fish again and run a half marathon.', turns: ['T1'] }],
    });
    const labelling = (relation: string) => (schema: JsonSchema) =>
      schema.title === 'relation_labels' ? JSON.stringify({ labels: [1, 2].map((candidate) => ({ candidate, relation })) }) : summary;
    const allChanged = await runSelfTest(new Scripted(labelling('Changed')));
    expect(failed(allChanged)).toEqual(['labels-no-false-change']);
    const allTopic = await runSelfTest(new Scripted(labelling('SameTopic')));
    expect(failed(allTopic)).toEqual(['labels-change-found']);
    expect(reasons(allTopic)).toMatch(/missed a clear change/);
    expect(allTopic.verdict).toBe('weak');
  });

  it('names the facts it missed, and finds no facts unusable', async () => {
    const only = (text: string) => (schema: JsonSchema) =>
      schema.title === 'session_memories'
        ? JSON.stringify({ events: [{ text, turns: ['T1'] }], userTraits: [], assistantTraits: [], notes: [], remember: [], topics: [] })
        : JSON.stringify({
            labels: [
              { candidate: 1, relation: 'None' },
              { candidate: 2, relation: 'Changed' },
            ],
          });
    const some = await runSelfTest(new Scripted(only('You moved to Lisbon and run a half marathon in June.')));
    expect(some.verdict).toBe('weak');
    expect(reasons(some)).toBe('it missed 2 of 4 facts (the sister Ana and eating fish again)');
    const none = await runSelfTest(new Scripted(only('Hello there.')));
    expect(none.verdict).toBe('unusable');
  });

  it('says when memories do not name their messages', async () => {
    const r = await runSelfTest(
      new Scripted((schema) =>
        schema.title === 'session_memories'
          ? JSON.stringify({
              events: ['You moved to Lisbon.', 'Your sister is Ana.', 'You eat fish again.', 'You run a half marathon.'].map((text) => ({
                text,
                turns: ['T99'],
              })),
            })
          : JSON.stringify({
              labels: [
                { candidate: 1, relation: 'None' },
                { candidate: 2, relation: 'Changed' },
              ],
            }),
      ),
    );
    expect(failed(r)).toEqual(['summary-sources']);
    expect(reasons(r)).toBe('it did not say which messages 4 of 4 memories came from');
  });

  it('never throws for a failing model: its calls are failed checks', async () => {
    const r = await runSelfTest(
      new Scripted(() => {
        throw new Error('the worker died');
      }),
    );
    expect(r.verdict).toBe('unusable');
    expect(reasons(r)).toMatch(/failed to answer \(the worker died\)/);
  });

  it('stops when aborted, and says so by throwing the abort', async () => {
    const stop = new AbortController();
    const llm = new Scripted(() => {
      stop.abort(new DOMException('The chat model changed.', 'AbortError'));
      throw new Error('cancelled');
    });
    await expect(runSelfTest(llm, { signal: stop.signal })).rejects.toThrow('The chat model changed.');
  });

  it('weighs severe failures above others', () => {
    expect(verdictOf([{ id: 'summary-repeats', passed: false, reason: '' }])).toBe('weak');
    expect(verdictOf([{ id: 'summary-readable', passed: false, reason: '', severe: true }])).toBe('unusable');
    expect(verdictOf([{ id: 'summary-readable', passed: true, reason: '' }])).toBe('good');
  });
});

/** An engine with both modes whose grammar answers are `grammar`'s (a server whose JSON mode breaks the model). */
class TwoModes extends CompetentDouble {
  structuredMode: StructuredMode = 'grammar';
  constructor(private readonly grammar: (schema: JsonSchema) => string | undefined) {
    super();
  }
  setStructuredMode(mode: StructuredMode): void {
    this.structuredMode = mode;
  }
  override async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    return (this.structuredMode === 'grammar' && this.grammar(schema)) || super.json(messages, schema, options);
  }
}

describe('checkModel', () => {
  it('moves an engine to words where its grammar answers do not read and its words do', async () => {
    const llm = new TwoModes(() => 'Sure! Here are the memories you asked for.');
    const r = await checkModel(llm);
    expect(r.verdict).toBe('good');
    expect(r.structured).toEqual({ mode: 'words', canSwitch: true, switched: true });
    expect(r.calls).toBe(4);
    expect(llm.structuredMode).toBe('words');
  });

  it('keeps the grammar where its answers read (even when the model is weak)', async () => {
    const llm = new TwoModes((schema) =>
      schema.title === 'relation_labels'
        ? JSON.stringify({ labels: [1, 2].map((candidate) => ({ candidate, relation: 'Changed' })) })
        : undefined,
    );
    const r = await checkModel(llm);
    expect(r.verdict).toBe('weak');
    expect(r.structured).toEqual({ mode: 'grammar', canSwitch: true, switched: false });
    expect(r.calls).toBe(2);
    expect(llm.structuredMode).toBe('grammar');
  });

  it('goes back to the grammar where words do not read either', async () => {
    const llm = new TwoModes(() => 'no');
    llm.json = async () => 'no JSON here either';
    const r = await checkModel(llm);
    expect(r.verdict).toBe('unusable');
    expect(r.structured.switched).toBe(false);
    expect(llm.structuredMode).toBe('grammar');
    expect(r.calls).toBe(4);
  });
});
