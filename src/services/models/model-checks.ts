// What the model self-test found, remembered per model in the settings (`modelChecks`), so it does
// not run again at every start: the verdict, each check with its reason, and the structured mode
// it chose (a model server moved to words is put back in words when it is used again). Read
// defensively like every setting: a broken entry is dropped, the rest kept.
import type { StructuredMode } from '../../ports';
import { SELF_TEST_VERSION, type SelfTestCheckId, type SelfTestResult, type SelfTestVerdict } from '../../memory/eval/self-test';
import { MAX_MODEL_ID } from '../../memory/limits';

export interface StoredCheck {
  id: SelfTestCheckId;
  passed: boolean;
  reason: string;
}

export interface ModelCheckRecord {
  /** The test's version: one from an older test runs again. */
  version: number;
  verdict: SelfTestVerdict;
  checks: StoredCheck[];
  mode: StructuredMode;
  /** The engine offers both structured modes. */
  canSwitch: boolean;
  /** The test moved the engine to words. */
  switched: boolean;
  /** When it ran. */
  at: number;
  /** The model's name as the user saw it then. */
  label: string;
  /** The user hid the chat's notice about this model. */
  noticeHidden?: boolean;
}

export type ModelChecks = Record<string, ModelCheckRecord>;

/** Models remembered; the oldest results go first (a model not used for long is simply tested again). */
export const MAX_MODEL_CHECKS = 24;
const MAX_REASON = 300;
const MAX_CHECKS = 16;
const VERDICTS: readonly SelfTestVerdict[] = ['good', 'weak', 'unusable'];
const MODES: readonly StructuredMode[] = ['grammar', 'words'];
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** The key of a model in `modelChecks`: the model server's models by their names, others by id. */
export function checkKey(loadedId: string, modelId: string, serverChoiceId: string): string {
  return loadedId === serverChoiceId ? `${serverChoiceId}:${modelId}` : loadedId;
}

export function toRecord(result: SelfTestResult, label: string, at: number): ModelCheckRecord {
  return {
    version: result.version,
    verdict: result.verdict,
    checks: result.checks.map((c) => ({ id: c.id, passed: c.passed, reason: c.reason })),
    mode: result.structured.mode,
    canSwitch: result.structured.canSwitch,
    switched: result.structured.switched,
    at,
    label: label.slice(0, MAX_MODEL_ID),
  };
}

/** A remembered result the current test stands by. */
export function isCurrent(record: ModelCheckRecord | undefined): record is ModelCheckRecord {
  return record?.version === SELF_TEST_VERSION;
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function readCheck(raw: unknown): StoredCheck | undefined {
  if (!isRecord(raw) || typeof raw.id !== 'string' || typeof raw.passed !== 'boolean' || typeof raw.reason !== 'string') return undefined;
  if (raw.id.length > 40) return undefined;
  return { id: raw.id as SelfTestCheckId, passed: raw.passed, reason: raw.reason.slice(0, MAX_REASON) };
}

function readRecord(raw: unknown): ModelCheckRecord | undefined {
  if (!isRecord(raw)) return undefined;
  const { version, verdict, checks, mode, at, label } = raw;
  if (typeof version !== 'number' || !Number.isInteger(version)) return undefined;
  if (!VERDICTS.includes(verdict as SelfTestVerdict) || !MODES.includes(mode as StructuredMode)) return undefined;
  if (!Array.isArray(checks) || typeof at !== 'number' || !Number.isFinite(at) || typeof label !== 'string') return undefined;
  const read = checks.slice(0, MAX_CHECKS).map(readCheck);
  if (read.some((c) => !c)) return undefined;
  return {
    version,
    verdict: verdict as SelfTestVerdict,
    checks: read as StoredCheck[],
    mode: mode as StructuredMode,
    canSwitch: raw.canSwitch === true,
    switched: raw.switched === true,
    at,
    label: label.slice(0, MAX_MODEL_ID),
    ...(raw.noticeHidden === true ? { noticeHidden: true } : {}),
  };
}

/** The settings' `modelChecks`, entry by entry: what cannot be read is dropped; the newest MAX_MODEL_CHECKS kept. */
export function readModelChecks(raw: unknown): ModelChecks {
  if (!isRecord(raw)) return {};
  const entries: Array<[string, ModelCheckRecord]> = [];
  for (const [key, value] of Object.entries(raw)) {
    // Keys are model ids ("local-server:<name>" for a server's): never one that reaches a prototype.
    const usable = key.length > 0 && key.length <= MAX_MODEL_ID + 20 && !FORBIDDEN.has(key);
    const record = usable ? readRecord(value) : undefined;
    if (record) entries.push([key, record]);
  }
  entries.sort((a, b) => b[1].at - a[1].at);
  return Object.fromEntries(entries.slice(0, MAX_MODEL_CHECKS));
}

/** `checks` with one model's record put in (or removed, with undefined). */
export function withCheck(checks: ModelChecks | undefined, key: string, record: ModelCheckRecord | undefined): ModelChecks {
  const others = Object.entries(checks ?? {}).filter(([k]) => k !== key);
  return readModelChecks(Object.fromEntries(record ? [...others, [key, record]] : others));
}
