// What the model self-test found, in words the user reads: on the model's card in the Models view
// and, for a model too weak to memorise well, in a short notice in the chat. Pure: unit tested.
import type { ModelCheckSnapshot } from '../../services/models/model-check';
import type { ModelCheckRecord, ModelChecks } from '../../services/models/model-checks';
import type { ModelsSnapshot } from '../../services/models/model-snapshot';
import { SERVER_CHOICE_ID } from '../../services/models/model-snapshot';

export interface CheckWords {
  tone: 'busy' | 'good' | 'weak' | 'bad';
  /** One sentence: what the test found (or that it runs). */
  headline: string;
  /** What it means for the user's memories, and what would do better. */
  advice?: string;
  /** Every check that failed, in words. */
  details: string[];
  /** How the engine asks for JSON, in words. */
  mode?: string;
}

/** "Qwen2.5 0.5B Instruct (q4f16)" → "Qwen2.5 0.5B": the name as people say it. */
export function shortLabel(label: string): string {
  return (
    label
      .replace(/\s*\((q4f16|q4f32)\)\s*$/i, '')
      .replace(/\s+Instruct\b/, '')
      .trim() || label
  );
}

const joined = (items: readonly string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/** How the engine asks for JSON, and whether the test changed it. */
export function modeWords(r: Pick<ModelCheckRecord, 'mode' | 'canSwitch' | 'switched'>): string {
  if (r.mode === 'grammar')
    return r.canSwitch
      ? "The server holds this model's answers to the format asked for (structured output)."
      : "The engine holds this model's answers to the format asked for (a grammar).";
  if (r.switched)
    return "The server's structured output did not give readable answers, so Tealeaf now asks this model for the format in words and repairs what it can.";
  return r.canSwitch
    ? 'The server has no structured output: Tealeaf asks for the format in words and repairs what it can.'
    : 'This engine has no grammar for structured answers: Tealeaf asks for the format in words and repairs what it can.';
}

/** A model that would do better, in words, or undefined when none can be named. */
export function betterModel(m: Pick<ModelsSnapshot, 'choices' | 'loadedId' | 'recommendedId'>, checks: ModelChecks): string | undefined {
  const loaded = m.choices.find((c) => c.id === m.loadedId);
  const usable = m.choices.filter((c) => !c.unavailable && c.id !== m.loadedId && c.sizeMB > 0);
  const tested = usable.find((c) => checks[c.id]?.verdict === 'good');
  if (tested) return `${shortLabel(tested.label)} did well in the same test`;
  if (m.loadedId === SERVER_CHOICE_ID) return 'a larger model on your model server usually does better';
  if (!loaded) return undefined;
  const larger = usable.filter((c) => c.engine === loaded.engine && c.sizeMB > loaded.sizeMB).sort((a, b) => a.sizeMB - b.sizeMB);
  const pick = larger.find((c) => c.id === m.recommendedId) ?? larger[0];
  return pick ? `a larger model such as ${shortLabel(pick.label)}, which fits this device, usually does better` : undefined;
}

/** The check of the model in use, in words. */
export function checkWords(
  check: ModelCheckSnapshot,
  m: Pick<ModelsSnapshot, 'choices' | 'loadedId' | 'recommendedId'>,
  checks: ModelChecks = {},
): CheckWords {
  const name = shortLabel(check.label);
  if (check.state === 'running') return { tone: 'busy', headline: 'Checking how well this model writes memories…', details: [] };
  if (check.state === 'waiting')
    return { tone: 'busy', headline: 'The memory check waits while Tealeaf replies; it goes on when the chat is quiet.', details: [] };
  if (check.state === 'failed' || !check.result)
    return { tone: 'weak', headline: `The memory check could not run: ${check.message ?? 'no result'}.`, details: [] };
  const r = check.result;
  const failed = r.checks.filter((c) => !c.passed).map((c) => c.reason);
  const mode = modeWords(r);
  if (r.verdict === 'good') return { tone: 'good', headline: `${name} wrote memories well in a short test.`, details: [], mode };
  // The headline names the first two failures, briefly ("it repeated items and missed 2 of 4
  // facts"); the list has them all, in full.
  const why = joined(failed.slice(0, 2).map((f, i) => (i > 0 ? f.replace(/^it /, '') : f).replace(/\s*\([^)]*\)/g, '')));
  const better = betterModel(m, checks);
  if (r.verdict === 'unusable')
    return {
      tone: 'bad',
      headline: `${name} could not write memories in a short test (${why}).`,
      advice: `Tealeaf will remember little of your chats with it${better ? `; ${better}` : ''}.`,
      details: failed,
      mode,
    };
  return {
    tone: 'weak',
    headline: `${name} wrote memories poorly in a short test (${why}).`,
    advice: `Memories from your chats may be incomplete or wrong${better ? `; ${better}` : ''}.`,
    details: failed,
    mode,
  };
}

/** The chat's notice: only for a model found weak or unusable whose notice the user has not hidden. */
export function chatNotice(
  check: ModelCheckSnapshot | undefined,
  m: Pick<ModelsSnapshot, 'choices' | 'loadedId' | 'recommendedId'>,
  checks: ModelChecks = {},
): CheckWords | undefined {
  const r = check?.state === 'done' ? check.result : undefined;
  if (!check || !r || r.verdict === 'good' || r.noticeHidden) return undefined;
  return checkWords(check, m, checks);
}
