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
    testTimeout: 60_000,
    pool: 'threads',
    globalSetup: ['tests/support/global-setup.ts'],
  },
});
