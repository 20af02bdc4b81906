// Asking a model server on this computer which models it has, in words the Models view shows.
import { errorText } from '../errors';
import { LocalServerModel } from '../models/local-server';
import type { ServerSnapshot } from './model-snapshot';

/** The server's models (state 'listed'), or why there are none to use (state 'error'). */
export async function listServerModels(baseUrl: string): Promise<Pick<ServerSnapshot, 'state' | 'models' | 'error'>> {
  try {
    const models = await new LocalServerModel({ baseUrl, model: '', timeoutMs: 10_000 }).listModels();
    if (models.length === 0)
      return {
        state: 'error',
        models,
        error: 'The server runs but offers no model. Add one there first (for Ollama: "ollama pull llama3.2").',
      };
    return { state: 'listed', models, error: undefined };
  } catch (e) {
    return { state: 'error', models: [], error: errorText(e) };
  }
}
