// The memorise job's summarise step, part by part (chunked Phase 0, summary-plan.ts): each part is
// one fitted call whose memories are committed with the job's advanced state, so a crash loses at
// most the part being summarised and a resumed job goes on with the next. A part whose answer
// cannot be read after the job's attempts is passed over with a problem recorded (its turns are
// still searchable as passages after the segment step) rather than failing the whole session,
// unless nothing of the session could be read: then the job fails, as a model that cannot
// summarise should be seen to.
import type { AppliedChange, ChangeSet, LanguageModel, ModelWindow } from '../../ports';
import type { Id, Job, Memory, Millis, Turn } from '../types';
import { estimateMessages, fittedJson, isPromptTooLong, outputFor, windowOf } from '../fit';
import { duplicateKey } from '../text';
import { parseSummary } from './summarise';
import { summariseMessages, summarySchema, type TranscriptTurn } from './summary-prompt';
import { answerFilled, itemsFor, partInstructions, partTurns, planSummary, splitPoint, SUMMARY_TOKENS } from './summary-plan';
import type { MemorySettings } from '../settings';
import type { MemoriseState } from './memorise-state';

/** Sampling temperature of a part asked again. */
const RETRY_TEMPERATURE = 0.4;

/** What the step uses of the job's dependencies (a MemoriseDeps has them all). */
export interface SummaryDeps {
  llm?: LanguageModel;
  settings: MemorySettings;
  /** Ask for notes in the summary. Default true. */
  includeNotes?: boolean;
  signal?: AbortSignal;
}

/** What the step needs of the running job (MemoriseRun). */
export interface SummaryRun {
  readonly deps: SummaryDeps;
  readonly memories: Map<Id, Memory>;
  modelCalls: number;
  readonly problems: string[];
  now(): Millis;
  advance(job: Job, patch: Partial<Job>, state: MemoriseState): Job;
  commitApplied(change: ChangeSet, job: Job): Promise<{ job: Job; applied: AppliedChange }>;
  /** The memories a commit wrote, into the live map, graph and index. */
  adopt(memories: readonly Memory[]): void;
  memoryId(job: Job, index: number): Id;
}

/** Tokens of a part's prompt besides its transcript, by the model's tokenizer where it has one. */
async function instructionTokens(
  turns: readonly TranscriptTurn[],
  window: ModelWindow,
  includeNotes: boolean,
  signal?: AbortSignal,
): Promise<number> {
  const messages = partInstructions(turns, window, includeNotes, itemsFor(outputFor(window, SUMMARY_TOKENS)));
  if (window.countTokens) {
    try {
      return await window.countTokens(messages, signal);
    } catch (e) {
      if (signal?.aborted) throw e;
    }
  }
  return estimateMessages(messages);
}

export function transcriptOf(turns: readonly Turn[]): TranscriptTurn[] {
  return turns.map((t) => ({ id: t.id, role: t.role, text: t.text, time: t.time, externalId: t.externalId }));
}

/** Summarises the next part of the session; the job stays at this step until every part is done. */
export async function summariseNextPart(run: SummaryRun, job: Job, state: MemoriseState, turns: readonly Turn[]): Promise<Job> {
  const includeNotes = run.deps.includeNotes ?? true;
  const transcript = transcriptOf(turns);
  const window = windowOf(run.deps.llm);
  // Planned once per job: a resumed job cuts long turns the same way and starts its parts at the
  // same lines, so `done` means the same parts after a reload.
  const instructions = state.summary ? undefined : await instructionTokens(transcript, window, includeNotes, run.deps.signal);
  const plan = planSummary(transcript, window, {
    includeNotes,
    instructions,
    lineChars: state.summary?.lineChars,
    starts: state.summary?.starts,
  });
  const starts = plan.parts.map((p) => p.from);
  const done = state.summary?.done ?? 0;
  const total = plan.parts.length;
  const part = plan.parts[done];
  // Planned parts all done (a resumed job whose last part was committed): on to embedding.
  if (!part)
    return commitPart(
      run,
      job,
      {
        ...state,
        summary: {
          done,
          total: done,
          items: state.summary?.items ?? 0,
          lineChars: plan.lineChars,
          starts,
          skipped: state.summary?.skipped ?? [],
        },
      },
      [],
    );
  const { turns: shown, offset } = partTurns(plan, part, transcript);
  const lines = plan.lines.slice(part.from, part.to);
  const options = { includeNotes, offset, part: { index: done + 1, count: total }, maxItems: plan.maxItems };
  run.modelCalls++;
  let raw: string;
  const schema = summarySchema(includeNotes, plan.maxItems);
  try {
    raw = (
      await fittedJson({
        llm: run.deps.llm!,
        build: () => summariseMessages(shown, options, lines),
        output: plan.maxTokens,
        schema,
        // Asked again after an answer that stopped short: the same prompt at temperature 0 would
        // stop short the same way.
        temperature: job.attempts > 0 ? RETRY_TEMPERATURE : 0,
        signal: run.deps.signal,
      })
    ).text;
  } catch (err) {
    // The engine counted this part longer than planned: pass over it rather than loop on it.
    if (!isPromptTooLong(err)) throw err;
    return skipPart(
      run,
      job,
      state,
      done,
      total,
      plan.lineChars,
      starts,
      `part ${done + 1} of ${total} too long for the model: ${err.message}`,
    );
  }
  const parsed = parseSummary(raw, shown, offset);
  if (!parsed.parsed) {
    const why = `summary unreadable${total > 1 ? ` (part ${done + 1} of ${total})` : ''}: ${parsed.problems.join('; ')}`;
    // The last attempt on one part of several: the session goes on without it. Not when nothing
    // of the session could be read so far: a model that cannot summarise at all fails, visibly.
    const lastTry = job.attempts + 1 >= run.deps.settings.maxStepAttempts;
    const someRead = done > (state.summary?.skipped.length ?? 0) || done + 1 < total;
    if (lastTry && total > 1 && someRead) return skipPart(run, job, state, done, total, plan.lineChars, starts, why);
    throw new Error(why);
  }
  // An answer cut off or looping: asked again while attempts remain; the last one is kept as it is.
  if (parsed.complete === false && job.attempts + 1 < run.deps.settings.maxStepAttempts) {
    throw new Error(`summary stopped short${total > 1 ? ` (part ${done + 1} of ${total})` : ''}: ${parsed.problems.join('; ')}`);
  }
  // A list filled to its bound: the part held more than one answer may write. Asked again as two
  // halves, so no memory of a dense part is cut by the output cap (the plan's one-memory-per-user-
  // turn guess fails where both speakers tell about themselves).
  const split = answerFilled(raw, schema) ? splitPoint(plan, part) : undefined;
  if (split !== undefined) {
    const why = `part ${done + 1} of ${total} filled its answer: asked again in two halves`;
    run.problems.push(why);
    const halves = [...starts.slice(0, done + 1), split, ...starts.slice(done + 1)];
    return commitPart(
      run,
      job,
      {
        ...state,
        problems: [...state.problems, why].slice(-20),
        summary: {
          done,
          total: total + 1,
          items: state.summary?.items ?? 0,
          lineChars: plan.lineChars,
          starts: halves,
          skipped: state.summary?.skipped ?? [],
        },
      },
      [],
    );
  }
  run.problems.push(...parsed.problems);

  const known = new Set<string>();
  for (const m of run.memories.values()) known.add(duplicateKey(m.kind, m.subject, m.text));
  const createdAt = run.now();
  const first = state.summary?.items ?? 0;
  const created: Memory[] = [];
  let duplicates = 0;
  parsed.items.forEach((item, i) => {
    const key = duplicateKey(item.kind, item.subject, item.text);
    if (known.has(key)) {
      duplicates++;
      return;
    }
    known.add(key);
    created.push({
      id: run.memoryId(job, first + i),
      kind: item.kind,
      text: item.text,
      ...(item.subject ? { subject: item.subject } : {}),
      ...(item.context ? { context: item.context } : {}),
      ...(item.worthRemembering !== undefined ? { worthRemembering: item.worthRemembering } : {}),
      time: item.time,
      sourceTurnIds: item.sourceTurnIds,
      sessionId: job.sessionId!,
      edited: false,
      createdAt,
    });
  });
  // Topics by turn ids, appended part after part: together they cover the session.
  const topics = [...(state.topics ?? []), ...(parsed.topics ?? []).map((r) => ({ first: shown[r.first]!.id, last: shown[r.last]!.id }))];
  const next: MemoriseState = {
    ...state,
    memoryIds: [...state.memoryIds, ...created.map((m) => m.id)],
    duplicates: state.duplicates + duplicates,
    problems: [...state.problems, ...parsed.problems].slice(-20),
    ...(topics.length > 0 ? { topics } : {}),
    summary: {
      done: done + 1,
      total,
      items: first + parsed.items.length,
      lineChars: plan.lineChars,
      starts,
      skipped: state.summary?.skipped ?? [],
    },
  };
  return commitPart(run, job, next, created);
}

/** Commits a part's memories with the job's advanced state: the next part, or the embed step. */
async function commitPart(run: SummaryRun, job: Job, next: MemoriseState, created: Memory[]): Promise<Job> {
  const s = next.summary!;
  const patch: Partial<Job> =
    s.done >= s.total
      ? { step: 'embed', progress: { done: 0, total: next.memoryIds.length, label: 'embedding' } }
      : { progress: { done: s.done, total: s.total, label: 'summarising' } };
  const { job: out, applied } = await run.commitApplied({ memories: created }, run.advance(job, patch, next));
  run.adopt(applied.memories ?? []);
  return out;
}

function skipPart(
  run: SummaryRun,
  job: Job,
  state: MemoriseState,
  done: number,
  total: number,
  lineChars: number,
  starts: number[],
  why: string,
): Promise<Job> {
  run.problems.push(why);
  const skipped = [...(state.summary?.skipped ?? []), done];
  const next: MemoriseState = {
    ...state,
    problems: [...state.problems, why].slice(-20),
    summary: { done: done + 1, total, items: state.summary?.items ?? 0, lineChars, starts, skipped },
  };
  return commitPart(run, job, next, []);
}
