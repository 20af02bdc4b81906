// The Content Security Policy, in one place: injected as a <meta> into index.html at build time and
// sent as a header (CSP_HEADER, with frame-ancestors) by `npm start` (vite preview), `npm run dev`
// and the e2e server, so the model workers are covered too. No inline or remote script;
// connections only to this site, the model hosts and a model server on this computer.
export const MODEL_HOSTS = ['https://huggingface.co', 'https://*.huggingface.co', 'https://*.hf.co', 'https://raw.githubusercontent.com'];

// A model server on this computer (Ollama, LM Studio, llama.cpp's server: src/models/local-server.ts):
// loopback over http on any port, and nothing else beyond the model hosts.
export const LOOPBACK_SOURCES = ['http://127.0.0.1:*', 'http://localhost:*'];

// Sync relays beyond this computer: https origins named when the app is built, e.g.
// TEALEAF_SYNC_RELAYS="https://relay.example.org" npm run build. A relay on loopback needs none.
const env = typeof process !== 'undefined' ? process.env : {};
export const RELAY_SOURCES = (env.TEALEAF_SYNC_RELAYS ?? '').split(/\s+/).filter((s) => /^https:\/\/[^\s;']+$/.test(s));

export const CSP = [
  "default-src 'self'",
  // WebAssembly (web-llm's TVM runtime, ONNX Runtime) needs wasm-unsafe-eval; nothing else is
  // eval'd. ONNX Runtime imports its own glue module from a blob: URL it creates inside the
  // embedding worker; only code already running here can make one, so no outside script can.
  "script-src 'self' 'wasm-unsafe-eval' blob:",
  "worker-src 'self'",
  `connect-src 'self' ${[...MODEL_HOSTS, ...LOOPBACK_SOURCES, ...RELAY_SOURCES].join(' ')}`,
  "img-src 'self' data:",
  // Svelte sets a few style attributes (progress bars); model text can never carry styles
  // because the sanitiser strips them.
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "manifest-src 'self'",
].join('; ');

/**
 * The policy as an HTTP header: a <meta> policy cannot carry frame-ancestors, so only the header
 * stops another site from framing the app (and clicking "Delete all my data" inside the frame).
 */
export const CSP_HEADER = `${CSP}; frame-ancestors 'none'`;

/** Every header a server of Tealeaf must send with each response (README, "Hosting it yourself"). */
export const SECURITY_HEADERS = {
  'Content-Security-Policy': CSP_HEADER,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};
