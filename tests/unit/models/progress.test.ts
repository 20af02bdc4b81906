import { describe, expect, it } from 'vitest';
import { ProgressTracker, embedProgress, parseWebLlmReport } from '../../../src/models/progress';

// Report texts exactly as web-llm 0.2.86 / tvmjs format them.
const fetching = (mb: number, pct: number, secs: number) => ({
  progress: pct / 100,
  timeElapsed: secs,
  text: `Fetching param cache[3/22]: ${mb}MB fetched. ${pct}% completed, ${secs} secs elapsed. It can take a while when we first visit this page to populate the cache. Later refreshes will become faster.`,
});

describe('parseWebLlmReport', () => {
  it('recognises each phase', () => {
    expect(parseWebLlmReport(fetching(120, 15, 12))).toEqual({ phase: 'download', phaseFraction: 0.15, loadedMB: 120 });
    expect(
      parseWebLlmReport({
        progress: 0.5,
        timeElapsed: 1,
        text: 'Loading model from cache[11/22]: 400MB loaded. 50% completed, 1 secs elapsed.',
      }),
    ).toEqual({
      phase: 'load-cache',
      phaseFraction: 0.5,
      loadedMB: 400,
    });
    expect(
      parseWebLlmReport({ progress: 0.25, timeElapsed: 3, text: 'Loading GPU shader modules[25/100]: 25% completed, 3 secs elapsed.' }),
    ).toEqual({
      phase: 'compile',
      phaseFraction: 0.25,
    });
    expect(parseWebLlmReport({ progress: 1, timeElapsed: 9, text: 'Finish loading on WebGPU - google' }).phase).toBe('ready');
    expect(parseWebLlmReport({ progress: 0, timeElapsed: 0, text: 'Start to fetch params' }).phase).toBe('download');
    expect(parseWebLlmReport({ progress: NaN, timeElapsed: 0, text: 'whatever' })).toEqual({ phase: 'init', phaseFraction: 0 });
  });
});

describe('ProgressTracker', () => {
  it('derives MB totals, a time left, and never goes backwards', () => {
    let t = 0;
    const tr = new ProgressTracker(900, () => t);
    const a = tr.update(fetching(0, 0, 0));
    expect(a.totalMB).toBe(900);
    expect(a.etaSeconds).toBeUndefined();
    t = 10_000;
    const b = tr.update(fetching(100, 10, 10));
    expect(b.totalMB).toBe(1000);
    expect(b.loadedMB).toBe(100);
    expect(b.etaSeconds).toBe(90); // 10 MB/s, 900 MB left
    expect(b.text).toBe('Downloading 100 of 1000 MB');
    expect(b.fraction).toBeCloseTo(0.09);
    const c = tr.update({ progress: 0.1, timeElapsed: 11, text: 'Loading GPU shader modules[1/10]: 10% completed, 11 secs elapsed.' });
    expect(c.phase).toBe('compile');
    expect(c.fraction).toBeCloseTo(0.91);
    const d = tr.update(fetching(100, 10, 12));
    expect(d.fraction).toBeGreaterThanOrEqual(c.fraction);
    expect(tr.update({ progress: 1, timeElapsed: 20, text: 'Finish loading on WebGPU - x' }).fraction).toBe(1);
  });
});

describe('embedProgress', () => {
  it('converts bytes to MB and a fraction', () => {
    const p = embedProgress(5 * 2 ** 20, 20 * 2 ** 20, 7);
    expect(p).toMatchObject({ phase: 'download', fraction: 0.25, loadedMB: 5, totalMB: 20, etaSeconds: 7 });
    expect(embedProgress(0, 0).fraction).toBe(0);
  });
});
