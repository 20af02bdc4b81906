// The CPU language-model worker's logic: transformers.js text generation (ONNX Runtime, WASM in
// browsers, onnxruntime-node in tests). The SDK module is injected, as for the embedder, so the
// same code runs in the browser worker and in Node. One operation at a time: a load, unload or
// delete waits for the reply being written, so switching engines never cuts a reply short.
// It keeps the key-value cache of the last reply that ended by itself: the next prompt that
// extends that reply's tokens (the reply prompt is laid out so that each extends the one before
// plus its reply) reads only what is new.
import type {
  DynamicCache,
  InterruptableStoppingCriteria as StopperClass,
  ModelRegistry as RegistryClass,
  TextGenerationPipeline,
  Tensor,
  TextStreamer,
} from '@huggingface/transformers';
import { errorText } from '../errors';
import { ContextOverflowError, type ChatMessage } from '../ports';
import { applyEnv, downloadReporter, type EmbedDevice, type TransformersModule } from './embed-worker-core';
import type { CpuChatParams, CpuLlmMethods, CpuModelRef, LlmChatResult, LlmFinishReason } from './messages';
import type { CallContext, Handlers } from './rpc';
import { TokenStreamer } from './token-streamer';

export interface CpuTransformersModule extends TransformersModule {
  InterruptableStoppingCriteria: typeof StopperClass;
  ModelRegistry: typeof RegistryClass;
}

export interface CpuWorkerOptions {
  device: EmbedDevice;
  /**
   * Lets queued messages (an abort) in between two generation steps. ONNX Runtime's WASM run
   * does not return to the event loop by itself, so without this Stop would wait for the end.
   */
  yieldToEvents?: () => Promise<void>;
}

const TASK = 'text-generation';

// ONNX Runtime's words for a file that is not a model (an HTML error page cached as the model,
// a truncated download): "Load model from ... failed:Protobuf parsing failed."
const MALFORMED_RE =
  /Protobuf parsing failed|failed:.*(invalid|corrupt)|Invalid (ONNX )?model|ModelProto|invalid wire type|file is too short/i;

/** The message the UI classifies as 'bad-model-file' (src/models/errors.ts). */
export function malformedModelMessage(modelId: string, detail: string): string {
  return `The model file of ${modelId} is damaged or is not an ONNX model (${detail})`;
}

/** A reply's key-value cache and the token ids it holds (prompt and reply, less the last token). */
interface HeldCache {
  ids: BigInt64Array;
  cache: DynamicCache;
}

/** The prompt as the text-generation pipeline builds it from chat messages. */
interface PromptInputs {
  input_ids: Tensor;
  attention_mask: Tensor;
}

/** Whether `prefix` is shorter than `ids` and equal to their start. */
function strictPrefix(prefix: BigInt64Array, ids: BigInt64Array): boolean {
  if (prefix.length === 0 || prefix.length >= ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== ids[i]) return false;
  return true;
}

/** Tokens the cache holds; 0 where it holds no attention keys (a model without a cache). */
function cachedLength(cache: DynamicCache): number {
  try {
    return cache.get_seq_length();
  } catch {
    return 0;
  }
}

export function createCpuLlmWorkerCore(tf: CpuTransformersModule, options: CpuWorkerOptions): Handlers<CpuLlmMethods> {
  const yieldToEvents = options.yieldToEvents ?? (() => new Promise<void>((r) => setTimeout(r, 0)));
  let generator: TextGenerationPipeline | undefined;
  let loaded: CpuModelRef | undefined;
  let held: HeldCache | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task);
    queue = run.catch(() => undefined);
    return run;
  };

  const regOptions = (ref: CpuModelRef) => ({ dtype: ref.dtype, device: options.device });

  /** Frees the kept cache (its tensors, where they live on a device). */
  const forget = async (): Promise<void> => {
    const h = held;
    held = undefined;
    await h?.cache.dispose();
  };

  const drop = async (): Promise<void> => {
    await forget();
    const g = generator;
    generator = undefined;
    loaded = undefined;
    await g?.dispose();
  };

  const load = async (ref: CpuModelRef, ctx: CallContext<CpuLlmMethods['load']['event']>): Promise<{ modelId: string }> => {
    if (generator && loaded?.modelId === ref.modelId && loaded.dtype === ref.dtype) return { modelId: ref.modelId };
    await drop();
    applyEnv(tf, ref.env);
    let g: TextGenerationPipeline;
    try {
      g = await tf.pipeline(TASK, ref.modelId, { device: options.device, dtype: ref.dtype, progress_callback: downloadReporter(ctx.emit) });
    } catch (err) {
      const detail = errorText(err);
      if (!MALFORMED_RE.test(detail)) throw err;
      // A cached bad file would fail the same way forever: forget it, so a retry downloads afresh.
      await tf.ModelRegistry.clear_pipeline_cache(TASK, ref.modelId, regOptions(ref)).catch(() => undefined);
      throw new Error(malformedModelMessage(ref.modelId, detail), { cause: err });
    }
    // Each generation step first lets pending messages run (see yieldToEvents).
    const model = g.model as unknown as { forward(inputs: unknown): Promise<unknown> };
    const forward = model.forward.bind(model);
    model.forward = async (inputs) => {
      await yieldToEvents();
      return forward(inputs);
    };
    generator = g;
    loaded = ref;
    return { modelId: ref.modelId };
  };

  /** The prompt's tokens as the pipeline builds it: the chat template, then its tokens. */
  const promptTokens = (g: TextGenerationPipeline, messages: ChatMessage[]): number => {
    // return_dict false: the default (true) answers { input_ids, attention_mask }.
    const options = { tokenize: true, add_generation_prompt: true, return_tensor: false, return_dict: false } as const;
    const ids: unknown = g.tokenizer.apply_chat_template(messages, options);
    if (!Array.isArray(ids)) throw new Error('The tokenizer gave no token ids for the prompt.');
    return ids.length;
  };

  /**
   * The prompt's tensors as the text-generation pipeline makes them for one chat: the template
   * with the generation prompt, then its tokens without added special tokens (the template has
   * them). The pipeline also pads (nothing to pad in a batch of one) and truncates at the
   * tokenizer's limit; here nothing is cut, a prompt longer than the window is refused instead.
   */
  const promptInputs = (g: TextGenerationPipeline, messages: ChatMessage[]): PromptInputs => {
    const text = g.tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true });
    if (typeof text !== 'string') throw new Error('The chat template gave no text for the prompt.');
    const inputs = g.tokenizer([text], { add_special_tokens: false, padding: true, truncation: false }) as unknown as Partial<PromptInputs>;
    if (!inputs.input_ids || !inputs.attention_mask) throw new Error('The tokenizer gave no token ids for the prompt.');
    return { input_ids: inputs.input_ids, attention_mask: inputs.attention_mask };
  };

  const chat = async (params: CpuChatParams, ctx: CallContext<{ delta: string }>): Promise<LlmChatResult> => {
    if (ctx.signal.aborted) return { text: '', finishReason: 'abort' };
    const g = generator;
    if (!g) throw new Error('No language model is loaded in the CPU worker.');
    const messages = params.messages;
    // The kept cache serves this call or none: it is given to generate() (which extends it in
    // place) or freed, and kept again only if this reply ends by itself.
    const previous = held;
    held = undefined;
    let inputs: PromptInputs;
    try {
      inputs = promptInputs(g, messages);
    } catch (err) {
      await previous?.cache.dispose();
      throw err;
    }
    const ids = inputs.input_ids.data as BigInt64Array;
    const reuse = previous && strictPrefix(previous.ids, ids) ? previous : undefined;
    if (previous && !reuse) await previous.cache.dispose();
    // Nothing is cut here (the caller lays the prompt out by priority, src/memory/fit/): a prompt
    // with no room for one token of answer is refused, and the answer stops at the window.
    const prompt = ids.length;
    const room = params.contextTokens - prompt;
    if (room < 1 || (params.fullOutput && room < params.maxTokens)) {
      await reuse?.cache.dispose();
      const detail = room < 1 ? '' : `no room for the ${params.maxTokens} tokens of answer asked`;
      throw new ContextOverflowError(prompt, params.contextTokens, detail);
    }
    const maxNew = Math.min(params.maxTokens, room);
    const stopper = new tf.InterruptableStoppingCriteria();
    const onAbort = (): void => stopper.interrupt();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let text = '';
    const streamer = new TokenStreamer(
      (ids) => g.tokenizer.decode(ids, { skip_special_tokens: true }),
      (delta) => {
        text += delta;
        ctx.emit({ delta });
      },
    );
    const temperature = params.temperature ?? 0;
    // The tokens the cache holds are not read again: generate() feeds the model only the ids past
    // the cache's length (and the whole attention mask, so positions run on).
    const cachedTokens = reuse ? reuse.ids.length : 0;
    let result: { sequences: Tensor; past_key_values: DynamicCache };
    try {
      // What the pipeline passes to generate(), with the cache asked back.
      result = (await g.model.generate({
        ...inputs,
        max_new_tokens: maxNew,
        do_sample: temperature > 0,
        ...(temperature > 0 ? { temperature, top_k: 40 } : {}),
        // Small models loop easily; a light penalty keeps replies moving.
        repetition_penalty: 1.1,
        // generate() only calls put/end; the SDK's typedef asks for a whole TextStreamer.
        streamer: streamer as unknown as TextStreamer,
        stopping_criteria: [stopper],
        ...(reuse ? { past_key_values: reuse.cache } : {}),
        return_dict_in_generate: true,
      })) as unknown as { sequences: Tensor; past_key_values: DynamicCache };
    } catch (err) {
      // generate() may have extended the cache part way: it holds no known tokens any more.
      await reuse?.cache.dispose();
      throw err;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
    const finishReason: LlmFinishReason = ctx.signal.aborted ? 'abort' : streamer.count >= maxNew ? 'length' : 'stop';
    // The cache holds every token but the last one written (never fed back). Kept after a reply
    // that ended by itself: the next prompt holds that reply whole, a stopped or cut one it does not.
    const cache = result.past_key_values;
    const length = finishReason === 'stop' ? cachedLength(cache) : 0;
    if (length > 0) held = { ids: (result.sequences.data as BigInt64Array).slice(0, length), cache };
    else await cache.dispose();
    return { text, finishReason, promptTokens: prompt, readTokens: prompt - cachedTokens, completionTokens: streamer.count };
  };

  // Not queued behind a reply being written: the tokenizer runs between two generation steps.
  const countTokens = async ({ messages }: { messages: ChatMessage[] }): Promise<number> => {
    if (!generator) throw new Error('No language model is loaded in the CPU worker.');
    return promptTokens(generator, messages);
  };

  return {
    load: (ref, ctx) => serial(() => load(ref, ctx)),
    chat: (params, ctx) => serial(() => chat(params, ctx)),
    countTokens,
    unload: () =>
      serial(async () => {
        await drop();
        return null;
      }),
    isCached: (ref) =>
      serial(async () => {
        applyEnv(tf, ref.env);
        return tf.ModelRegistry.is_pipeline_cached(TASK, ref.modelId, regOptions(ref));
      }),
    deleteCached: (ref) =>
      serial(async () => {
        if (loaded?.modelId === ref.modelId) await drop();
        else await forget();
        applyEnv(tf, ref.env);
        await tf.ModelRegistry.clear_pipeline_cache(TASK, ref.modelId, regOptions(ref));
        return null;
      }),
  };
}
