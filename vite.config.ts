import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { VitePWA } from 'vite-plugin-pwa';
import { CSP, SECURITY_HEADERS } from './src/csp.js';

// mode "e2e" builds the same app into dist-e2e with the scripted test model reachable
// (tests only, see tests/support/scripted-model.ts); the production build never contains it.
export default defineConfig(({ mode }) => ({
  plugins: [
    svelte(),
    // The e2e build starts from an entry that first registers the scripted test model
    // (tests/support/e2e-main.ts); no file in src imports test code.
    {
      name: 'tealeaf-e2e-entry',
      transformIndexHtml: {
        order: 'pre' as const,
        handler: (html: string) => (mode === 'e2e' ? html.replace('/src/main.ts', '/tests/support/e2e-main.ts') : html),
      },
    },
    {
      name: 'tealeaf-csp',
      apply: 'build',
      transformIndexHtml: (html: string) =>
        html.replace(
          '<meta charset="UTF-8" />',
          `<meta charset="UTF-8" />\n    <meta http-equiv="Content-Security-Policy" content="${CSP}" />`,
        ),
    },
    {
      // Tokenizer data (a model server's family, the e2e stand-in's) ships pretty-printed: written
      // compact it is a third to a half smaller (Gemma 3's 33 MB -> 14 MB) and parses a fifth to a third
      // faster. The
      // file keeps the name Vite gave it, a hash of the original: still one name per content.
      name: 'tealeaf-compact-json',
      apply: 'build',
      generateBundle(_options, bundle) {
        for (const file of Object.values(bundle)) {
          if (file.type !== 'asset' || !/(^|\/)tokenizer(_config)?-[\w-]+\.json$/.test(file.fileName)) continue;
          const text = typeof file.source === 'string' ? file.source : new TextDecoder().decode(file.source);
          file.source = JSON.stringify(JSON.parse(text));
        }
      },
    },
    VitePWA({
      registerType: 'autoUpdate',
      injectRegister: false,
      manifest: {
        name: 'Tealeaf',
        short_name: 'Tealeaf',
        description: 'A private AI companion with a lifelong memory, running on your own device.',
        theme_color: '#1f4d3a',
        background_color: '#f7f6f2',
        display: 'standalone',
        icons: [{ src: '/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' }],
      },
      workbox: {
        // The app shell and every runtime asset (workers) are precached so the app opens with no
        // network after the first visit. Model weights are cached by the runtimes; tokenizer data
        // (the only JSON assets, also the e2e stand-in's) by the runtime cache below, at first use:
        // precached, every first visit would fetch 27 MB that only model-server users need.
        globPatterns: ['**/*.{js,mjs,css,html,svg,webmanifest}'],
        // Files over 16 MB are left to the runtime caches below (a model server's tokenizer data:
        // Gemma 3's is 14 MB written compact), dropped here without a warning, which the plugin would make an error.
        maximumFileSizeToCacheInBytes: 64 * 1024 * 1024,
        manifestTransforms: [(entries) => ({ manifest: entries.filter((e) => e.size <= 16 * 1024 * 1024), warnings: [] })],
        // ONNX Runtime's wasm (14 MB) is cached on first use, not on first visit: only people who
        // download the memory search model need it.
        runtimeCaching: [
          { urlPattern: ({ url }) => url.pathname.endsWith('.wasm'), handler: 'CacheFirst', options: { cacheName: 'tealeaf-wasm' } },
          // The tokenizer data for a model server's family (src/models/tokenizer-assets.ts, 1 to 14 MB
          // each, written compact) likewise: fetched at the first count of such a model, kept for offline use. Names
          // carry a content hash, so a cached file is never stale.
          {
            urlPattern: ({ url }) => /\/assets\/tokenizer(_config)?-[\w-]+\.json$/.test(url.pathname),
            handler: 'CacheFirst',
            options: { cacheName: 'tealeaf-tokenizers' },
          },
        ],
        navigateFallback: '/index.html',
        navigateFallbackDenylist: [/^\/models\//, /^\/mlc\//],
        cleanupOutdatedCaches: true,
      },
    }),
  ],
  build: {
    outDir: mode === 'e2e' ? 'dist-e2e' : 'dist',
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 8000,
    // Rolldown prints how long each plugin took on every build (PLUGIN_TIMINGS): advice for a slow
    // build, not a fault, and it buried real warnings under forty lines on each `npm start`.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  // Workers are bundled by builds of their own, which print the same timings.
  // transformers.js imports ONNX Runtime's WebGPU build, whose wasm is the asyncify one (27 MB).
  // Both workers run ONNX Runtime on the processor only (WebGPU models go through web-llm), so the
  // plain wasm build serves them: half the download, and a faster start on every page load.
  resolve: { alias: [{ find: /^onnxruntime-web\/webgpu$/, replacement: 'onnxruntime-web/wasm' }] },
  worker: { format: 'es', rolldownOptions: { checks: { bundlerTimings: false } } },
  // Both servers the README names send the page's policy plus frame-ancestors as headers. The dev
  // server runs under the full policy too: its client is a same-origin module and HMR a same-origin
  // WebSocket (connect-src 'self'); tests/e2e/trust-headers.spec.mjs loads the app through it.
  preview: { host: '127.0.0.1', headers: SECURITY_HEADERS },
  server: { headers: SECURITY_HEADERS },
}));
