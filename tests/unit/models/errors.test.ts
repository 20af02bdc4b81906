import { describe, expect, it } from 'vitest';
import { classifyModelError, ModelRuntimeError, serializeError } from '../../../src/models/errors';

// Messages as thrown by web-llm 0.2.86, tvmjs, transformers.js and browsers' fetch.
const CASES: Array<[string, string]> = [
  ['WebGPU is not supported in your current environment, but it is necessary to run the WebLLM engine. Please make sure ...', 'no-webgpu'],
  ['Cannot find WebGPU in the environment', 'no-webgpu'],
  [
    "Unable to find a compatible GPU. This issue might be because your computer doesn't have a GPU, or your system settings are not configured properly.",
    'no-adapter',
  ],
  [
    'The WebGPU device was lost while loading the model. This issue often occurs due to running out of memory (OOM). To resolve this, try reloading with a model that has fewer parameters or uses a smaller context length.',
    'device-lost',
  ],
  [
    'Device was lost. This can happen due to insufficient memory or other GPU constraints. Detailed error: [object GPUDeviceLostInfo].',
    'device-lost',
  ],
  ['Out of memory', 'out-of-memory'],
  ['GPUPipelineError: Failed to allocate buffer of size 536870912', 'out-of-memory'],
  ['RangeError: Array buffer allocation failed', 'out-of-memory'],
  [
    'Failed to store https://huggingface.co/x/params_shard_3.bin with error: QuotaExceededError: The quota has been exceeded.',
    'storage-full',
  ],
  ['This model requires WebGPU extension shader-f16, which is not enabled in this browser.', 'unsupported-model'],
  [
    'Cannot initialize runtime because of requested maxBufferSize exceeds limit. requested=256MB, limit=128MB. Consider upgrading your browser.',
    'unsupported-model',
  ],
  ['TypeError: Failed to fetch', 'network'],
  ["TypeError: Failed to execute 'add' on 'Cache': Request failed", 'download-failed'],
  ['NetworkError when attempting to fetch resource.', 'network'],
  ['Load failed', 'network'],
  ['Failed to store https://x/params_shard_0.bin with error: TypeError: Failed to fetch', 'network'],
  ['Failed to store https://127.0.0.1:4173/mirror/x/ndarray-cache.json with error: Error: Network response was not ok', 'download-failed'],
  ['Cannot fetch https://huggingface.co/mlc-ai/x/resolve/main/mlc-chat-config.json', 'download-failed'],
  ['SyntaxError: Unexpected token \'<\', "<!doctype "... is not valid JSON', 'download-failed'],
  ['Could not locate file: "/models/tealeaf-test/missing/config.json".', 'download-failed'],
  [
    '`local_files_only=true` or `env.allowRemoteModels=false` and file was not found locally at "/x/tealeaf-test/missing/config.json".',
    'download-failed',
  ],
  ['ModelFileNotFoundError: missing', 'download-failed'],
  ['request to https://huggingface.co/x failed, reason: getaddrinfo ENOTFOUND huggingface.co', 'network'],
  ['Integrity verification failed for https://x/model.wasm', 'download-failed'],
  ['AbortError: The user aborted a request.', 'cancelled'],
  ['Model loading was cancelled by the user.', 'cancelled'],
  ['Embedding was cancelled.', 'cancelled'],
  ['Aborted(RuntimeError: unreachable). Build with -sASSERTIONS for more info.', 'unknown'],
  ['Something else entirely', 'unknown'],
];

describe('classifyModelError', () => {
  it.each(CASES)('%s -> %s', (message, kind) => {
    expect(classifyModelError(new Error(message)).kind).toBe(kind);
  });

  it('works on serialized errors that crossed the worker boundary (name kept apart)', () => {
    const s = structuredClone(serializeError(Object.assign(new Error('The user aborted a request.'), { name: 'AbortError' })));
    expect(classifyModelError(s).kind).toBe('cancelled');
    expect(classifyModelError('Failed to fetch').kind).toBe('network');
  });

  it('calls a failed download "network" when the browser is offline', () => {
    expect(classifyModelError(new Error('Cannot fetch https://x/y'), { online: false }).kind).toBe('network');
    expect(classifyModelError(new Error('Cannot fetch https://x/y'), { online: true }).kind).toBe('download-failed');
  });

  it('gives a user-facing message that says what to do, and keeps the detail', () => {
    const c = classifyModelError(new Error('Out of memory'));
    expect(c.message).toMatch(/smaller model/);
    expect(c.detail).toBe('Out of memory');
    const again = classifyModelError(new ModelRuntimeError(c));
    expect(again).toEqual(c);
  });
});
