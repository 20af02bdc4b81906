import { describe, expect, it } from 'vitest';
import { comesWithChatModel, downloadingWith, searchModelWords, sizeText } from '../../../src/app/models/search-model';
import type { EmbedderSnapshot } from '../../../src/services/models/model-snapshot';

const base = { sizeMB: 34, label: 'BGE small (English) v1.5' } as const;
const STATES: Record<EmbedderSnapshot['state'], EmbedderSnapshot> = {
  none: { ...base, state: 'none' },
  off: { ...base, state: 'off' },
  loading: { ...base, state: 'loading', modelId: 'Xenova/bge-small-en-v1.5', fraction: 0.41, loadedMB: 13.9, totalMB: 34 },
  ready: { ...base, state: 'ready', modelId: 'Xenova/bge-small-en-v1.5' },
  error: {
    ...base,
    state: 'error',
    modelId: 'Xenova/bge-small-en-v1.5',
    message: 'The download stopped because the network is unreachable.',
  },
};

describe('searchModelWords', () => {
  it('says for every state what recall does now, and offers the one thing to do', () => {
    const w = Object.fromEntries(Object.entries(STATES).map(([k, e]) => [k, searchModelWords(e)]));
    // Only a ready model finds memories by meaning; every other state says words only.
    expect(
      Object.entries(w)
        .filter(([, x]) => x.recall.byMeaning)
        .map(([k]) => k),
    ).toEqual(['ready']);
    for (const k of ['none', 'off', 'loading', 'error']) expect(w[k].recall.text).toMatch(/^Replies find memories by words only/);
    expect(w.ready.recall.text).toBe('Replies find memories by meaning and by words: the memory search model is ready.');

    expect(w.none).toMatchObject({
      state: 'Not loaded.',
      action: { kind: 'load', label: 'Download now (34 MB)' },
      recall: { text: 'Replies find memories by words only: the memory search model is not loaded.', next: 'Load it in Models.' },
    });
    expect(w.none.hint).toBe('It downloads with the next chat model you load (34 MB), or now.');
    expect(w.off).toMatchObject({
      state: 'Off.',
      action: { kind: 'load', label: 'Turn on (34 MB)' },
      recall: { next: 'Turn it on in Models.' },
    });
    expect(w.off.recall.text).toMatch(/is off\.$/);
    expect(w.loading.state).toBe('Loading BGE small (English) v1.5… 41% · 14 MB of 34 MB');
    expect(w.loading.action).toEqual({ kind: 'cancel', label: 'Cancel' });
    expect(w.loading.recall.text).toBe('Replies find memories by words only until the memory search model is ready (41%).');
    expect(w.loading.hint).toMatch(/Chat works meanwhile/);
    expect(w.ready).toMatchObject({ state: 'Ready: Xenova/bge-small-en-v1.5', action: { kind: 'turn-off' } });
    // A failure names itself, says chat still works and what to do.
    expect(w.error.failed).toBe(true);
    expect(w.error.state).toBe(STATES.error.message);
    expect(w.error.hint).toMatch(/Chat works without it.*online again, retry/);
    expect(w.error.action).toEqual({ kind: 'load', label: 'Retry (34 MB)' });
    expect(w.error.recall.next).toBe('Retry in Models.');
    for (const k of ['none', 'off', 'loading', 'ready']) expect(w[k].failed).toBeUndefined();
  });

  it('shows loading progress without sizes until the total is known', () => {
    expect(searchModelWords({ ...base, state: 'loading', fraction: 0 }).state).toBe('Loading BGE small (English) v1.5… 0%');
  });
});

describe('comesWithChatModel', () => {
  it('announces the download with its size only while the model is wanted and not loaded', () => {
    expect(comesWithChatModel(STATES.none)).toMatch(/^The memory search model \(34 MB\) downloads with the chat model you choose/);
    for (const k of ['off', 'loading', 'ready', 'error'] as const) expect(comesWithChatModel(STATES[k])).toBeUndefined();
  });
});

describe('downloadingWith', () => {
  it("shows the search model's progress beside a chat model's download, only while it downloads", () => {
    expect(downloadingWith(STATES.loading)).toBe('Also downloading the memory search model (34 MB): 41% · 14 MB of 34 MB');
    for (const k of ['none', 'off', 'ready', 'error'] as const) expect(downloadingWith(STATES[k])).toBeUndefined();
  });
});

describe('sizeText', () => {
  it('reads sizes as people do', () => {
    expect([sizeText(undefined), sizeText(0.1), sizeText(34), sizeText(33.6), sizeText(1600)]).toEqual([
      '?',
      '0.1 MB',
      '34 MB',
      '34 MB',
      '1.6 GB',
    ]);
  });
});
