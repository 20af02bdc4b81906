// Builds the cold-start benchmark page (bench/coldstart.mjs drives it in headless Chromium).
//   npx vite build --config bench/coldstart/vite.config.ts
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig({
  root: resolve(import.meta.dirname),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: resolve(import.meta.dirname, '../../.tmp/coldstart-dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
  },
});
