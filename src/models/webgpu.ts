// WebGPU capability probe. Runs BEFORE any model download: web-llm fetches the model library
// wasm before it looks for a GPU, so without this check a user without WebGPU would download
// megabytes only to be told it cannot work. No SDK imports here: it is part of the app shell.
import { errorText } from '../errors';

export type GpuUnavailableReason = 'no-webgpu' | 'insecure-context' | 'no-adapter' | 'limits-too-low' | 'error';

export interface GpuInfo {
  vendor: string;
  architecture: string;
  description: string;
  /** A software (CPU) adapter such as SwiftShader: works, but slowly. */
  isFallbackAdapter: boolean;
  /** Needed by the q4f16 models; without it only q4f32 models run. */
  shaderF16: boolean;
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxStorageBuffersPerShaderStage: number;
  /** navigator.deviceMemory (GB, rounded and capped at 8 by Chrome); undefined where unsupported. */
  deviceMemoryGB?: number;
}

export type GpuProbe =
  | { ok: true; gpu: GpuInfo; browser: BrowserInfo; warnings: string[] }
  | {
      ok: false;
      reason: GpuUnavailableReason;
      /** One sentence for the user: what is wrong. */
      message: string;
      /** What the user can do, most likely fix first. */
      advice: string[];
      browser: BrowserInfo;
      gpu?: GpuInfo;
    };

export type BrowserName = 'chrome' | 'edge' | 'firefox' | 'safari' | 'other';
export type OsName = 'windows' | 'mac' | 'linux' | 'chromeos' | 'android' | 'ios' | 'other';
export interface BrowserInfo {
  name: BrowserName;
  /** Major version, when it could be read from the user agent. */
  version?: number;
  os: OsName;
}

/** The limits web-llm asks for at minimum (its detectGPUDevice falls back to these). */
export const MIN_LIMITS = {
  maxBufferSize: 256 * 2 ** 20,
  maxStorageBufferBindingSize: 128 * 2 ** 20,
  maxComputeWorkgroupStorageSize: 32 * 2 ** 10,
  maxStorageBuffersPerShaderStage: 10,
} as const;

// Structural shapes so tests can pass a fake navigator and so an older browser's adapter
// (isFallbackAdapter on the adapter, no adapter.info) still reads correctly.
interface AdapterLike {
  features: { has(name: string): boolean };
  limits: {
    maxBufferSize: number;
    maxStorageBufferBindingSize: number;
    maxComputeWorkgroupStorageSize: number;
    maxStorageBuffersPerShaderStage: number;
  };
  info?: Partial<Pick<GPUAdapterInfo, 'vendor' | 'architecture' | 'description' | 'isFallbackAdapter'>>;
  isFallbackAdapter?: boolean;
}
export interface NavigatorLike {
  userAgent?: string;
  deviceMemory?: number;
  gpu?: { requestAdapter(options?: { powerPreference?: 'high-performance' | 'low-power' }): Promise<AdapterLike | null> };
}

export interface ProbeEnvironment {
  navigator?: NavigatorLike;
  /** window.isSecureContext: WebGPU is only exposed on https:// and localhost. */
  isSecureContext?: boolean;
}

export async function probeWebGpu(envIn?: ProbeEnvironment): Promise<GpuProbe> {
  const nav: NavigatorLike | undefined =
    envIn?.navigator ?? (typeof navigator === 'undefined' ? undefined : (navigator as unknown as NavigatorLike));
  const secure = envIn?.isSecureContext ?? (typeof isSecureContext === 'boolean' ? isSecureContext : true);
  const browser = detectBrowser(nav?.userAgent ?? '');

  if (!nav?.gpu) {
    const reason: GpuUnavailableReason = secure ? 'no-webgpu' : 'insecure-context';
    return { ok: false, reason, message: reasonMessage(reason), advice: webGpuAdvice(reason, browser), browser };
  }
  let adapter: AdapterLike | null;
  try {
    // Same preference as web-llm, so we see the adapter it will get.
    adapter = await nav.gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (err) {
    const message = `${reasonMessage('error')} (${errorText(err)})`;
    return { ok: false, reason: 'error', message, advice: webGpuAdvice('error', browser), browser };
  }
  if (!adapter) {
    return { ok: false, reason: 'no-adapter', message: reasonMessage('no-adapter'), advice: webGpuAdvice('no-adapter', browser), browser };
  }

  const gpu = readAdapter(adapter, nav.deviceMemory);
  const short = limitShortfalls(gpu);
  if (short.length > 0) {
    return {
      ok: false,
      reason: 'limits-too-low',
      message: `${reasonMessage('limits-too-low')} (${short.join('; ')})`,
      advice: webGpuAdvice('limits-too-low', browser),
      browser,
      gpu,
    };
  }
  const warnings: string[] = [];
  if (gpu.isFallbackAdapter) {
    warnings.push(
      'Your browser is running WebGPU on the CPU (a software fallback adapter). Models will work, but replies will be very slow. A GPU with up-to-date drivers is much faster.',
    );
  }
  if (!gpu.shaderF16) {
    warnings.push('Your GPU does not support 16-bit shaders (shader-f16), so only the q4f32 model variants can run.');
  }
  return { ok: true, gpu, browser, warnings };
}

function readAdapter(adapter: AdapterLike, deviceMemory: number | undefined): GpuInfo {
  const info = adapter.info ?? {};
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    description: info.description ?? '',
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false),
    shaderF16: adapter.features.has('shader-f16'),
    maxBufferSize: adapter.limits.maxBufferSize,
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
    maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
    deviceMemoryGB: typeof deviceMemory === 'number' && deviceMemory > 0 ? deviceMemory : undefined,
  };
}

function limitShortfalls(gpu: GpuInfo): string[] {
  const out: string[] = [];
  for (const key of Object.keys(MIN_LIMITS) as Array<keyof typeof MIN_LIMITS>) {
    if (gpu[key] < MIN_LIMITS[key]) out.push(`${key} ${gpu[key]} < ${MIN_LIMITS[key]}`);
  }
  return out;
}

function reasonMessage(reason: GpuUnavailableReason): string {
  switch (reason) {
    case 'no-webgpu':
      return 'This browser does not offer WebGPU, which Tealeaf needs to run a language model on your device.';
    case 'insecure-context':
      return 'WebGPU is only available on secure pages (https:// or localhost), and this page is not one.';
    case 'no-adapter':
      return 'This browser supports WebGPU but found no usable GPU (it may be disabled, blocklisted, or missing drivers).';
    case 'limits-too-low':
      return 'Your GPU is too limited to run the language models Tealeaf offers.';
    case 'error':
      return 'Checking your GPU failed unexpectedly.';
  }
}

/** Reads browser and OS from a user agent string. Pure, for the advice below and for tests. */
export function detectBrowser(ua: string): BrowserInfo {
  const os: OsName = /Android/i.test(ua)
    ? 'android'
    : /iPhone|iPad|iPod/i.test(ua)
      ? 'ios'
      : /CrOS/.test(ua)
        ? 'chromeos'
        : /Windows/i.test(ua)
          ? 'windows'
          : /Mac OS X|Macintosh/i.test(ua)
            ? 'mac'
            : /Linux|X11/i.test(ua)
              ? 'linux'
              : 'other';
  const major = (re: RegExp): number | undefined => {
    const m = re.exec(ua);
    return m ? Number(m[1]) : undefined;
  };
  // Order matters: Edge and Chrome both say "Chrome", Chrome and Safari both say "Safari".
  if (/Edg(e|A|iOS)?\//.test(ua)) return { name: 'edge', version: major(/Edg(?:e|A|iOS)?\/(\d+)/), os };
  if (/Firefox\/|FxiOS\//.test(ua)) return { name: 'firefox', version: major(/(?:Firefox|FxiOS)\/(\d+)/), os };
  if (/Chrome\/|Chromium\/|CriOS\//.test(ua)) return { name: 'chrome', version: major(/(?:Chrome|Chromium|CriOS)\/(\d+)/), os };
  if (/Safari\//.test(ua) && /Version\//.test(ua)) return { name: 'safari', version: major(/Version\/(\d+)/), os };
  return { name: 'other', os };
}

/** What to do about a missing WebGPU, for this browser and OS. Pure. */
export function webGpuAdvice(reason: GpuUnavailableReason, b: BrowserInfo): string[] {
  const chromium = b.name === 'chrome' || b.name === 'edge';
  const product = b.name === 'edge' ? 'Edge' : 'Chrome';
  const flagsPage = b.name === 'edge' ? 'edge://flags' : 'chrome://flags';
  const out: string[] = [];

  if (reason === 'insecure-context') {
    out.push('Open Tealeaf over https:// (or from localhost): browsers hide WebGPU on plain http:// pages.');
    return out;
  }
  if (reason === 'limits-too-low') {
    out.push('Try a computer with a dedicated or more recent GPU, or update your browser and graphics drivers.');
    out.push('Your conversations, memories and settings still work without a model.');
    return out;
  }
  if (reason === 'no-webgpu') {
    if (chromium) {
      if (b.version !== undefined && b.version < 113) out.push(`Update ${product} to version 113 or newer (you have ${b.version}).`);
      if (b.os === 'linux') {
        out.push(
          `On Linux, WebGPU is still behind a flag: open ${flagsPage}/#enable-unsafe-webgpu, set it to Enabled (and ${flagsPage}/#enable-vulkan), then restart ${product}.`,
        );
      } else if (b.os === 'android') {
        out.push(`On Android, WebGPU needs ${product} 121 or newer on Android 12+ with a Qualcomm or ARM GPU.`);
      } else if (b.version === undefined || b.version >= 113) {
        out.push(
          `WebGPU may have been turned off: check ${flagsPage}/#enable-unsafe-webgpu is not Disabled, and that your organisation has not disabled it by policy.`,
        );
      }
    } else if (b.name === 'firefox') {
      if (b.os === 'windows') {
        if (b.version !== undefined && b.version < 141) out.push(`Update Firefox to version 141 or newer (you have ${b.version}).`);
        else out.push('Check that dom.webgpu.enabled is true in about:config.');
      } else {
        out.push(
          'Firefox ships WebGPU on Windows (141+) and on Apple-silicon Macs (145+); elsewhere set dom.webgpu.enabled to true in about:config, or use Chrome or Edge.',
        );
      }
    } else if (b.name === 'safari') {
      if (b.version !== undefined && b.version < 26) {
        out.push(
          `Update to Safari 26 or newer (macOS 26 / iOS 26; you have ${b.version}), or enable WebGPU under Develop > Feature Flags.`,
        );
      } else {
        out.push(
          'Check that WebGPU is enabled under Settings > Safari > Advanced > Feature Flags (iOS) or Develop > Feature Flags (macOS).',
        );
      }
    }
    out.push('Use a current version of Chrome or Edge (113+), Safari 26+, or Firefox 141+ on Windows.');
  } else {
    // no-adapter or an unexpected error: WebGPU exists but no GPU was handed out.
    out.push('Update your graphics drivers; browsers block WebGPU on drivers with known bugs.');
    if (chromium) {
      out.push(
        `Make sure hardware acceleration is on (${product} settings > System), and look at ${b.name === 'edge' ? 'edge://gpu' : 'chrome://gpu'} to see whether WebGPU is disabled and why.`,
      );
      if (b.os === 'linux')
        out.push(`On Linux, enable ${flagsPage}/#enable-unsafe-webgpu and ${flagsPage}/#enable-vulkan, then restart ${product}.`);
    } else if (b.name === 'firefox') {
      out.push('Check about:support, section Graphics, for WebGPU status.');
    }
    out.push('Remote desktops and virtual machines often have no usable GPU; try on the computer itself.');
  }
  out.push('Your conversations, memories and settings still work without a model.');
  return out;
}

const VENDOR_NAMES: Record<string, string> = {
  nvidia: 'NVIDIA',
  amd: 'AMD',
  ati: 'AMD',
  intel: 'Intel',
  apple: 'Apple',
  qualcomm: 'Qualcomm',
  arm: 'Arm',
  'imagination-technologies': 'Imagination',
  microsoft: 'Microsoft',
  mesa: 'Mesa',
  google: 'Google',
};

/**
 * The adapter as a person would name it: the browser's description where it gives one, else the
 * vendor and architecture it reports ("nvidia", "ampere" -> "NVIDIA Ampere"), else a plain label.
 */
export function adapterName(gpu: Pick<GpuInfo, 'vendor' | 'architecture' | 'description' | 'isFallbackAdapter'>): string {
  if (gpu.description.trim()) return gpu.description.trim();
  const vendor = gpu.vendor.trim().toLowerCase();
  const vendorName = VENDOR_NAMES[vendor] ?? (vendor ? vendor.charAt(0).toUpperCase() + vendor.slice(1) : '');
  const arch = gpu.architecture
    .trim()
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
  const name = [vendorName, arch].filter(Boolean).join(' ');
  if (name) return gpu.isFallbackAdapter ? `${name} (software)` : name;
  return gpu.isFallbackAdapter ? 'Software graphics adapter' : 'Graphics adapter (the browser does not say which)';
}
