import { describe, expect, it } from 'vitest';
import { adapterName, detectBrowser, probeWebGpu, webGpuAdvice, type NavigatorLike } from '../../../src/models/webgpu';

const UA = {
  chromeLinux: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Safari/537.36',
  chromeOldWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/110.0.0.0 Safari/537.36',
  edgeWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0',
  firefoxWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:139.0) Gecko/20100101 Firefox/139.0',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:143.0) Gecko/20100101 Firefox/143.0',
  safari18: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
};

function adapter(opts: { f16?: boolean; fallback?: boolean; maxBufferSize?: number; legacy?: boolean } = {}) {
  const features = new Set(opts.f16 ? ['shader-f16'] : []);
  const info = { vendor: 'google', architecture: 'swiftshader', description: '', isFallbackAdapter: opts.fallback ?? false };
  return {
    features,
    limits: {
      maxBufferSize: opts.maxBufferSize ?? 2 ** 30,
      maxStorageBufferBindingSize: 2 ** 27,
      maxComputeWorkgroupStorageSize: 32768,
      maxStorageBuffersPerShaderStage: 10,
    },
    ...(opts.legacy ? { isFallbackAdapter: opts.fallback } : { info }),
  };
}
const nav = (requestAdapter: () => Promise<ReturnType<typeof adapter> | null>, ua = UA.chromeLinux): NavigatorLike => ({
  userAgent: ua,
  deviceMemory: 8,
  gpu: { requestAdapter },
});

describe('probeWebGpu', () => {
  it('reports no WebGPU when navigator.gpu is missing, with advice for Chrome on Linux', async () => {
    const p = await probeWebGpu({ navigator: { userAgent: UA.chromeLinux }, isSecureContext: true });
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.reason).toBe('no-webgpu');
    expect(p.advice.join(' ')).toContain('chrome://flags/#enable-unsafe-webgpu');
  });

  it('says "use https" on an insecure page', async () => {
    const p = await probeWebGpu({ navigator: { userAgent: UA.chromeLinux }, isSecureContext: false });
    expect(!p.ok && p.reason).toBe('insecure-context');
  });

  it('reports no adapter when requestAdapter() returns null (Chromium without flags)', async () => {
    const p = await probeWebGpu({ navigator: nav(async () => null), isSecureContext: true });
    expect(!p.ok && p.reason).toBe('no-adapter');
    expect(!p.ok && p.advice.join(' ')).toMatch(/drivers/);
  });

  it('reads a SwiftShader-like fallback adapter: ok, no shader-f16, with warnings', async () => {
    const p = await probeWebGpu({ navigator: nav(async () => adapter({ fallback: true })), isSecureContext: true });
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.gpu.isFallbackAdapter).toBe(true);
    expect(p.gpu.shaderF16).toBe(false);
    expect(p.gpu.maxBufferSize).toBe(2 ** 30);
    expect(p.gpu.deviceMemoryGB).toBe(8);
    expect(p.warnings.length).toBe(2);
  });

  it('reads isFallbackAdapter from older adapters without adapter.info', async () => {
    const p = await probeWebGpu({
      navigator: nav(async () => adapter({ fallback: true, legacy: true, f16: true })),
      isSecureContext: true,
    });
    expect(p.ok && p.gpu.isFallbackAdapter).toBe(true);
    expect(p.ok && p.gpu.shaderF16).toBe(true);
  });

  it('rejects adapters below the limits web-llm needs', async () => {
    const p = await probeWebGpu({ navigator: nav(async () => adapter({ maxBufferSize: 128 * 2 ** 20 })), isSecureContext: true });
    expect(!p.ok && p.reason).toBe('limits-too-low');
    expect(!p.ok && p.message).toMatch(/maxBufferSize/);
  });

  it('turns a throwing requestAdapter() into an error result', async () => {
    const p = await probeWebGpu({ navigator: nav(async () => Promise.reject(new Error('boom'))), isSecureContext: true });
    expect(!p.ok && p.reason).toBe('error');
    expect(!p.ok && p.message).toMatch(/boom/);
  });
});

describe('browser detection and advice', () => {
  it('tells browsers apart', () => {
    expect(detectBrowser(UA.chromeLinux)).toEqual({ name: 'chrome', version: 141, os: 'linux' });
    expect(detectBrowser(UA.edgeWin)).toEqual({ name: 'edge', version: 140, os: 'windows' });
    expect(detectBrowser(UA.firefoxWin)).toEqual({ name: 'firefox', version: 139, os: 'windows' });
    expect(detectBrowser(UA.safari18)).toEqual({ name: 'safari', version: 18, os: 'mac' });
    expect(detectBrowser(UA.android)).toEqual({ name: 'chrome', version: 120, os: 'android' });
    expect(detectBrowser('')).toEqual({ name: 'other', os: 'other' });
  });

  it('gives version- and platform-specific advice', () => {
    expect(webGpuAdvice('no-webgpu', detectBrowser(UA.chromeOldWin)).join(' ')).toMatch(/Update Chrome to version 113/);
    expect(webGpuAdvice('no-webgpu', detectBrowser(UA.firefoxWin)).join(' ')).toMatch(/Firefox to version 141/);
    expect(webGpuAdvice('no-webgpu', detectBrowser(UA.firefoxLinux)).join(' ')).toMatch(/dom\.webgpu\.enabled/);
    expect(webGpuAdvice('no-webgpu', detectBrowser(UA.safari18)).join(' ')).toMatch(/Safari 26/);
    expect(webGpuAdvice('no-webgpu', detectBrowser(UA.edgeWin)).join(' ')).toMatch(/edge:\/\/flags/);
    expect(webGpuAdvice('no-webgpu', detectBrowser(UA.android)).join(' ')).toMatch(/Android 12/);
    for (const r of ['no-webgpu', 'no-adapter', 'limits-too-low'] as const) {
      expect(webGpuAdvice(r, detectBrowser(UA.chromeLinux)).at(-1)).toMatch(/still work/);
    }
  });
});

describe('adapterName', () => {
  const gpu = (p: Partial<{ vendor: string; architecture: string; description: string; isFallbackAdapter: boolean }>) => ({
    vendor: '',
    architecture: '',
    description: '',
    isFallbackAdapter: false,
    ...p,
  });
  it.each([
    [gpu({ description: 'NVIDIA GeForce RTX 3060' }), 'NVIDIA GeForce RTX 3060'],
    [gpu({ vendor: 'nvidia', architecture: 'ampere' }), 'NVIDIA Ampere'],
    [gpu({ vendor: 'amd', architecture: 'rdna-3' }), 'AMD Rdna 3'],
    [gpu({ vendor: 'apple', architecture: 'metal-3' }), 'Apple Metal 3'],
    [gpu({ vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true }), 'Google Swiftshader (software)'],
    [gpu({ vendor: 'someco' }), 'Someco'],
    [gpu({ isFallbackAdapter: true }), 'Software graphics adapter'],
    [gpu({}), 'Graphics adapter (the browser does not say which)'],
  ])('names %o as %s', (info, want) => {
    expect(adapterName(info)).toBe(want);
  });
});
