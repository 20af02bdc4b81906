// Names the work in a page's long main-thread tasks (bench:sync:browser): Chromium's sampling
// profiler (CDP Profiler) runs over what is measured, beside the trace of the page's tasks
// (long-tasks.mjs, traceMainThread); both use one clock, so each long task gets the samples that
// fell inside it, counted by function (tasksNamed). busyStretches needs no trace: every run of
// samples without "(idle)" is one stretch (back-to-back tasks with no idle between them count as
// one, which is what the user feels). Function names are readable only with an unminified build
// (vite build --minify false).

/** Starts the profiler on the page; the function it returns stops it and gives the profile. */
export async function startProfile(page, { intervalUs = 1000 } = {}) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: intervalUs });
  await cdp.send('Profiler.start');
  return async () => {
    const { profile } = await cdp.send('Profiler.stop');
    await cdp.detach();
    return profile;
  };
}

const file = (url) => url.replace(/^.*\//, '').replace(/-[\w-]{8}\.js$/, '.js');
const label = (f) => `${f.functionName || '(anonymous)'}${f.url ? ` ${file(f.url)}:${f.lineNumber + 1}` : ''}`;
const isApp = (f) => f.functionName && /\/assets\/[^/]+\.js$/.test(f.url);

function top(counts, total, n) {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([fn, c]) => `${Math.round((100 * c) / total)}% ${fn}`);
}

/** Counts the samples [from, end) of a profile by function: self, innermost app frame, path. */
function describe(profile, nodes, parent, from, end, topN) {
  const stack = (id) => {
    const out = [];
    for (let x = id; x !== undefined; x = parent.get(x)) out.push(nodes.get(x).callFrame);
    return out; // leaf first
  };
  const self = new Map();
  const app = new Map();
  const incl = new Map();
  const count = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
  for (let i = from; i < end; i++) {
    const s = stack(profile.samples[i]);
    count(self, label(s[0]));
    const inner = s.find(isApp);
    count(app, inner ? label(inner) : '(no app frame)');
    for (const name of new Set(s.filter(isApp).map((f) => f.functionName))) count(incl, name);
  }
  const n = Math.max(1, end - from);
  return { samples: end - from, self: top(self, n, topN), app: top(app, n, topN), incl: top(incl, n, 12) };
}

function indexProfile(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const times = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  return { nodes, parent, times };
}

/**
 * What ran in each of Chromium's traced main-thread tasks (long-tasks.mjs, traceMainThread: the
 * trace and the profile share one clock): the samples that fall inside the task, by function.
 */
export function tasksNamed(profile, traced, { minMs = 200, topN = 6 } = {}) {
  const { nodes, parent, times } = indexProfile(profile);
  return traced
    .filter((t) => t.wallMs >= minMs)
    .map((t) => {
      const end = t.startUs + t.wallMs * 1000;
      const from = times.findIndex((x) => x >= t.startUs);
      let to = from;
      while (to >= 0 && to < times.length && times[to] <= end) to++;
      return {
        atMs: Math.round((t.startUs - profile.startTime) / 1000),
        ms: Math.round(t.wallMs),
        cpuMs: Math.round(t.cpuMs),
        ...describe(profile, nodes, parent, Math.max(0, from), Math.max(0, to), topN),
      };
    });
}

/**
 * The busy stretches of at least `minMs`, each with: its length; `self`: where the samples were
 * (a function, or "(garbage collector)", "(program)": the browser's own work such as style,
 * layout and IndexedDB); `app`: the innermost named function of the app's own bundle on each
 * sample's stack (what of ours was running, natives it called included); `incl`: every named
 * app function by the share of samples it was on the stack for (callers included: the path).
 */
export function busyStretches(profile, { minMs = 200, topN = 6 } = {}) {
  const { nodes, parent, times } = indexProfile(profile);
  const stretches = [];
  let from = -1;
  const close = (end) => {
    if (from < 0) return;
    const ms = (times[end - 1] - times[from]) / 1000;
    if (ms >= minMs) stretches.push({ from, end, ms });
    from = -1;
  };
  profile.samples.forEach((id, i) => {
    const idle = nodes.get(id).callFrame.functionName === '(idle)';
    if (idle) close(i);
    else if (from < 0) from = i;
  });
  close(profile.samples.length);
  return stretches.map(({ from, end, ms }) => ({
    atMs: Math.round((times[from] - profile.startTime) / 1000),
    ms: Math.round(ms),
    ...describe(profile, nodes, parent, from, end, topN),
  }));
}
