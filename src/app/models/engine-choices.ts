// Which engines can chat on this device, ranked for a first run, offered in the chat header's
// picker, and the picker's words, all from the models snapshot (and the servers found running
// here). Pure (tests/unit/app/engine-choices.test.ts).
import { BUILTIN_MODEL_ID } from '../../models/builtin-model';
import { DEFAULT_CPU_MODEL_ID } from '../../models/catalog';
import { SERVER_CHOICE_ID, type ModelChoice, type ModelsSnapshot } from '../../services/models/model-snapshot';
import type { EngineAction, FoundServer } from '../../services/models/local-servers';
import { engineStatus, type EngineStatus } from '../engine-status';

export type EngineName = 'server' | 'builtin' | 'webgpu' | 'cpu' | 'test';

/** The engine in words: long in lists, short on the picker's button. */
export const ENGINE_WORDS: Record<EngineName, { long: string; short: string }> = {
  server: { long: 'Model server on this computer', short: 'Server' },
  builtin: { long: "This browser's own model", short: 'Browser' },
  webgpu: { long: 'Graphics card (WebGPU)', short: 'GPU' },
  cpu: { long: 'Processor', short: 'CPU' },
  test: { long: 'Test double', short: 'Test' },
};

export type Snap = Pick<
  ModelsSnapshot,
  | 'gpu'
  | 'choices'
  | 'recommendedId'
  | 'recommendation'
  | 'cached'
  | 'builtin'
  | 'server'
  | 'loading'
  | 'loadedId'
  | 'loadedLabel'
  | 'error'
>;

export const mb = (n?: number) => (n === undefined ? '?' : n >= 1024 ? `${(n / 1024).toFixed(1)} GB` : `${Math.max(1, Math.round(n))} MB`);
const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export interface FirstRunChoice {
  key: string;
  engine: EngineName;
  title: string;
  /** Why it suits this device. */
  why: string;
  /** The download, where there is one (in words). */
  size?: string;
  actionLabel: string;
  action: EngineAction;
}

const usable = (m: Snap) => m.choices.filter((c) => !c.unavailable && c.engine);
const plainLabel = (c: ModelChoice) => c.label.replace(/ \(CPU\)$/, '');

function download(c: ModelChoice, m: Snap, why: string): FirstRunChoice {
  const cached = !!m.cached[c.id];
  const size = mb(c.sizeMB);
  return {
    key: c.id,
    engine: c.engine === 'cpu' ? 'cpu' : 'webgpu',
    title: plainLabel(c),
    why: `${why} ${cached ? 'Already downloaded.' : `A ${size} download, once; then it works offline.`}`,
    size: cached ? undefined : size,
    actionLabel: cached ? 'Use it' : `Download ${size}`,
    action: { kind: 'load', id: c.id },
  };
}

/**
 * What can chat here, best first: a model server already running (nothing to download), the
 * browser's own model, a WebGPU model where WebGPU works, a model for the processor. Engines that
 * cannot work here are not offered.
 */
export function firstRunChoices(m: Snap, found: readonly FoundServer[]): FirstRunChoice[] {
  const out: FirstRunChoice[] = found.map((s) => ({
    key: `server:${s.url}`,
    engine: 'server',
    title: `${s.name} on this computer`,
    why: `Already running here with ${count(s.models.length, 'model')}: nothing to download, no WebGPU needed.`,
    actionLabel: `Use ${s.models[0]}`,
    action: { kind: 'server', url: s.url, model: s.models[0] },
  }));
  const b = m.builtin.availability;
  if (b === 'available' || b === 'downloadable' || b === 'downloading')
    out.push({
      key: 'builtin',
      engine: 'builtin',
      title: 'The model built into this browser',
      why: b === 'available' ? 'Ready in this browser: nothing to download.' : 'The browser downloads its own model once (a few GB).',
      actionLabel: b === 'available' ? 'Use it' : 'Download and use it',
      action: { kind: 'builtin' },
    });
  const choices = usable(m);
  if (m.gpu?.ok) {
    const gpu =
      choices.find((c) => c.engine === 'webgpu' && m.cached[c.id]) ??
      choices.find((c) => c.engine === 'webgpu' && c.id === m.recommendedId);
    if (gpu) out.push(download(gpu, m, 'Runs on your graphics card (WebGPU): fast.'));
  }
  const cpus = choices.filter((c) => c.engine === 'cpu');
  const cpu =
    cpus.find((c) => m.cached[c.id]) ??
    cpus.find((c) => c.id === m.recommendedId) ??
    cpus.find((c) => c.id === DEFAULT_CPU_MODEL_ID) ??
    cpus[0];
  if (cpu)
    out.push(download(cpu, m, `Runs on the processor, no WebGPU needed; by its size, ${cpu.speed ?? 'slower than a graphics card'}.`));
  return out;
}

export interface PickerOption {
  key: string;
  engine: EngineName;
  label: string;
  /** Where it runs, or what choosing it does. */
  note: string;
  action: EngineAction;
  current: boolean;
}

function engineOfId(m: Snap, id: string | undefined): EngineName | undefined {
  if (!id) return undefined;
  if (id === SERVER_CHOICE_ID) return 'server';
  if (id === BUILTIN_MODEL_ID) return 'builtin';
  const c = m.choices.find((x) => x.id === id);
  return c ? (c.engine ?? 'test') : undefined;
}

/**
 * What the header's picker offers: the model server's models (the one connected and any found
 * running), the browser's model, and every model that needs no download (downloaded, or in use).
 * Downloads and engines that cannot work here stay on the Models page.
 */
export function pickerOptions(m: Snap, found: readonly FoundServer[]): PickerOption[] {
  const out: PickerOption[] = [];
  const servers: Array<{ name: string; url: string; models: string[] }> = [];
  const s = m.server;
  if (s.url && (s.state === 'listed' || s.model))
    servers.push({ name: 'Model server', url: s.url, models: s.models.length ? s.models : [s.model!] });
  for (const f of found) if (!servers.some((x) => x.url === f.url)) servers.push(f);
  for (const srv of servers)
    for (const model of srv.models)
      out.push({
        key: `server:${srv.url}:${model}`,
        engine: 'server',
        label: model,
        note: `${srv.name} at ${srv.url.replace(/^http:\/\//, '')}`,
        action: { kind: 'server', url: srv.url, model },
        current: m.loadedId === SERVER_CHOICE_ID && s.model === model && s.url === srv.url,
      });
  const b = m.builtin.availability;
  if (b === 'available' || b === 'downloadable' || b === 'downloading')
    out.push({
      key: 'builtin',
      engine: 'builtin',
      label: "This browser's model",
      note: b === 'available' ? 'Built into this browser' : 'The browser downloads it once',
      action: { kind: 'builtin' },
      current: m.loadedId === BUILTIN_MODEL_ID,
    });
  for (const c of m.choices) {
    if (c.unavailable || !(m.cached[c.id] || !c.engine || m.loadedId === c.id || m.loading?.modelId === c.id)) continue;
    const engine = engineOfId(m, c.id) ?? 'test';
    out.push({
      key: c.id,
      engine,
      label: plainLabel(c),
      note: `${ENGINE_WORDS[engine].long}${c.engine && m.cached[c.id] ? ', downloaded' : ''}`,
      action: { kind: 'load', id: c.id },
      current: m.loadedId === c.id || m.loading?.modelId === c.id,
    });
  }
  return out;
}

export interface PickerStatus {
  /** The engine's one state (engine-status.ts), plus a load that failed. */
  kind: EngineStatus['kind'] | 'failed';
  engine?: EngineName;
  /** The model's name, short. */
  model: string;
  /** The state in a word or two: "Loading 42%", "Ready", "Not reachable", "Reconnecting…", "No model". */
  state: string;
  dot: EngineStatus['dot'];
  /** The whole of it, for the button's accessible name. */
  spoken: string;
}

/** The picker's words, from the engine's one state. */
export function pickerStatus(m: Snap): PickerStatus {
  const e = engineStatus(m);
  const id = m.loading?.modelId ?? (!m.loadedId && m.builtin.loading !== undefined ? BUILTIN_MODEL_ID : m.loadedId);
  const engine = e.kind === 'none' ? undefined : engineOfId(m, id);
  const choice = m.choices.find((c) => c.id === id);
  const model =
    e.kind === 'none'
      ? 'No model'
      : id === SERVER_CHOICE_ID
        ? (m.server.model ?? 'Model server')
        : id === BUILTIN_MODEL_ID
          ? "Browser's model"
          : choice
            ? plainLabel(choice)
            : (m.loading?.label ?? m.loadedLabel ?? id ?? '');
  const failed = e.kind === 'none' && !!m.error;
  const state =
    e.kind === 'loading'
      ? e.label
      : e.kind === 'ready'
        ? 'Ready'
        : e.kind === 'unreachable'
          ? e.reconnecting
            ? 'Reconnecting…'
            : 'Not reachable'
          : failed
            ? 'Could not load'
            : 'Choose one';
  const where = engine ? ` (${ENGINE_WORDS[engine].long})` : '';
  return {
    kind: failed ? 'failed' : e.kind,
    engine,
    model,
    state,
    dot: failed ? 'bad' : e.dot,
    spoken: `Chat model: ${model}${where}, ${state}`,
  };
}
