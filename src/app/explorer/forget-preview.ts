// The Memory view hands its memory's Delete the words of what forgetting it takes (forget-words.ts)
// through a context, so the explorer's components between them need not carry it.
import { getContext, setContext } from 'svelte';

export type ForgetPreviewWords = (memoryId: string) => Promise<string[]>;

const KEY = Symbol('forget-preview');

export function provideForgetPreview(words: ForgetPreviewWords): void {
  setContext(KEY, words);
}

export function forgetPreview(): ForgetPreviewWords | undefined {
  return getContext<ForgetPreviewWords | undefined>(KEY);
}
