// Scratch harness build for screenshots and the render benchmark of the memory explorer.
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [svelte({ configFile: fileURLToPath(new URL('../../svelte.config.js', import.meta.url)) })],
  build: {
    outDir: fileURLToPath(new URL('../../.tmp/visual-dist', import.meta.url)),
    emptyOutDir: true,
    rollupOptions: { input: fileURLToPath(new URL('./explorer.html', import.meta.url)) },
  },
  logLevel: 'warn',
});
