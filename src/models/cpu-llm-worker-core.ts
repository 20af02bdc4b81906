// The CPU language-model worker's logic: transformers.js text generation (ONNX Runtime, WASM in
// browsers, onnxruntime-node in tests). The SDK module is injected, as for the embedder, so the
// same code runs in the browser worker and in Node. One operation at a time: a load, unload or
// delete waits for the reply being written, so switching engines never cuts a reply short.
import type {
  InterruptableStoppingCriteria as StopperClass,
  ModelRegistry as RegistryClass,
  TextGenerationPipeline,
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

export function createCpuLlmWorkerCore(tf: CpuTransformersModule, options: CpuWorkerOptions): Handlers<CpuLlmMethods> {
  const yieldToEvents = options.yieldToEvents ?? (() => new Promise<void>((r) => setTimeout(r, 0)));
  let generator: TextGenerationPipeline | undefined;
  let loaded: CpuModelRef | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task);
    queue = run.catch(() => undefined);
    return run;
  };

  const regOptions = (ref: CpuModelRef) => ({ dtype: ref.dtype, device: options.device });

  const drop = async (): Promise<void> => {
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

  const chat = async (params: CpuChatParams, ctx: CallContext<{ delta: string }>): Promise<LlmChatResult> => {
    if (ctx.signal.aborted) return { text: '', finishReason: 'abort' };
    const g = generator;
    if (!g) throw new Error('No language model is loaded in the CPU worker.');
    const messages = params.messages;
    // Nothing is cut here (the caller lays the prompt out by priority, src/memory/fit/): a prompt
    // with no room for one token of answer is refused, and the answer stops at the window.
    const prompt = promptTokens(g, messages);
    const room = params.contextTokens - prompt;
    if (room < 1 || (params.fullOutput && room < params.maxTokens)) {
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
    try {
      await g(messages, {
        max_new_tokens: maxNew,
        do_sample: temperature > 0,
        ...(temperature > 0 ? { temperature, top_k: 40 } : {}),
        // Small models loop easily; a light penalty keeps replies moving.
        repetition_penalty: 1.1,
        // generate() only calls put/end; the SDK's typedef asks for a whole TextStreamer.
        streamer: streamer as unknown as TextStreamer,
        stopping_criteria: [stopper],
      });
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
    const finishReason: LlmFinishReason = ctx.signal.aborted ? 'abort' : streamer.count >= maxNew ? 'length' : 'stop';
    return { text, finishReason, promptTokens: prompt, completionTokens: streamer.count };
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
        applyEnv(tf, ref.env);
        await tf.ModelRegistry.clear_pipeline_cache(TASK, ref.modelId, regOptions(ref));
        return null;
      }),
  };
}
