// The import-cycle check of `npm run lint` for TypeScript and JavaScript modules (docs/ARCHITECTURE.md):
// no module in src reaches itself again through what it imports, type-only imports included, since
// a circle of types is a circle of layers all the same. dpdm reads .ts and .js (the .svelte.ts rune
// modules too) but not .svelte components: eslint's import-x/no-cycle looks at those
// (eslint.config.js).
export default {
  files: ['src/**/*.ts', 'src/**/*.js'],
  exitCode: 'circular:1',
  tree: false,
  warning: false,
  progress: false,
};
