// For tests/e2e/quiet-build.spec.mjs only: a build that warns (a module loaded lazily by main.js
// and statically by helper.js, which main.js imports), to show the spec notices a warning.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  logLevel: 'info',
  build: { emptyOutDir: true, rolldownOptions: { input: `${import.meta.dirname}/main.js` } },
});
