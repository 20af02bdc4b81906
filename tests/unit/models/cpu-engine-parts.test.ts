// The pure parts of the CPU engine: per-token streaming, error wording, catalog.
import { describe, expect, it } from 'vitest';
import { CPU_MODELS, DEFAULT_CPU_MODEL_ID, cpuModelById, recommendEngine } from '../../../src/models/catalog';
import { malformedModelMessage } from '../../../src/models/cpu-llm-worker-core';
import { classifyModelError } from '../../../src/models/errors';
import { TokenStreamer } from '../../../src/models/token-streamer';
import type { GpuProbe } from '../../../src/models/webgpu';

describe('TokenStreamer', () => {
  it('skips the prompt, emits each token, and holds back half a character', () => {
    const bytes: Record<string, number[]> = { '1': [0x68], '2': [0xc3], '3': [0xa9], '4': [0x21] };
    const decode = (ids: bigint[]) => new TextDecoder().decode(new Uint8Array(ids.flatMap((i) => bytes[String(i)])));
    const out: string[] = [];
    const s = new TokenStreamer(decode, (d) => out.push(d));
    s.put([[9n, 9n, 9n]]);
    for (const t of [1n, 2n, 3n, 4n]) s.put([[t]]);
    s.end();
    expect(out).toEqual(['h', 'é', '!']);
    expect(s.count).toBe(4);
  });
});

describe('CPU engine errors and catalog', () => {
  it('classifies a malformed model file with advice', () => {
    const c = classifyModelError(new Error(malformedModelMessage('x/y', 'Load model from /m.onnx failed:Protobuf parsing failed.')));
    expect(c.kind).toBe('bad-model-file');
    expect(c.message).toMatch(/Download it again/);
    expect(classifyModelError(new Error('Load model from a failed:Protobuf parsing failed.')).kind).toBe('bad-model-file');
  });

  it('lists small instruct models, smallest first, with the default among them', () => {
    expect(cpuModelById(DEFAULT_CPU_MODEL_ID)).toBeDefined();
    for (const m of CPU_MODELS) {
      expect(m.paramsB).toBeLessThanOrEqual(1.6);
      expect(m.id).toMatch(/^[\w-]+\/[\w.-]+$/);
      expect(m.maxReplyTokens).toBeLessThan(m.contextTokens);
      expect(m.ramMB).toBeGreaterThan(m.downloadMB);
    }
    expect(CPU_MODELS.map((m) => m.paramsB)).toEqual([...CPU_MODELS.map((m) => m.paramsB)].sort((a, b) => a - b));
  });

  it('recommends the CPU engine without WebGPU or when no WebGPU model fits, else WebGPU', () => {
    expect(recommendEngine({ ok: false } as GpuProbe)).toMatchObject({
      engine: 'cpu',
      reason: expect.stringMatching(/WebGPU is not available/),
    });
    const gpu = { ok: true, gpu: { isFallbackAdapter: false, shaderF16: true, deviceMemoryGB: 8 } } as unknown as GpuProbe;
    expect(recommendEngine(gpu).engine).toBe('webgpu');
    const tiny = { ok: true, gpu: { isFallbackAdapter: false, shaderF16: false, deviceMemoryGB: 0.5 } } as unknown as GpuProbe;
    expect(recommendEngine(tiny)).toMatchObject({ engine: 'cpu', reason: expect.stringMatching(/too little memory/) });
  });
});
