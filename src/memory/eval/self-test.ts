// The model self-test: when a chat model is ready, a few small structured calls through
// the real builders and parsers tell whether it can write memories. A Phase 0 summary of a short
// fixed chat (self-test-fixture.ts) must read, find its facts, name its turns and not repeat
// itself; a relation label must see an obvious change and must not call unrelated memories a
// change (a false "Changed" retires a trait that is still true). Each check passes or fails with a
// reason in plain words; the verdict is 'good', 'weak' or 'unusable'. Deterministic (temperature
// 0), bounded (every call fitted, with the output cap the real call has), abortable; never throws
// but for an abort: a call that fails is a failed check.
import type { LanguageModel, StructuredMode } from '../../ports';
import { errorText } from '../../errors';
import { estimateMessages, fittedJson, isPromptTooLong, outputFor, windowOf } from '../fit';
import { extractJson, isSchemaEcho } from '../llm-output';
import { contentWords } from '../text';
import { parseSummary, type SummaryResult } from '../ingest/summarise';
import { summariseMessages, summarySchema } from '../ingest/summary-prompt';
import { itemsFor, SUMMARY_TOKENS } from '../ingest/summary-plan';
import { detailFor, labellingMessages, labelOutputTokens, parseRelationLabels, relationLabelSchema } from '../ingest/labelling';
import { SELF_TEST_CANDIDATES, SELF_TEST_FACTS, SELF_TEST_NEW_MEMORY, SELF_TEST_TURNS, type ExpectedFact } from './self-test-fixture';

/** Bumped when the test changes: a verdict remembered from an older test is tested again. */
export const SELF_TEST_VERSION = 1;

export type SelfTestVerdict = 'good' | 'weak' | 'unusable';

export type SelfTestCheckId =
  | 'summary-readable'
  | 'summary-complete'
  | 'summary-facts'
  | 'summary-sources'
  | 'summary-repeats'
  | 'labels-readable'
  | 'labels-no-false-change'
  | 'labels-change-found';

export interface SelfTestCheck {
  id: SelfTestCheckId;
  passed: boolean;
  /** What the model did, in plain words ("it repeated items"), read after "In a short test, ". */
  reason: string;
  /** Failed so badly that memories cannot be made with this model at all. */
  severe?: boolean;
}

/** How the engine asks for JSON, and whether the test could choose. */
export interface StructuredChoice {
  /** 'grammar': decoding constrained by the schema; 'words': the schema in the prompt, the answer read and repaired. */
  mode: StructuredMode;
  /** The engine offers both (a model server); false: it has one way only (the CPU engine: words). */
  canSwitch: boolean;
  /** The test moved the engine to words: its grammar answers did not read, its words did. */
  switched: boolean;
}

export interface SelfTestResult {
  version: number;
  verdict: SelfTestVerdict;
  checks: SelfTestCheck[];
  structured: StructuredChoice;
  /** Model calls made. */
  calls: number;
}

/** Facts of the four that must be found (three: a small model may drop one detail and still do). */
export const FACTS_NEEDED = 3;
/** Share of memories that may lack a valid source turn (guessed by word overlap instead). */
export const GUESSED_SOURCES_TOLERATED = 0.25;

export interface SelfTestOptions {
  signal?: AbortSignal;
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('The self-test was stopped.', 'AbortError');
}

/** The mode the engine uses now: its own word where it offers both, else what its window says. */
export function structuredModeOf(llm: LanguageModel): StructuredMode {
  return llm.structuredMode ?? (windowOf(llm).schemaInPrompt ? 'words' : 'grammar');
}

const matches = (words: readonly string[], wanted: string) =>
  words.some((w) => w === wanted || (wanted.length >= 4 && w.startsWith(wanted)));

/** Whether any memory holds the fact. */
export function factFound(fact: ExpectedFact, texts: readonly string[]): boolean {
  return texts.some((t) => {
    const words = contentWords(t);
    return fact.anyOf.some((w) => matches(words, w));
  });
}

/** Why a summary could not be read, in words. */
function unreadableReason(r: SummaryResult): string {
  const p = r.problems.join(' | ');
  if (/schema, echoed/.test(p)) return 'it wrote the answer format back instead of an answer';
  if (/empty output/.test(p)) return 'it wrote nothing';
  if (/no JSON/.test(p)) return 'it answered in prose instead of the format asked for';
  if (/truncated|could not be repaired/.test(p)) return 'its answer was cut off and could not be read';
  return 'its answer could not be read';
}

const list = (items: readonly string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

function summaryChecks(r: SummaryResult): SelfTestCheck[] {
  if (!r.parsed) return [{ id: 'summary-readable', passed: false, reason: unreadableReason(r), severe: true }];
  const checks: SelfTestCheck[] = [{ id: 'summary-readable', passed: true, reason: 'its summary could be read' }];
  checks.push(
    r.complete === false
      ? { id: 'summary-complete', passed: false, reason: 'its summary stopped short (cut off before its end)' }
      : { id: 'summary-complete', passed: true, reason: 'its summary was complete' },
  );
  const texts = r.items.map((i) => `${i.context ?? ''} ${i.text}`);
  const missed = SELF_TEST_FACTS.filter((f) => !factFound(f, texts));
  const found = SELF_TEST_FACTS.length - missed.length;
  checks.push(
    found >= FACTS_NEEDED
      ? { id: 'summary-facts', passed: true, reason: `it found ${found} of ${SELF_TEST_FACTS.length} facts` }
      : {
          id: 'summary-facts',
          passed: false,
          reason: `it missed ${missed.length} of ${SELF_TEST_FACTS.length} facts (${list(missed.map((f) => f.about))})`,
          ...(found === 0 ? { severe: true } : {}),
        },
  );
  const guessed = r.items.filter((i) => i.sourceGuessed).length;
  checks.push(
    r.items.length > 0 && guessed <= r.items.length * GUESSED_SOURCES_TOLERATED
      ? { id: 'summary-sources', passed: true, reason: 'it said which messages each memory came from' }
      : {
          id: 'summary-sources',
          passed: false,
          reason:
            r.items.length === 0
              ? 'it wrote no memories to trace back'
              : `it did not say which messages ${guessed} of ${r.items.length} memories came from`,
        },
  );
  const repeats = Number(r.problems.map((p) => /^(\d+) repeated item/.exec(p)?.[1]).find(Boolean) ?? 0);
  checks.push(
    repeats > 0
      ? { id: 'summary-repeats', passed: false, reason: 'it repeated items' }
      : { id: 'summary-repeats', passed: true, reason: 'it wrote each memory once' },
  );
  return checks;
}

function labelChecks(raw: string): SelfTestCheck[] {
  const n = SELF_TEST_CANDIDATES.length;
  const ex = extractJson(raw);
  const parsed = parseRelationLabels(raw, n);
  const unreadable = !ex.found || isSchemaEcho(ex.value) || parsed.problems.some((p) => /labels not found|out of range/.test(p));
  if (unreadable) return [{ id: 'labels-readable', passed: false, reason: 'its answer on how memories relate could not be read' }];
  const checks: SelfTestCheck[] = [{ id: 'labels-readable', passed: true, reason: 'its answer on how memories relate could be read' }];
  const wrong = SELF_TEST_CANDIDATES.filter((c, i) => c.expected === 'None' && parsed.labels[i] === 'Changed').length;
  checks.push(
    wrong > 0
      ? {
          id: 'labels-no-false-change',
          passed: false,
          reason: 'it called unrelated memories a change, which would retire things still true',
        }
      : { id: 'labels-no-false-change', passed: true, reason: 'it did not call unrelated memories a change' },
  );
  const seen = SELF_TEST_CANDIDATES.every((c, i) => c.expected !== 'Changed' || parsed.labels[i] === 'Changed');
  checks.push(
    seen
      ? { id: 'labels-change-found', passed: true, reason: 'it saw that a fact had changed' }
      : { id: 'labels-change-found', passed: false, reason: 'it missed a clear change, so an old fact would stay as if still true' },
  );
  return checks;
}

/** What a call that threw means for the test, unless it was the test being stopped. */
function failedCall(id: SelfTestCheckId, e: unknown, signal: AbortSignal | undefined, severe: boolean): SelfTestCheck {
  throwIfAborted(signal);
  const reason = isPromptTooLong(e)
    ? "the test's short chat does not fit this model's window"
    : `the model failed to answer (${errorText(e).slice(0, 160)})`;
  return { id, passed: false, reason, ...(severe ? { severe: true } : {}) };
}

/** The verdict of a set of checks: any severe failure is 'unusable', any other failure 'weak'. */
export function verdictOf(checks: readonly SelfTestCheck[]): SelfTestVerdict {
  if (checks.some((c) => !c.passed && c.severe)) return 'unusable';
  return checks.some((c) => !c.passed) ? 'weak' : 'good';
}

/** One run of the test in the engine's current structured mode. */
export async function runSelfTest(llm: LanguageModel, options: SelfTestOptions = {}): Promise<SelfTestResult> {
  const { signal } = options;
  throwIfAborted(signal);
  const window = windowOf(llm);
  const checks: SelfTestCheck[] = [];
  let calls = 0;

  // (a) Phase 0 as the memorise job calls it for a chat that fits one part.
  const summaryTokens = outputFor(window, SUMMARY_TOKENS);
  const maxItems = itemsFor(summaryTokens);
  try {
    calls++;
    const { text } = await fittedJson({
      llm,
      build: () => summariseMessages(SELF_TEST_TURNS, { includeNotes: true, maxItems }),
      output: summaryTokens,
      schema: summarySchema(true, maxItems),
      temperature: 0,
      signal,
    });
    throwIfAborted(signal);
    checks.push(...summaryChecks(parseSummary(text, SELF_TEST_TURNS)));
  } catch (e) {
    checks.push(failedCall('summary-readable', e, signal, true));
  }

  // (b) Phase I-2 as linking calls it: one call for the new memory and its candidates.
  const others = SELF_TEST_CANDIDATES.map(({ expected: _expected, ...c }) => c);
  const full = estimateMessages(labellingMessages(SELF_TEST_NEW_MEMORY, others));
  try {
    calls++;
    const { text } = await fittedJson({
      llm,
      build: (tokens) => labellingMessages(SELF_TEST_NEW_MEMORY, others, detailFor(tokens, full)),
      output: labelOutputTokens(others.length),
      schema: relationLabelSchema(others.length),
      temperature: 0,
      signal,
    });
    throwIfAborted(signal);
    checks.push(...labelChecks(text));
  } catch (e) {
    checks.push(failedCall('labels-readable', e, signal, false));
  }

  return {
    version: SELF_TEST_VERSION,
    verdict: verdictOf(checks),
    checks,
    structured: { mode: structuredModeOf(llm), canSwitch: !!llm.setStructuredMode, switched: false },
    calls,
  };
}

const READABILITY: readonly SelfTestCheckId[] = ['summary-readable', 'labels-readable'];
const unreadable = (r: SelfTestResult) => r.checks.some((c) => !c.passed && READABILITY.includes(c.id));

/**
 * The self-test, choosing the structured mode where the engine offers both: its grammar first;
 * where those answers do not read but the same calls asked in words do, the engine stays in words
 * (the caller remembers the mode for this model). Otherwise the engine is left as it was.
 */
export async function checkModel(llm: LanguageModel, options: SelfTestOptions = {}): Promise<SelfTestResult> {
  const first = await runSelfTest(llm, options);
  if (!llm.setStructuredMode || first.structured.mode === 'words' || !unreadable(first)) return first;
  const before = first.structured.mode;
  llm.setStructuredMode('words');
  let second: SelfTestResult;
  try {
    second = await runSelfTest(llm, options);
  } catch (e) {
    llm.setStructuredMode(before);
    throw e;
  }
  if (!unreadable(second)) return { ...second, calls: first.calls + second.calls, structured: { ...second.structured, switched: true } };
  llm.setStructuredMode(before);
  return { ...first, calls: first.calls + second.calls };
}
