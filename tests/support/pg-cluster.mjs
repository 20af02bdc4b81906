// A private PostgreSQL for the relay's tests and benchmark: a cluster in a temp folder, from the
// binaries Debian's postgresql package installs, on a free 127.0.0.1 port; gone when stopped. With
// TEALEAF_PG_URL set, that database is used instead (and never stopped or restarted here).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Runs one statement on a database; its rows. */
export async function sql(url, text, params = []) {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}

function binDir() {
  const roots = ['/usr/lib/postgresql'].filter(existsSync);
  for (const root of roots) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'The relay tests need PostgreSQL: install it (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql) or set TEALEAF_PG_URL to a database they may use.',
    );
  }
}

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Starts a cluster; resolves with its URL, a restart (a crash: immediate stop, then start) and stop. `private`: never TEALEAF_PG_URL (a test that reads the cluster's files). */
export async function startPostgres({ private: own = false } = {}) {
  if (process.env.TEALEAF_PG_URL && !own) {
    return { url: process.env.TEALEAF_PG_URL, dataDir: undefined, restart: undefined, stop: async () => undefined };
  }
  const bin = binDir();
  // initdb and postgres refuse to run as root: as root, they run as the postgres user.
  const asRoot = process.getuid?.() === 0;
  const run = (cmd, args) =>
    execFileSync(asRoot ? 'runuser' : join(bin, cmd), asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
  const dir = mkdtempSync(join(tmpdir(), 'tealeaf-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=64MB`;
  const start = () => run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', opts, 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** The cluster's files: tables and write-ahead log. */
    dataDir: data,
    /** The database killed (no checkpoint, as in a crash) and started again: it recovers from its log. */
    restart: async () => {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      start();
    },
    stop: async () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
