// Download/load progress in one shape for both runtimes, and the parsing of web-llm's
// free-text progress reports into it. Pure: unit tested in Node.

export type ProgressPhase = 'init' | 'download' | 'load-cache' | 'compile' | 'ready';

export interface ModelProgress {
  phase: ProgressPhase;
  /** 0..1 over the whole load (download ~90%, GPU shader preparation the rest). */
  fraction: number;
  loadedMB?: number;
  totalMB?: number;
  /** Seconds left in the download phase, once a rate has been measured. */
  etaSeconds?: number;
  /** Short user-facing line, e.g. "Downloading 120 of 870 MB". */
  text: string;
}

/** web-llm's InitProgressReport, restated so this file needs no SDK types. */
export interface WebLlmReport {
  progress: number;
  timeElapsed: number;
  text: string;
}

export interface ParsedWebLlmReport {
  phase: ProgressPhase;
  /** Progress within the phase, 0..1. */
  phaseFraction: number;
  loadedMB?: number;
}

// The exact phrases come from web-llm 0.2.86 / tvmjs (fetchTensorCacheInternal, shader loading,
// "Finish loading on ..."); the unit tests pin them.
const FETCH_RE = /Fetching param cache\[\d+\/\d+\]:\s*(\d+)MB fetched/;
const CACHE_RE = /Loading model from cache\[\d+\/\d+\]:\s*(\d+)MB loaded/;
const SHADER_RE = /Loading GPU shader modules\[(\d+)\/(\d+)\]/;

export function parseWebLlmReport(r: WebLlmReport): ParsedWebLlmReport {
  const p = clamp01(r.progress);
  let m = FETCH_RE.exec(r.text);
  if (m) return { phase: 'download', phaseFraction: p, loadedMB: Number(m[1]) };
  m = CACHE_RE.exec(r.text);
  if (m) return { phase: 'load-cache', phaseFraction: p, loadedMB: Number(m[1]) };
  m = SHADER_RE.exec(r.text);
  if (m) return { phase: 'compile', phaseFraction: Number(m[2]) > 0 ? Number(m[1]) / Number(m[2]) : p };
  if (/^Finish loading/.test(r.text)) return { phase: 'ready', phaseFraction: 1 };
  if (/Start to fetch params/.test(r.text)) return { phase: 'download', phaseFraction: 0, loadedMB: 0 };
  return { phase: 'init', phaseFraction: p };
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

const DOWNLOAD_SHARE = 0.9;

/**
 * Turns successive reports into ModelProgress with a total and a time-left estimate.
 * The rate is measured from the first download report of this load, so resuming a
 * half-cached model (web-llm skips shards already in Cache Storage) does not inflate it.
 */
export class ProgressTracker {
  private start?: { t: number; mb: number };
  private lastFraction = 0;

  constructor(
    /** Expected download size (catalog), used until the report lets us derive the real one. */
    private readonly expectedTotalMB?: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  update(report: WebLlmReport): ModelProgress {
    const parsed = parseWebLlmReport(report);
    const out = this.toProgress(parsed);
    // Never go backwards in the bar (web-llm restarts its fraction for each phase).
    out.fraction = Math.max(this.lastFraction, out.fraction);
    this.lastFraction = out.fraction;
    return out;
  }

  private toProgress(p: ParsedWebLlmReport): ModelProgress {
    switch (p.phase) {
      case 'download':
      case 'load-cache': {
        const loaded = p.loadedMB ?? 0;
        // Derive the real total once a few percent have arrived; before that use the catalog's.
        const derived = p.phaseFraction > 0.02 && loaded > 0 ? Math.round(loaded / p.phaseFraction) : undefined;
        const total = derived ?? this.expectedTotalMB;
        const base: ModelProgress = {
          phase: p.phase,
          fraction: p.phaseFraction * DOWNLOAD_SHARE,
          loadedMB: loaded,
          totalMB: total,
          text:
            p.phase === 'download'
              ? total
                ? `Downloading ${loaded} of ${Math.round(total)} MB`
                : `Downloading ${loaded} MB`
              : `Loading from this device's cache (${loaded} MB)`,
        };
        if (p.phase === 'download') base.etaSeconds = this.eta(loaded, total);
        return base;
      }
      case 'compile':
        return {
          phase: 'compile',
          fraction: DOWNLOAD_SHARE + p.phaseFraction * (1 - DOWNLOAD_SHARE),
          text: 'Preparing the model on your GPU',
        };
      case 'ready':
        return { phase: 'ready', fraction: 1, text: 'Ready' };
      case 'init':
        return { phase: 'init', fraction: 0, text: 'Starting' };
    }
  }

  private eta(loaded: number, total: number | undefined): number | undefined {
    const t = this.now();
    if (!this.start) {
      this.start = { t, mb: loaded };
      return undefined;
    }
    const seconds = (t - this.start.t) / 1000;
    const gained = loaded - this.start.mb;
    if (total === undefined || seconds < 2 || gained <= 0) return undefined;
    return Math.max(0, Math.round((total - loaded) / (gained / seconds)));
  }
}

/** Progress of transformers.js downloads (its progress_callback "progress_total" events). */
export function embedProgress(loadedBytes: number, totalBytes: number, etaSeconds?: number): ModelProgress {
  const MB = 2 ** 20;
  const fraction = totalBytes > 0 ? clamp01(loadedBytes / totalBytes) : 0;
  const loadedMB = Math.round((loadedBytes / MB) * 10) / 10;
  const totalMB = Math.round((totalBytes / MB) * 10) / 10;
  return {
    phase: fraction >= 1 ? 'ready' : 'download',
    fraction,
    loadedMB,
    totalMB,
    etaSeconds,
    text: fraction >= 1 ? 'Ready' : `Downloading ${loadedMB} of ${totalMB} MB`,
  };
}
