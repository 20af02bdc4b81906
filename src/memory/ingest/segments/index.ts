// Splitting an ended session into segments. The memorise job hands over the topics its summarising
// call already chose (`ranges`), so no second call reads the session again; without them, one
// segmentation call when a model is given, the lexical-cohesion splitter otherwise (or when the
// model's answer is unusable).
import { fittedJson } from '../../fit';
import { errorText } from '../../../errors';
import type { LanguageModel } from '../../../ports';
import type { Segment, Turn } from '../../types';
import { clampText, MAX_TEXT } from '../../limits';
import { denoiseForIndex } from './denoise';
import { isForgotten } from '../../forget/lines';
import { splitByCohesion, type SplitterOptions } from './fallback';
import { parseSegmentation, repairCover, type TurnRange } from './parse';
import { buildSegmentationMessages, SEGMENTATION_SCHEMA } from './prompt';

export { buildSegmentationMessages, SEGMENTATION_SCHEMA } from './prompt';
export { parseSegmentation, repairCover, type ParsedSegmentation, type TurnRange } from './parse';
export { splitByCohesion, DEFAULT_SPLITTER, type SplitterOptions } from './fallback';
export { denoiseForIndex, denoiseTurnText, isFillerTurn } from './denoise';

export interface SegmentOptions {
  /**
   * Topic ranges already chosen (by the summarising call), as positions in the turns ordered by
   * index. When present, even empty, the model is not called: usable ranges are repaired into a
   * cover and used, otherwise the fallback splitter runs.
   */
  ranges?: readonly TurnRange[];
  llm?: LanguageModel;
  signal?: AbortSignal;
  /** How a turn's speaker is written in the segment text (default: its role). */
  speakerLabel?: (turn: Turn) => string;
  /** Names stripped from the index copy (the speakers, who appear throughout). */
  names?: readonly string[];
  splitter?: SplitterOptions;
}

export interface SegmentationResult {
  segments: Segment[];
  /** 'summary': the ranges given in the options; 'model': a segmentation call. */
  source: 'summary' | 'model' | 'fallback';
  /** The model's answer needed repair (or was unusable, see source). */
  repaired: boolean;
  error?: string;
}

/** Deterministic id, so re-running a session-end job writes the same records. */
export function segmentId(sessionId: string, firstTurn: number): string {
  return `${sessionId}/seg/${firstTurn}`;
}

export async function segmentSessionDetailed(turns: readonly Turn[], options: SegmentOptions = {}): Promise<SegmentationResult> {
  const ordered = [...turns].sort((a, b) => a.index - b.index);
  if (ordered.length === 0) return { segments: [], source: 'fallback', repaired: false };
  let ranges: TurnRange[] | undefined;
  let repaired = false;
  let error: string | undefined;
  if (options.ranges) {
    const cover = repairCover(
      options.ranges.map((r): [number, number] => [r.first, r.last]),
      ordered.length,
    );
    if (cover.usable) {
      return { segments: buildSegments(ordered, cover.ranges, options), source: 'summary', repaired: cover.repaired };
    }
    if (options.ranges.length > 0) {
      repaired = true;
      error = 'unusable topic ranges';
    }
  } else if (options.llm && !ordered.some(isForgotten)) {
    // (A chat with forgotten lines is not read by a model again: the splitter cuts it.)
    try {
      // A session too long for the model's window in one call is split by the fallback instead.
      const { text: raw } = await fittedJson({
        llm: options.llm,
        build: () => buildSegmentationMessages(ordered, options.speakerLabel),
        output: 40 + 16 * Math.ceil(ordered.length / 2),
        schema: SEGMENTATION_SCHEMA,
        temperature: 0,
        signal: options.signal,
      });
      const parsed = parseSegmentation(raw, ordered.length);
      repaired = parsed.repaired;
      if (parsed.usable) ranges = parsed.ranges;
      else error = 'unusable segmentation answer';
    } catch (e) {
      if (options.signal?.aborted) throw e;
      error = errorText(e);
    }
  }
  const source = ranges ? 'model' : 'fallback';
  ranges ??= splitByCohesion(
    ordered.map((t) => (isForgotten(t) ? '' : t.text)),
    options.splitter,
  );
  return { segments: buildSegments(ordered, ranges, options), source, repaired, error };
}

/** Segments of a session, covering all its turns contiguously, in order. */
export async function segmentSession(turns: readonly Turn[], options: SegmentOptions = {}): Promise<Segment[]> {
  return (await segmentSessionDetailed(turns, options)).segments;
}

/**
 * Ranges cut further where their passage would be longer than a record may hold (MAX_TEXT): a
 * passage then holds as many whole turns as fit, and a turn too long on its own is a passage of
 * its own (cut there, with a note; the turn itself keeps every word).
 */
function fittingRanges(ordered: readonly Turn[], ranges: readonly TurnRange[], line: (t: Turn) => string): TurnRange[] {
  const out: TurnRange[] = [];
  for (const r of ranges) {
    let first = r.first;
    let size = 0;
    for (let i = r.first; i <= r.last; i++) {
      const add = line(ordered[i]!).length + (i > first ? 1 : 0);
      if (i > first && size + add > MAX_TEXT) {
        out.push({ first, last: i - 1 });
        first = i;
        size = line(ordered[i]!).length;
      } else size += add;
    }
    out.push({ first, last: r.last });
  }
  return out;
}

/** Segment records for turn ranges over turns ordered by index (positions, not Turn.index). */
export function buildSegments(
  ordered: readonly Turn[],
  ranges: readonly TurnRange[],
  options: Pick<SegmentOptions, 'speakerLabel' | 'names'> = {},
): Segment[] {
  const label = options.speakerLabel ?? ((t: Turn) => t.role);
  // A forgotten line keeps its place in the passage (its id) but gives it no words (forget/lines.ts).
  const line = (t: Turn) => (isForgotten(t) ? '' : `${label(t)}: ${t.text}`);
  return fittingRanges(ordered, ranges, line).map((r) => {
    const all = ordered.slice(r.first, r.last + 1);
    const run = all.filter((t) => !isForgotten(t));
    return {
      id: segmentId(all[0]!.sessionId, all[0]!.index),
      sessionId: all[0]!.sessionId,
      firstTurn: all[0]!.index,
      lastTurn: all[all.length - 1]!.index,
      turnIds: all.map((t) => t.id),
      text: clampText(run.map(line).join('\n'), MAX_TEXT),
      indexText: clampText(
        denoiseForIndex(
          run.map((t) => t.text),
          options.names,
        ),
        MAX_TEXT,
      ),
      time: all[0]!.time,
    };
  });
}
