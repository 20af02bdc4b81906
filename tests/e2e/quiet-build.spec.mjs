// `npm start` builds the app before serving it; that build prints what a person needs and no more:
// no plugin timings (three blocks of about forty lines on every start), no warning from
// the project's own code (INEFFECTIVE_DYNAMIC_IMPORT: a module loaded lazily and statically).
// The same production build `npm start` runs, into a folder of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { rmSync } from 'node:fs';

const ROOT = join(import.meta.dirname, '../..');

/** What `vite build` printed, colours removed, and its exit status. */
function build(extra = []) {
  const outDir = join(ROOT, '.tmp/quiet-build');
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--outDir', outDir, ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  rmSync(outDir, { recursive: true, force: true });
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

test('the production build prints no plugin timings and no warnings', () => {
  const { status, out } = build();
  assert.equal(status, 0, out);
  assert.match(out, /built in/, 'the build ran');
  assert.deepEqual(noise(out), [], out);
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
