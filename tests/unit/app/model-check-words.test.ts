// The self-test's words (src/app/models/model-check-words.ts): what the card and the chat's notice
// say for each state and verdict, a better model named only where one can be, and how the engine
// asks for structured answers.
import { describe, expect, it } from 'vitest';
import { betterModel, chatNotice, checkWords, modeWords, shortLabel } from '../../../src/app/models/model-check-words';
import type { ModelCheckSnapshot } from '../../../src/services/models/model-check';
import type { ModelCheckRecord } from '../../../src/services/models/model-checks';
import type { ModelChoice } from '../../../src/services/models/model-snapshot';

const choice = (id: string, label: string, sizeMB: number, extra: Partial<ModelChoice> = {}): ModelChoice => ({
  id,
  label,
  description: '',
  sizeMB,
  needsGpu: true,
  engine: 'webgpu',
  ...extra,
});
const choices = [
  choice('qwen-0.5', 'Qwen2.5 0.5B Instruct (q4f16)', 280),
  choice('qwen-1.5', 'Qwen2.5 1.5B Instruct (q4f16)', 860),
  choice('qwen-3', 'Qwen2.5 3B Instruct (q4f16)', 1700, { unavailable: 'Needs more graphics memory.' }),
  choice('smol', 'SmolLM2 360M Instruct (CPU)', 260, { engine: 'cpu', needsGpu: false }),
];
const m = { choices, loadedId: 'qwen-0.5', recommendedId: 'qwen-1.5' };

const record = (verdict: ModelCheckRecord['verdict'], failed: string[] = [], extra: Partial<ModelCheckRecord> = {}): ModelCheckRecord => ({
  version: 1,
  verdict,
  checks: [
    { id: 'summary-readable', passed: true, reason: 'its summary could be read' },
    ...failed.map((reason, i) => ({ id: i === 0 ? ('summary-repeats' as const) : ('summary-facts' as const), passed: false, reason })),
  ],
  mode: 'grammar',
  canSwitch: false,
  switched: false,
  at: 1,
  label: 'Qwen2.5 0.5B Instruct (q4f16)',
  ...extra,
});
const done = (r: ModelCheckRecord): ModelCheckSnapshot => ({ key: 'qwen-0.5', label: r.label, state: 'done', result: r });

describe('checkWords', () => {
  it('says the check runs, and waits while a reply is written', () => {
    expect(checkWords({ key: 'k', label: 'X', state: 'running' }, m).headline).toBe('Checking how well this model writes memories…');
    expect(checkWords({ key: 'k', label: 'X', state: 'waiting' }, m).headline).toMatch(/waits while Tealeaf replies/);
  });

  it('names what a weak model did and a larger model that fits', () => {
    const w = checkWords(done(record('weak', ['it repeated items', 'it missed 2 of 4 facts (the sister Ana and eating fish again)'])), m);
    expect(w.tone).toBe('weak');
    expect(w.headline).toBe('Qwen2.5 0.5B wrote memories poorly in a short test (it repeated items and missed 2 of 4 facts).');
    expect(w.advice).toBe(
      'Memories from your chats may be incomplete or wrong; a larger model such as Qwen2.5 1.5B, which fits this device, usually does better.',
    );
    expect(w.details).toEqual(['it repeated items', 'it missed 2 of 4 facts (the sister Ana and eating fish again)']);
  });

  it('says plainly when a model cannot memorise at all', () => {
    const w = checkWords(done(record('unusable', ['it wrote the answer format back instead of an answer'])), m);
    expect(w.tone).toBe('bad');
    expect(w.headline).toBe(
      'Qwen2.5 0.5B could not write memories in a short test (it wrote the answer format back instead of an answer).',
    );
    expect(w.advice).toMatch(/^Tealeaf will remember little of your chats with it; a larger model such as Qwen2.5 1.5B/);
  });

  it('is short for a good model, and gives no notice in the chat', () => {
    const check = done(record('good'));
    expect(checkWords(check, m)).toMatchObject({ tone: 'good', headline: 'Qwen2.5 0.5B wrote memories well in a short test.' });
    expect(chatNotice(check, m)).toBeUndefined();
    expect(chatNotice({ key: 'k', label: 'X', state: 'running' }, m)).toBeUndefined();
    expect(chatNotice(done(record('weak', ['it repeated items'], { noticeHidden: true })), m)).toBeUndefined();
    expect(chatNotice(done(record('weak', ['it repeated items'])), m)?.headline).toMatch(/poorly/);
  });
});

describe('betterModel', () => {
  it('prefers a model that did well in the same test', () => {
    expect(betterModel(m, { smol: record('good') })).toBe('SmolLM2 360M (CPU) did well in the same test');
  });
  it('names no model where none is larger and usable, and the server its own way', () => {
    expect(betterModel({ ...m, loadedId: 'qwen-1.5' }, {})).toBeUndefined();
    expect(betterModel({ ...m, loadedId: 'local-server' }, {})).toBe('a larger model on your model server usually does better');
    expect(betterModel({ ...m, loadedId: 'browser-builtin' }, {})).toBeUndefined();
  });
});

describe('modeWords and shortLabel', () => {
  it('says how each engine asks for structured answers', () => {
    expect(modeWords({ mode: 'grammar', canSwitch: false, switched: false })).toMatch(/a grammar/);
    expect(modeWords({ mode: 'words', canSwitch: false, switched: false })).toMatch(/no grammar .* in words and repairs/);
    expect(modeWords({ mode: 'words', canSwitch: true, switched: true })).toMatch(
      /did not give readable answers, so Tealeaf now asks .* in words/,
    );
  });
  it('shortens catalog labels', () => {
    expect(shortLabel('Llama 3.2 1B Instruct (q4f32)')).toBe('Llama 3.2 1B');
    expect(shortLabel('qwen2.5:0.5b')).toBe('qwen2.5:0.5b');
  });
});
