// The main-thread measure shared by the browser freeze benchmarks (import-freeze, stream-freeze,
// history-freeze): long tasks (PerformanceObserver 'longtask', 50 ms and more) and, as a second
// measure of the same thing, the gaps between the animation frames the page shows.

/** The page's init script (launch({ init })): records long tasks and frames from the start. */
export const MEASURE_INIT = () => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  window.__frames = [];
  const frame = (t) => {
    window.__frames.push(t);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
};

/** The page's clock (performance.now()), to mark the start and end of what is measured. */
export const pageNow = (page) => page.evaluate(() => performance.now());

/** What the page recorded; waits a little first, because long-task entries arrive after the task. */
export async function readMeasure(page) {
  await page.waitForTimeout(300);
  const { tasks, frames } = await page.evaluate(() => ({ tasks: window.__longTasks, frames: window.__frames }));
  return new Measure(tasks, frames);
}

export class Measure {
  constructor(tasks, frames) {
    this.tasks = tasks;
    this.frames = frames;
  }
  /** Long tasks that overlap [from, to]. */
  within(from, to) {
    return this.tasks.filter((t) => t.start + t.duration > from && t.start < to);
  }
  /** The longest task overlapping [from, to] in ms; 0 when none reached 50 ms. */
  longestTask(from, to) {
    return Math.max(0, ...this.within(from, to).map((t) => t.duration));
  }
  /** The longest time between two frames shown in [from, to]. */
  longestFrameGap(from, to) {
    let gap = 0;
    const f = this.frames;
    for (let k = 1; k < f.length; k++) if (f[k] > from && f[k - 1] < to) gap = Math.max(gap, f[k] - f[k - 1]);
    return gap;
  }
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Chromium's own record of the page's main-thread tasks of 50 ms or more, with the time each spent
 * on the processor. On a busy machine a task can be long on the wall clock while its thread waits
 * for a core (a garbage collection that waits for its helper threads, say): the processor time
 * tells the page's own work from that wait. Call before the work; the function it returns stops
 * the trace and gives [{ wallMs, cpuMs, startUs }] (startUs: the trace clock, which is the one
 * Chromium's CPU profiles use: bench/lib/cpu-profile.mjs).
 */
export async function traceMainThread(page) {
  const cdp = await page.context().newCDPSession(page);
  const tasks = [];
  const threads = new Map();
  cdp.on('Tracing.dataCollected', ({ value }) => {
    for (const e of value) {
      if (e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
      else if (e.ph === 'X' && e.name === 'RunTask' && e.dur >= 50_000) tasks.push(e);
    }
  });
  await cdp.send('Tracing.start', {
    categories: 'toplevel,disabled-by-default-devtools.timeline',
    transferMode: 'ReportEvents',
  });
  return async () => {
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    await complete;
    await cdp.detach();
    return tasks
      .filter((e) => threads.get(`${e.pid}:${e.tid}`) === 'CrRendererMain')
      .map((e) => ({ wallMs: e.dur / 1000, cpuMs: (e.tdur ?? 0) / 1000, startUs: e.ts }));
  };
}
