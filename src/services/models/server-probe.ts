// Asking a model server on this computer which models it has, in words the Models view shows; and
// noticing when the server in use stops answering, so the header stops calling it ready.
import { errorText } from '../../errors';
import type { LanguageModel, StructuredMode } from '../../ports';
import { isLocalServerError, LocalServerError, LocalServerModel, normaliseServerUrl } from '../../models/local-server';
import type { ServerSnapshot } from './model-snapshot';

/**
 * The server's models (state 'listed'), or why there are none to use (state 'error'), with its
 * address written the one way (an address not on this computer is refused before any request).
 */
export async function listServerModels(input: string): Promise<Pick<ServerSnapshot, 'url' | 'state' | 'models' | 'error'>> {
  let url = input;
  try {
    url = normaliseServerUrl(input);
    const models = await new LocalServerModel({ baseUrl: url, model: '', timeoutMs: 10_000 }).listModels();
    if (models.length === 0)
      return {
        url,
        state: 'error',
        models,
        error: 'The server runs but offers no model. Add one there first (for Ollama: "ollama pull llama3.2").',
      };
    return { url, state: 'listed', models, error: undefined };
  } catch (e) {
    return { url, state: 'error', models: [], error: errorText(e) };
  }
}

/** What a reply or a job says when the server in use stopped answering. */
export const notAnswering = (baseUrl: string) => `The model server at ${baseUrl} did not answer. Is it still running?`;

/** Undefined when the server at `baseUrl` answers; else why not, in words. */
export async function probeServer(baseUrl: string): Promise<string | undefined> {
  try {
    await new LocalServerModel({ baseUrl, model: '', timeoutMs: 10_000 }).listModels();
    return undefined;
  } catch (e) {
    return isLocalServerError(e) && e.kind === 'down' ? notAnswering(baseUrl) : errorText(e);
  }
}

/**
 * The server's model, watched: a call that finds nothing answering (or the server refusing this
 * app) reports the server lost before it fails, in words that say what happened.
 */
export function watchServer(model: LanguageModel, baseUrl: string, onLost: (message: string) => void): LanguageModel {
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (e) {
      if (!isLocalServerError(e) || (e.kind !== 'down' && e.kind !== 'origin-refused')) throw e;
      const lost = e.kind === 'down' ? new LocalServerError('down', notAnswering(baseUrl), e.detail) : e;
      onLost(lost.message);
      throw lost;
    }
  };
  return {
    modelId: model.modelId,
    // A getter: the server's answer about the window may come after this wrapper is made.
    get window() {
      return model.window;
    },
    // The structured mode is the server model's own: the self-test reads and switches it.
    get structuredMode() {
      return model.structuredMode;
    },
    ...(model.setStructuredMode ? { setStructuredMode: (mode: StructuredMode) => model.setStructuredMode!(mode) } : {}),
    chat: (messages, options) => guard(() => model.chat(messages, options)),
    json: (messages, schema, options) => guard(() => model.json(messages, schema, options)),
  };
}
