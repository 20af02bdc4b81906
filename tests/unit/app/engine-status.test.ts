import { describe, expect, it } from 'vitest';
import { engineStatus, type EngineStatus } from '../../../src/app/engine-status';
import type { ModelsSnapshot, ServerSnapshot } from '../../../src/services/models/model-snapshot';

type Input = Parameters<typeof engineStatus>[0];
const none: ServerSnapshot = { url: 'http://127.0.0.1:11434', state: 'none', models: [] };
const using = (extra: Partial<ServerSnapshot> = {}): ServerSnapshot => ({
  ...none,
  state: 'listed',
  models: ['tiny'],
  model: 'tiny',
  ...extra,
});
const snap = (over: Partial<ModelsSnapshot>): Input => ({ server: none, ...over });
const NOT_ANSWERING = 'The model server at http://127.0.0.1:11434 did not answer. Is it still running?';

const ROWS: Array<[string, Input, Partial<EngineStatus>]> = [
  ['no model', snap({}), { kind: 'none', label: 'No model', dot: 'off', reconnect: undefined }],
  [
    'loading',
    snap({ loading: { modelId: 'm', label: 'Model M', fraction: 0.423, text: '' } }),
    { kind: 'loading', label: 'Loading 42%', dot: 'busy', detail: 'Loading Model M: 42%' },
  ],
  [
    "the browser's model getting ready",
    snap({ builtin: { availability: 'downloading', loading: 0.25 } }),
    { kind: 'loading', label: 'Loading 25%', dot: 'busy', detail: "Loading the browser's model: 25%" },
  ],
  [
    // Another model chats while the browser's downloads: that one is what the header says.
    "the browser's model getting ready beside a model that chats",
    snap({ loadedId: 'm', loadedLabel: 'Model M', builtin: { availability: 'downloading', loading: 0.25 } }),
    { kind: 'ready', label: 'Model M', dot: 'ok' },
  ],
  ['a downloaded model ready', snap({ loadedId: 'm', loadedLabel: 'Model M' }), { kind: 'ready', label: 'Model M', dot: 'ok' }],
  [
    'the model server answering',
    snap({ loadedId: 'local-server', loadedLabel: 'tiny (model server on this computer)', server: using() }),
    { kind: 'ready', label: 'tiny (model server on this computer)', dot: 'ok', reconnect: undefined },
  ],
  [
    // Shortcut trap: loadedId is still set, but a server that stopped is not ready.
    'the model server stopped answering',
    snap({ loadedId: 'local-server', loadedLabel: 'tiny (model server on this computer)', server: using({ lost: NOT_ANSWERING }) }),
    { kind: 'unreachable', label: 'Model server not reachable', dot: 'bad', detail: NOT_ANSWERING, reconnect: true, reconnecting: false },
  ],
  [
    'reconnecting to it',
    snap({ loadedId: 'local-server', server: using({ lost: NOT_ANSWERING, state: 'connecting' }) }),
    { kind: 'unreachable', label: 'Reconnecting…', dot: 'busy', reconnect: true, reconnecting: true },
  ],
  [
    'a server listed but another model in use',
    snap({ loadedId: 'm', loadedLabel: 'Model M', server: { ...none, state: 'listed', models: ['tiny'] } }),
    { kind: 'ready', label: 'Model M', dot: 'ok' },
  ],
];

describe('engineStatus: one state of the engine, its words and dot', () => {
  it.each(ROWS)('%s', (_name, input, want) => {
    const got = engineStatus(input);
    expect(got).toMatchObject(Object.fromEntries(Object.entries(want).filter(([, v]) => v !== undefined)));
    for (const [k, v] of Object.entries(want)) if (v === undefined) expect(got[k as keyof EngineStatus]).toBeUndefined();
  });

  it('is green only when a model answers', () => {
    for (const [, input] of ROWS) expect(engineStatus(input).dot === 'ok').toBe(engineStatus(input).kind === 'ready');
  });
});
