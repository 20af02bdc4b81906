import { defineConfig } from 'vitest/config';

// Unit tests run the memory core, store and pure layout code in Node.
export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    pool: 'threads',
  },
});
