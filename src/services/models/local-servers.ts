// Finding a model server already running on this computer (Ollama, LM Studio, llama.cpp's server)
// so a first run can offer it before any download, and putting a chosen engine to use in one step.
// Probing is quiet: nothing answering is the usual case, not an error.
import { LocalServerModel, normaliseServerUrl } from '../../models/local-server';
import { Emitter } from '../emitter';
import type { ModelService } from './models';

export interface KnownServer {
  name: string;
  url: string;
}

/** The usual addresses of local OpenAI-compatible servers (the CSP allows http://127.0.0.1:*). */
export const KNOWN_LOCAL_SERVERS: readonly KnownServer[] = [
  { name: 'Ollama', url: 'http://127.0.0.1:11434' },
  { name: 'LM Studio', url: 'http://127.0.0.1:1234' },
  { name: "llama.cpp's server", url: 'http://127.0.0.1:8080' },
];

/**
 * Where to look, and how long to wait for each. The e2e build's entry point may point `servers`
 * elsewhere (a test's fake server on a free port); the product always looks at the usual ports.
 */
export const discoveryOptions: { servers: readonly KnownServer[]; timeoutMs: number } = {
  servers: KNOWN_LOCAL_SERVERS,
  // Loopback answers in milliseconds; a server still loading its model may take a moment.
  timeoutMs: 2_000,
};

export interface FoundServer extends KnownServer {
  /** The models it lists (at least one: a server without a model cannot chat). */
  models: string[];
}

export interface LocalServersSnapshot {
  state: 'idle' | 'looking' | 'done';
  found: FoundServer[];
}

/** The servers among `servers` that answer with at least one model, in the order given. */
export async function findLocalServers(
  servers: readonly KnownServer[],
  timeoutMs: number,
  fetchImpl?: typeof fetch,
): Promise<FoundServer[]> {
  const answers = await Promise.all(
    servers.map(async (s): Promise<FoundServer | undefined> => {
      try {
        const url = normaliseServerUrl(s.url);
        const models = await new LocalServerModel({ baseUrl: url, model: '', timeoutMs, fetch: fetchImpl }).listModels();
        return models.length ? { name: s.name, url, models } : undefined;
      } catch {
        return undefined; // nothing there, or not an OpenAI-compatible server: not offered
      }
    }),
  );
  return answers.filter((f): f is FoundServer => f !== undefined);
}

export class LocalServers extends Emitter<{ state: LocalServersSnapshot }> {
  snapshot: LocalServersSnapshot = { state: 'idle', found: [] };
  private looking?: Promise<void>;

  /** Looks once more (a second call while looking joins the first). */
  look(): Promise<void> {
    this.looking ??= (async () => {
      this.set({ state: 'looking', found: this.snapshot.found });
      const found = await findLocalServers(discoveryOptions.servers, discoveryOptions.timeoutMs);
      this.set({ state: 'done', found });
    })().finally(() => (this.looking = undefined));
    return this.looking;
  }

  private set(s: LocalServersSnapshot): void {
    this.snapshot = s;
    this.emit('state', s);
  }
}

/** What a choice of engine does, as one step. */
export type EngineAction = { kind: 'server'; url: string; model: string } | { kind: 'builtin' } | { kind: 'load'; id: string };

/**
 * Puts the chosen engine to use: a server is connected (if it is not the one listed already) and
 * its model used; a download starts (its progress is in the models snapshot); the browser's model
 * starts. Resolves once the choice is made (a download goes on).
 */
export async function useEngine(models: ModelService, action: EngineAction): Promise<void> {
  if (action.kind === 'builtin') return models.useBuiltin();
  if (action.kind === 'load') {
    void models.load(action.id);
    return;
  }
  const server = models.snapshot.server;
  if (server.state !== 'listed' || server.url !== action.url || !server.models.includes(action.model)) {
    await models.connectServer(action.url);
    if (models.snapshot.server.state !== 'listed') return; // the server card and the first-run card say why
  }
  await models.useServerModel(action.model);
}
