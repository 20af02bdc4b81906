// Classification of model runtime errors into what the UI needs to say and offer.
// Matches on MESSAGES: error classes are minified in production builds and their names do not
// survive the worker boundary. The phrases below come from web-llm 0.2.86, tvmjs, transformers.js
// and the browsers' fetch errors; tests/unit/models/errors.test.ts pins them.
import { ContextOverflowError } from '../ports';

export type ModelErrorKind =
  | 'no-webgpu'
  | 'no-adapter'
  /** The GPU lacks a feature or limit this particular model needs (e.g. shader-f16). */
  | 'unsupported-model'
  | 'download-failed'
  | 'network'
  /** A model file arrived but is not a model (damaged download, an error page stored as the file). */
  | 'bad-model-file'
  /** The browser refused to store more (disk full or quota). */
  | 'storage-full'
  | 'out-of-memory'
  | 'device-lost'
  | 'cancelled'
  /** A chat/json call before any model finished loading. */
  | 'not-loaded'
  | 'unknown';

export interface ClassifiedError {
  kind: ModelErrorKind;
  /** User-facing: what happened and what to do. */
  message: string;
  /** The original message, for a "details" disclosure and logs. */
  detail: string;
}

/** An error from a model runtime, already classified. Thrown by LlmRuntime and EmbedderRuntime. */
export class ModelRuntimeError extends Error {
  readonly kind: ModelErrorKind;
  readonly detail: string;
  constructor(c: ClassifiedError) {
    super(c.message);
    this.name = 'ModelRuntimeError';
    this.kind = c.kind;
    this.detail = c.detail;
  }
}

/** What crosses the worker boundary (structured clone drops Error subclasses and names). */
export interface SerializedError {
  message: string;
  name?: string;
  /** A ContextOverflowError's counts, which its message alone would carry only in words. */
  tokens?: { prompt: number; context: number };
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof ContextOverflowError)
    return { message: err.message, name: err.name, tokens: { prompt: err.promptTokens, context: err.contextTokens } };
  if (err instanceof Error) return { message: err.message || String(err), name: err.name };
  if (typeof err === 'string') return { message: err };
  try {
    return { message: JSON.stringify(err) };
  } catch {
    return { message: String(err) };
  }
}

function messageOf(err: unknown): string {
  if (err instanceof ModelRuntimeError) return err.detail;
  if (err instanceof Error) return `${err.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err.message}`;
  if (err && typeof err === 'object' && 'message' in err) {
    const m = (err as { message: unknown; name?: unknown }).message;
    const n = (err as { name?: unknown }).name;
    return `${typeof n === 'string' && n !== 'Error' ? `${n}: ` : ''}${String(m)}`;
  }
  return String(err);
}

const RULES: Array<{ kind: Exclude<ModelErrorKind, 'unknown' | 'not-loaded'>; re: RegExp }> = [
  // Order matters: a device-lost message mentions OOM; a failed store wraps a network error;
  // emscripten's "Aborted(...)" is a crash, not a cancellation.
  {
    kind: 'no-webgpu',
    re: /WebGPU is not supported|Cannot find WebGPU in the environment|navigator\.gpu is undefined|WebGPUNotAvailable/i,
  },
  { kind: 'no-adapter', re: /Unable to find a compatible GPU|requestAdapter\(\) returned null|No WebGPU adapter/i },
  {
    kind: 'device-lost',
    re: /device (was |is )?lost|DeviceLostError|GPU device lost|Instance dropped|GPU process (crashed|was lost)|context lost/i,
  },
  { kind: 'storage-full', re: /QuotaExceeded|quota (has been |was )?exceeded|exceeded the quota|not enough (disk )?space|ENOSPC/i },
  {
    kind: 'out-of-memory',
    re: /out of memory|\bOOM\b|OutOfMemory|Failed to allocate|allocation failed|Cannot allocate|could not allocate|createBuffer.*(fail|invalid)|Array buffer allocation failed|memory access out of bounds/i,
  },
  {
    kind: 'unsupported-model',
    re: /requires (WebGPU extension )?(feature )?shader-f16|This model requires feature|exceeds limit\. requested=|maxStorageBufferBindingSize exceeds|ShaderF16SupportError|FeatureSupportError/i,
  },
  {
    kind: 'cancelled',
    re: /AbortError|aborted a request|signal is aborted|operation was aborted|\bwas cancell?ed\b|\bcancell?ed by the user\b|ModelLoadCancelled/i,
  },
  {
    kind: 'network',
    re: /Failed to fetch|NetworkError|network error|Load failed|net::ERR_|ERR_INTERNET_DISCONNECTED|ERR_NAME_NOT_RESOLVED|ERR_CONNECTION|fetch failed/i,
  },
  // Node errno codes: case-sensitive, or "ModelFileNotFoundError" would read as ENOTFOUND.
  { kind: 'network', re: /\b(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ECONNRESET)\b/ },
  {
    kind: 'bad-model-file',
    re: /is damaged or is not an ONNX model|Protobuf parsing failed|Invalid (ONNX )?model file/i,
  },
  {
    kind: 'download-failed',
    re: /Cannot fetch|Failed to store|Failed to execute 'add' on 'Cache'|Network response was not ok|Unable to fetch|received status|status (code )?(4|5)\d\d|\b404\b|Integrity verification failed|Unexpected token '?<|is not valid JSON|failed to load wasm binary|Could not locate file|not found locally|ModelFileNotFound|Cannot find model record|ArtifactManifestError|Failed to load model/i,
  },
];

export interface ClassifyContext {
  /** navigator.onLine at the time of the error: a failed download while offline is "network". */
  online?: boolean;
}

export function classifyModelError(err: unknown, ctx: ClassifyContext = {}): ClassifiedError {
  if (err instanceof ModelRuntimeError) return { kind: err.kind, message: err.message, detail: err.detail };
  const detail = messageOf(err);
  let kind: ModelErrorKind = 'unknown';
  for (const rule of RULES) {
    if (rule.re.test(detail)) {
      kind = rule.kind;
      break;
    }
  }
  if (kind === 'download-failed' && ctx.online === false) kind = 'network';
  return { kind, message: USER_MESSAGES[kind], detail };
}

export const USER_MESSAGES: Record<ModelErrorKind, string> = {
  'no-webgpu':
    'This browser does not offer WebGPU, which the language model needs. Use a recent Chrome or Edge, Safari 26+, or Firefox 141+ on Windows. Your conversations and memories still work.',
  'no-adapter': 'No usable GPU was found. Update your graphics drivers and make sure hardware acceleration is on in the browser settings.',
  'unsupported-model': 'Your GPU cannot run this variant of the model. Choose a q4f32 variant or a smaller model.',
  'download-failed':
    'The model could not be downloaded (the server refused or sent something unexpected). Try again later, or check the model mirror setting.',
  network:
    'The download stopped because the network is unreachable. Check your connection and try again; the parts already downloaded are kept.',
  'bad-model-file':
    'The downloaded model file is damaged or is not a model, so it was removed from this browser. Download it again; if it keeps happening, check the model mirror setting or choose another model.',
  'storage-full': 'Your browser ran out of storage for the model. Free up disk space or delete a cached model, then try again.',
  'out-of-memory': 'The GPU ran out of memory. Close other tabs or apps using the GPU, or choose a smaller model.',
  'device-lost':
    'The GPU stopped responding (usually because it ran out of memory). The model was restarted; your conversation is safe. Try again, or choose a smaller model.',
  cancelled: 'Cancelled.',
  'not-loaded': 'No language model is loaded yet. Choose and download one under Models.',
  unknown: 'Something went wrong with the model. Try again; if it keeps happening, reload the page or choose another model.',
};
