// Which window a call is fitted into: the model's own, or, for a model that cannot say, the
// smallest of the catalog (the processor models: 2,048 tokens, 384 out), so nothing is ever sent
// that the smallest engine Tealeaf offers would refuse.
import type { LanguageModel, ModelWindow } from '../../ports';

export const FALLBACK_WINDOW: ModelWindow = { contextTokens: 2048, maxOutputTokens: 384 };

export function windowOf(llm: Pick<LanguageModel, 'window'> | undefined): ModelWindow {
  const w = llm?.window;
  if (!w || !(w.contextTokens > 0) || !(w.maxOutputTokens > 0)) return FALLBACK_WINDOW;
  return w;
}

/** Output tokens for a call that would like `wanted`: never more than the engine writes, nor half the window. */
export function outputFor(window: ModelWindow, wanted: number): number {
  return Math.max(1, Math.min(wanted, window.maxOutputTokens, Math.floor(window.contextTokens / 2)));
}
