// The memory search (embedding) model's state in words, for the Models view and the Memory view.
// Pure (tests/unit/app/search-model.test.ts): every word comes from the one EmbedderSnapshot.
import type { EmbedderSnapshot } from '../../services/models/model-snapshot';

/** A size in MB as people read it: "34 MB", "1.6 GB", "0.1 MB", "?" when unknown. */
export function sizeText(mb?: number): string {
  if (mb === undefined) return '?';
  if (mb >= 1024) return `${(mb / 1024).toFixed(1)} GB`;
  return mb < 1 ? `${mb.toFixed(1)} MB` : `${Math.round(mb)} MB`;
}

export interface SearchModelWords {
  /** The state in a few words (Models view); `failed` marks an error. */
  state: string;
  failed?: boolean;
  /** What the state means for recall, and what to do. */
  hint: string;
  /** The button the user can press. */
  action?: { kind: 'load' | 'cancel' | 'turn-off'; label: string };
  /** For the Memory view: how replies find memories now (recall in chat), and where to change it. */
  recall: { byMeaning: boolean; text: string; next?: string };
}

const pct = (f?: number) => `${Math.round((f ?? 0) * 100)}%`;
const progress = (e: EmbedderSnapshot) => `${pct(e.fraction)}${e.totalMB ? ` · ${sizeText(e.loadedMB)} of ${sizeText(e.totalMB)}` : ''}`;

export function searchModelWords(e: EmbedderSnapshot): SearchModelWords {
  const size = sizeText(e.sizeMB);
  switch (e.state) {
    case 'ready':
      return {
        state: `Ready: ${e.modelId ?? e.label ?? ''}`.trim(),
        hint: 'Memories are found by meaning and by words.',
        action: { kind: 'turn-off', label: 'Turn off' },
        recall: { byMeaning: true, text: 'Replies find memories by meaning and by words: the memory search model is ready.' },
      };
    case 'loading':
      return {
        state: `Loading ${e.label ?? e.modelId ?? 'the memory search model'}… ${progress(e)}`,
        hint: 'Chat works meanwhile; until it is ready, memories are found by words only.',
        action: { kind: 'cancel', label: 'Cancel' },
        recall: {
          byMeaning: false,
          text: `Replies find memories by words only until the memory search model is ready (${pct(e.fraction)}).`,
        },
      };
    case 'error':
      return {
        state: e.message ?? 'The memory search model could not be loaded.',
        failed: true,
        hint: 'Chat works without it; until it loads, memories are found by words only. When you are online again, retry.',
        action: { kind: 'load', label: `Retry (${size})` },
        recall: {
          byMeaning: false,
          text: 'Replies find memories by words only: the memory search model could not be loaded.',
          next: 'Retry in Models.',
        },
      };
    case 'off':
      return {
        state: 'Off.',
        hint: `Memories are found by words only. Turn it on to find them by meaning too (${size} download).`,
        action: { kind: 'load', label: `Turn on (${size})` },
        recall: {
          byMeaning: false,
          text: 'Replies find memories by words only: the memory search model is off.',
          next: 'Turn it on in Models.',
        },
      };
    case 'none':
      return {
        state: 'Not loaded.',
        hint: `It downloads with the next chat model you load (${size}), or now.`,
        action: { kind: 'load', label: `Download now (${size})` },
        recall: {
          byMeaning: false,
          text: 'Replies find memories by words only: the memory search model is not loaded.',
          next: 'Load it in Models.',
        },
      };
  }
}

/**
 * Where a chat model's download is offered: that the memory search model comes with it, and its
 * size. Only while it is wanted and not loaded yet.
 */
export function comesWithChatModel(e: EmbedderSnapshot): string | undefined {
  if (e.state !== 'none') return undefined;
  return `The memory search model (${sizeText(e.sizeMB)}) downloads with the chat model you choose, so Tealeaf finds memories by meaning, not only by shared words. You can turn it off below.`;
}

/** Beside a chat model's download: the memory search model's, while it runs. */
export function downloadingWith(e: EmbedderSnapshot): string | undefined {
  if (e.state !== 'loading') return undefined;
  return `Also downloading the memory search model (${sizeText(e.sizeMB)}): ${progress(e)}`;
}
