import { describe, expect, it } from 'vitest';
import { firstRunChoices, pickerOptions, pickerStatus, type Snap } from '../../../src/app/models/engine-choices';
import type { ModelChoice, ServerSnapshot } from '../../../src/services/models/model-snapshot';
import type { FoundServer } from '../../../src/services/models/local-servers';
import type { GpuProbe } from '../../../src/models/webgpu';
import { DEFAULT_CPU_MODEL_ID } from '../../../src/models/catalog';

const gpuless = { ok: false, kind: 'no-adapter', message: 'No GPU here.', advice: [] } as unknown as GpuProbe;
const gpu = { ok: true, gpu: {}, warnings: [] } as unknown as GpuProbe;
const webgpu = (id: string, sizeMB: number, extra: Partial<ModelChoice> = {}): ModelChoice => ({
  id,
  label: id,
  description: '',
  sizeMB,
  needsGpu: true,
  engine: 'webgpu',
  ...extra,
});
const cpu = (id: string, sizeMB: number, speed: string): ModelChoice => ({
  id,
  label: `${id} (CPU)`,
  description: '',
  sizeMB,
  needsGpu: false,
  engine: 'cpu',
  speed,
});
const test: ModelChoice = { id: 'scripted', label: 'Scripted test model', description: '', sizeMB: 0, needsGpu: false };
const noServer: ServerSnapshot = { url: 'http://127.0.0.1:11434', state: 'none', models: [] };
// The default processor model is not the first listed: "the first" is the wrong answer.
const CPUS = [
  cpu('Small', 205, 'quick even on an old laptop'),
  cpu('Mid', 420, 'a few words a second on most laptops'),
  cpu(DEFAULT_CPU_MODEL_ID, 420, 'a few words a second on most laptops'),
];

const snap = (over: Partial<Snap> = {}): Snap => ({
  gpu: gpuless,
  choices: [webgpu('Llama', 670, { unavailable: 'Needs WebGPU' }), ...CPUS, test],
  recommendedId: 'Mid',
  cached: {},
  builtin: { availability: 'unavailable' },
  server: noServer,
  ...over,
});
const ollama: FoundServer = { name: 'Ollama', url: 'http://127.0.0.1:11434', models: ['llama3.2', 'qwen'] };

describe('the first-run card ranks what works on this device', () => {
  it('no server, no WebGPU, no browser model: the recommended processor model (not simply the first or smallest), with its size and speed', () => {
    const c = firstRunChoices(snap(), []);
    expect(c.map((x) => [x.engine, x.key])).toEqual([['cpu', 'Mid']]);
    expect(c[0].why).toBe(
      'Runs on the processor, no WebGPU needed; by its size, a few words a second on most laptops. A 420 MB download, once; then it works offline.',
    );
    expect(c[0].actionLabel).toBe('Download 420 MB');
    expect(c[0].title).toBe('Mid');
    expect(c[0].action).toEqual({ kind: 'load', id: 'Mid' });
  });

  it('a server running here comes first, then the browser model, then WebGPU where it works, then the processor', () => {
    const c = firstRunChoices(
      snap({
        gpu,
        choices: [webgpu('Llama', 670), webgpu('Phi', 2100), ...CPUS],
        recommendedId: 'Phi',
        builtin: { availability: 'downloadable' },
      }),
      [ollama],
    );
    expect(c.map((x) => x.engine)).toEqual(['server', 'builtin', 'webgpu', 'cpu']);
    expect(c[0]).toMatchObject({
      title: 'Ollama on this computer',
      actionLabel: 'Use llama3.2',
      action: { kind: 'server', url: ollama.url, model: 'llama3.2' },
    });
    expect(c[0].why).toMatch(/2 models: nothing to download/);
    expect(c[1].actionLabel).toBe('Download and use it');
    expect(c[2]).toMatchObject({ key: 'Phi', actionLabel: 'Download 2.1 GB' });
    // WebGPU recommended: the processor offers its default model, not whichever is listed first.
    expect(c[3].key).toBe(DEFAULT_CPU_MODEL_ID);
  });

  it('a model already downloaded is offered before the recommended one, with no download', () => {
    const c = firstRunChoices(snap({ cached: { Small: true } }), []);
    expect(c[0]).toMatchObject({ key: 'Small', actionLabel: 'Use it', size: undefined });
    expect(c[0].why).toMatch(/Already downloaded\.$/);
  });

  it('WebGPU models are not offered where WebGPU does not work, nor the test double', () => {
    const c = firstRunChoices(snap({ builtin: { availability: 'available' } }), []);
    expect(c.map((x) => x.engine)).toEqual(['builtin', 'cpu']);
    expect(c[0]).toMatchObject({ actionLabel: 'Use it', why: 'Ready in this browser: nothing to download.' });
  });
});

describe('the header picker offers what can chat here without a download', () => {
  it('server models, the browser model, downloaded and in-use models; not downloads nor what cannot run here', () => {
    const m = snap({
      loadedId: 'local-server',
      server: { ...noServer, url: 'http://127.0.0.1:1234', state: 'listed', models: ['a', 'b'], model: 'b' },
      builtin: { availability: 'available' },
      cached: { Small: true, Llama: true },
    });
    const o = pickerOptions(m, [ollama, { name: 'LM Studio', url: 'http://127.0.0.1:1234', models: ['a', 'b'] }]);
    expect(o.map((x) => [x.key, x.current])).toEqual([
      ['server:http://127.0.0.1:1234:a', false],
      ['server:http://127.0.0.1:1234:b', true],
      ['server:http://127.0.0.1:11434:llama3.2', false],
      ['server:http://127.0.0.1:11434:qwen', false],
      ['builtin', false],
      ['Small', false],
      ['scripted', false],
    ]);
    expect(o.find((x) => x.key === 'Small')?.note).toBe('Processor, downloaded');
    expect(o[2].note).toBe('Ollama at 127.0.0.1:11434');
  });
});

describe('the picker says the engine, the model and its state, from one state', () => {
  const lost = 'The model server at http://127.0.0.1:11434 did not answer. Is it still running?';
  const server = (extra: Partial<ServerSnapshot> = {}): ServerSnapshot => ({
    ...noServer,
    state: 'listed',
    models: ['tiny'],
    model: 'tiny',
    ...extra,
  });
  const ROWS: Array<[string, Partial<Snap>, { kind: string; engine?: string; model: string; state: string; dot: string }]> = [
    ['nothing chosen', {}, { kind: 'none', engine: undefined, model: 'No model', state: 'Choose one', dot: 'off' }],
    [
      'a download that failed',
      { error: { kind: 'network', title: 'The model could not be downloaded', message: 'offline' } },
      { kind: 'failed', engine: undefined, model: 'No model', state: 'Could not load', dot: 'bad' },
    ],
    [
      'a processor model loading',
      { loading: { modelId: 'Mid', label: 'Mid (CPU)', fraction: 0.426, text: '' } },
      { kind: 'loading', engine: 'cpu', model: 'Mid', state: 'Loading 43%', dot: 'busy' },
    ],
    [
      'a WebGPU model loading',
      { gpu, choices: [webgpu('Llama', 670)], loading: { modelId: 'Llama', label: 'Llama', fraction: 0, text: '' } },
      { kind: 'loading', engine: 'webgpu', model: 'Llama', state: 'Loading 0%', dot: 'busy' },
    ],
    [
      "the browser's model getting ready",
      { builtin: { availability: 'downloading', loading: 0.5 } },
      { kind: 'loading', engine: 'builtin', model: "Browser's model", state: 'Loading 50%', dot: 'busy' },
    ],
    [
      // Shortcut trap: the browser model downloads, but another model still chats meanwhile.
      "the browser's model getting ready while a processor model chats",
      { loadedId: 'Mid', builtin: { availability: 'downloading', loading: 0.5 } },
      { kind: 'ready', engine: 'cpu', model: 'Mid', state: 'Ready', dot: 'ok' },
    ],
    [
      'a processor model ready',
      { loadedId: 'Mid', loadedLabel: 'Mid (CPU)' },
      { kind: 'ready', engine: 'cpu', model: 'Mid', state: 'Ready', dot: 'ok' },
    ],
    [
      "the browser's model ready",
      { loadedId: 'browser-builtin', builtin: { availability: 'available' } },
      { kind: 'ready', engine: 'builtin', model: "Browser's model", state: 'Ready', dot: 'ok' },
    ],
    [
      'the test double ready',
      { loadedId: 'scripted' },
      { kind: 'ready', engine: 'test', model: 'Scripted test model', state: 'Ready', dot: 'ok' },
    ],
    [
      'the model server answering',
      { loadedId: 'local-server', server: server() },
      { kind: 'ready', engine: 'server', model: 'tiny', state: 'Ready', dot: 'ok' },
    ],
    [
      // Shortcut trap: loadedId is still set, but a server that stopped is not ready.
      'the model server not answering',
      { loadedId: 'local-server', server: server({ lost }) },
      { kind: 'unreachable', engine: 'server', model: 'tiny', state: 'Not reachable', dot: 'bad' },
    ],
    [
      'reconnecting to it',
      { loadedId: 'local-server', server: server({ lost, state: 'connecting' }) },
      { kind: 'unreachable', engine: 'server', model: 'tiny', state: 'Reconnecting…', dot: 'busy' },
    ],
  ];
  for (const [name, over, want] of ROWS)
    it(name, () => {
      const s = pickerStatus(snap(over));
      expect({ kind: s.kind, engine: s.engine, model: s.model, state: s.state, dot: s.dot }).toEqual(want);
      expect(s.spoken).toContain(`${want.model}`);
      expect(s.spoken.endsWith(want.state)).toBe(true);
    });
});
