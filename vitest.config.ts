import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Unit tests run the memory core, store and pure layout code in Node. The Svelte plugin compiles
// rune-based view state (*.svelte.ts) for the browser, so its reactivity runs as in the app.
export default defineConfig({
  plugins: [svelte({ configFile: false, compilerOptions: { runes: true } })],
  test: {
    // tests/integration: the relay on a private PostgreSQL (tests/support/pg-cluster.mjs).
    include: ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts'],
    environment: 'node',
    // A safety net, not a deadline (tests wait on events, never on time): a property test's
    // thousand cases took over 60 s on a 2-core machine with both cores busy.
    testTimeout: 300_000,
    pool: 'threads',
    // Vitest's default is one worker fewer than the cores: on a 2-core machine (CI) one worker, and
    // the phase used 1.1 cores (580 CPU-s in 511 s).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['tests/support/global-setup.ts'],
    // Threads share a process: each file's BroadcastChannels are kept to its thread.
    setupFiles: ['tests/support/thread-channels.ts'],
  },
});
