// The checks before the tests (`npm test`): type check, lint, format. Each is one process that
// mostly keeps one core busy, so they run side by side (about a minute less on a 2-core machine);
// each one's output is printed whole when it ends, and the run fails if any of them fails.
import { spawn } from 'node:child_process';

const CHECKS = ['check', 'lint', 'format:check'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm, ['run', '-s', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => out.push(b));
    child.on('close', (code, signal) => {
      const secs = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`=== ${script} (${secs} s, exit ${code ?? signal}) ===\n${Buffer.concat(out).toString()}`);
      resolve(code === 0);
    });
  });
}

const passed = await Promise.all(CHECKS.map(run));
const failed = CHECKS.filter((_, i) => !passed[i]);
if (failed.length) console.log(`FAILED: ${failed.join(', ')}`);
process.exit(failed.length ? 1 : 0);
