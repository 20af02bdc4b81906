// What the app header says about the chat engine, from ONE state: loading, ready, none, or a model
// server that stopped answering. The chat's status words (memory-status.ts) read the same kind, so
// a chat never "memorises" beside "No model". Pure (tests/unit/app/engine-status.test.ts).
import type { ModelsSnapshot } from '../services/models/model-snapshot';

export type EngineKind = 'ready' | 'loading' | 'none' | 'unreachable';

export interface EngineStatus {
  kind: EngineKind;
  /** Short, beside the dot in the header. */
  label: string;
  /** The dot: green only when a model answers. */
  dot: 'ok' | 'busy' | 'off' | 'bad';
  /** A sentence for the tooltip and screen readers. */
  detail?: string;
  /** The model server can be asked again (it stopped answering). */
  reconnect?: boolean;
  /** A reconnect is under way. */
  reconnecting?: boolean;
}

export function engineStatus(
  m: Pick<ModelsSnapshot, 'loading' | 'loadedId' | 'loadedLabel' | 'server'> & Partial<Pick<ModelsSnapshot, 'builtin'>>,
): EngineStatus {
  // The browser's model getting ready counts as loading where nothing else chats meanwhile.
  const builtin =
    !m.loadedId && m.builtin?.loading !== undefined ? { label: "the browser's model", fraction: m.builtin.loading } : undefined;
  const loading = m.loading ?? builtin;
  if (loading) {
    const pct = Math.round(loading.fraction * 100);
    return { kind: 'loading', label: `Loading ${pct}%`, dot: 'busy', detail: `Loading ${loading.label}: ${pct}%` };
  }
  const server = m.server;
  if (m.loadedId && server.model && server.lost !== undefined) {
    const reconnecting = server.state === 'connecting';
    return {
      kind: 'unreachable',
      label: reconnecting ? 'Reconnecting…' : 'Model server not reachable',
      dot: reconnecting ? 'busy' : 'bad',
      detail: server.lost,
      reconnect: true,
      reconnecting,
    };
  }
  if (m.loadedId) {
    const label = m.loadedLabel ?? m.loadedId;
    return { kind: 'ready', label, dot: 'ok', detail: `${label} is ready.` };
  }
  return { kind: 'none', label: 'No model', dot: 'off', detail: 'No model is loaded. Open Models to load one.' };
}
