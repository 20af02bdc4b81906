// Runs every tests/e2e/*.spec.mjs, each file in its own Node test runner. Each file has its own
// Chromium and its own servers on free ports, so files run side by side: E2E_JOBS at once
// (default 2; the specs mostly wait on the app). The longest files start first, so the last to
// finish are short. A file's output is printed whole when it ends, then a summary of all.
// `node tests/e2e/run.mjs sync trust-` runs the files whose names hold any of the words.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// The longest files, longest first (measured two at a time on a busy 2-core machine).
const LONG = [
  'trust-matrix',
  'long-chat',
  'explorer-scale',
  'history-import-large',
  'memory-control',
  'search-model',
  'status-words',
  'a11y',
  'keyboard',
  'confirm',
  'explorer-keys',
  'chat-manage',
  'sync.spec',
  'tabs-settings',
  'trust-xss',
  'trust-tabs',
];
const rank = (f) => {
  const i = LONG.findIndex((l) => f.includes(l));
  return i === -1 ? LONG.length : i;
};

const dir = import.meta.dirname;
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.spec.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const jobs = Math.max(1, Math.floor(Number(process.env.E2E_JOBS ?? 2)) || 1);
const started = Date.now();

/** Runs one file; resolves with its exit code and counts once it ends. */
function runFile(file, names = []) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const only = names.map((n) => `--test-name-pattern=^${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...only, join(dir, file)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => out.push(b));
    child.on('close', (code, signal) => {
      const text = Buffer.concat(out).toString();
      const count = (name) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      const secs = Math.round((Date.now() - t0) / 1000);
      process.stdout.write(`\n=== ${file} (${secs} s, exit ${code ?? signal}) ===\n${text}`);
      resolve({ file, code: code ?? 1, pass: count('pass'), fail: count('fail'), secs, failing: failingNames(text) });
    });
  });
}

/** The names of the tests the spec reporter lists under "failing tests" (top-level tests only). */
function failingNames(text) {
  const at = text.lastIndexOf('✖ failing tests:');
  if (at < 0) return [];
  return [...text.slice(at).matchAll(/^✖ (.+?) \([\d.]+ms\)$/gm)].map((m) => m[1]);
}

const queue = [...files];
const results = [];
await Promise.all(
  Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) results.push(await runFile(f));
  }),
);

// A file that failed beside another runs again alone, once: a pass then is reported as flaky by
// name (a race in the test or the app to look at), a second failure fails the run.
const firstFailed = results.filter((r) => r.code !== 0);
const flaky = [];
const failed = [];
for (const r of firstFailed) {
  if (jobs === 1) {
    failed.push(r);
    continue;
  }
  // Only its failing tests where the reporter named them (a whole long file again costs minutes).
  const names = r.fail > 0 && r.failing.length > 0 ? r.failing : [];
  console.log(
    `\n=== ${r.file} failed beside another file: running ${names.length ? `its ${names.length} failing test(s)` : 'it'} again alone ===`,
  );
  const again = await runFile(r.file, names);
  (again.code === 0 ? flaky : failed).push(again.code === 0 ? r : again);
}
const sum = (k) => results.reduce((s, r) => s + r[k], 0);
console.log(
  `\n=== e2e: ${files.length} files, ${sum('pass')} tests passed, ${sum('fail')} failed, ${jobs} at a time, ${Math.round((Date.now() - started) / 1000)} s ===`,
);
for (const r of [...results].sort((a, b) => b.secs - a.secs).slice(0, 8)) console.log(`  ${r.secs} s  ${r.file}`);
for (const r of flaky) console.log(`FLAKY: ${r.file} failed ${r.fail} test(s) beside another file and passed alone: look at it`);
for (const r of failed) console.log(`FAILED: ${r.file} (${r.fail} failing test${r.fail === 1 ? '' : 's'}, exit ${r.code})`);
process.exit(failed.length === 0 && files.length > 0 ? 0 : 1);
