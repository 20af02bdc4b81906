// A LanguageModel that keeps every answer on disk, keyed by the exact request: a benchmark run
// that stops half way (or is run again) asks the server only what it has not asked before.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';
import { LocalServerModel } from '../../../src/models/local-server';

export interface CallStats {
  /** Calls answered by the server in this run. */
  fresh: number;
  /** Calls answered from the cache. */
  cached: number;
}

export class CachedModel implements LanguageModel {
  readonly stats: CallStats = { fresh: 0, cached: 0 };

  constructor(
    private readonly inner: LanguageModel,
    private readonly dir: string,
    /** Fixed for every call: a benchmark wants the same answer to the same question. */
    private readonly temperature = 0,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** The wrapped model's window: every call is fitted to it as in the app. */
  get window() {
    return this.inner.window;
  }

  get modelId(): string {
    return this.inner.modelId;
  }

  chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.cached({ kind: 'chat', messages, maxTokens: options.maxTokens }, () =>
      this.inner.chat(messages, { ...options, temperature: this.temperature }),
    );
  }

  json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    return this.cached({ kind: 'json', messages, schema, maxTokens: options.maxTokens }, () =>
      this.inner.json(messages, schema, { ...options, temperature: this.temperature }),
    );
  }

  private async cached(request: Record<string, unknown>, ask: () => Promise<string>): Promise<string> {
    const key = createHash('sha256')
      .update(JSON.stringify({ model: this.inner.modelId, temperature: this.temperature, ...request }))
      .digest('hex');
    const file = join(this.dir, `${key}.json`);
    if (existsSync(file)) {
      try {
        const text = (JSON.parse(readFileSync(file, 'utf8')) as { text: unknown }).text;
        if (typeof text === 'string') {
          this.stats.cached++;
          return text;
        }
      } catch {
        // A file cut short by an interruption: ask again.
      }
    }
    const text = await ask();
    this.stats.fresh++;
    // Written whole, then renamed: an interruption never leaves half an answer under the key.
    writeFileSync(`${file}.tmp`, JSON.stringify({ text }));
    renameSync(`${file}.tmp`, file);
    return text;
  }
}

export interface ServerModelOptions {
  endpoint: string;
  model: string;
  apiKey?: string;
  /** Folder of the on-disk call cache. */
  cacheDir: string;
}

/** A model behind any OpenAI-compatible server (--endpoint, --model), every call cached in `cacheDir`. */
export function serverModel(o: ServerModelOptions): CachedModel {
  const server = new LocalServerModel({ baseUrl: o.endpoint, model: o.model, allowRemote: true, apiKey: o.apiKey, timeoutMs: 600_000 });
  return new CachedModel(server, o.cacheDir);
}
