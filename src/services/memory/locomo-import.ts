// Imports one LoCoMo conversation file (docs/METHOD.md, section 6) as demo data: its sessions and
// turns, with their dates, become history; its observations become memories through the REAL
// memorise pipeline (summarise -> embed -> link -> segment), with a summariser that answers with
// the file's observations instead of asking a model. Linking runs as in Phase I: by the model when
// one is loaded, by the similarity switch otherwise. Session ids carry a hash of the conversation,
// so importing the same file again skips what is already there (and finishes a cut-off import).
import { MAX_MESSAGE } from '../../memory/limits';
import type { Embedder, LanguageModel, Repository } from '../../ports';
import type { MemoryGraph } from '../../memory/graph';
import {
  locomoSessionRecords,
  observationSummariser,
  parseLocomoConversation,
  parseLocomoDate,
  type LocomoConversation,
  type LocomoSession,
} from '../../memory/locomo';
import { createMemoriseJob, runMemoriseJob, type MemoriseState, type Segmenter } from '../../memory/ingest/memorise';
import type { HybridIndex } from '../../memory/retrieval/types';
import { segmentSession } from '../../memory/ingest/segments';
import type { MemorySettings } from '../../memory/settings';
import type { Id, Job, Memory, Millis, Turn } from '../../memory/types';

export interface LocomoImportDeps {
  repo: Repository;
  index: HybridIndex;
  graph: MemoryGraph;
  memories: Map<Id, Memory>;
  settings: MemorySettings;
  /** The loaded language model: labels relations and splits segments. Absent: similarity + splitter. */
  llm?: LanguageModel;
  embedder?: Embedder;
  /** done/total counts sessions; label says what happens now. */
  onProgress?: (done: number, total: number, label: string) => void;
  signal?: AbortSignal;
  now?: () => Millis;
}

export interface LocomoImportResult {
  /** Sessions this call finished importing (with their turns and memories). */
  sessions: number;
  turns: number;
  memories: number;
  edges: number;
  /** Sessions already imported before (same file imported again). */
  skipped: number;
}

/** The file is not a usable LoCoMo conversation; `issues` lists what is wrong. */
export class LocomoFormatError extends Error {
  override readonly name = 'LocomoFormatError';
  constructor(readonly issues: string[]) {
    super(
      `This is not a LoCoMo conversation file: ${issues.slice(0, 3).join('; ')}` +
        (issues.length > 3 ? ` (and ${issues.length - 3} more problems)` : ''),
    );
  }
}

/** The app's own limits (src/memory/limits.ts: a turn is a message), so imported data can always be exported and restored. */
const LIMITS = { maxText: MAX_MESSAGE, maxDiaId: 40, maxName: 100, maxSessions: 1_000, maxTurns: 5_000 } as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function quote(v: unknown): string {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s);
}

/**
 * Checks the file's shape and returns the parsed conversation, or throws LocomoFormatError with
 * messages that say where the problem is (e.g. `session_2[4].speaker: ...`).
 */
export function validateLocomo(json: unknown): LocomoConversation {
  let value = json;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      throw new LocomoFormatError(['the file is not valid JSON']);
    }
  }
  if (Array.isArray(value)) {
    // The public release (locomo10.json) is a list of conversations.
    throw new LocomoFormatError([`the file holds a list of ${value.length} items; import one conversation (one JSON object) per file`]);
  }
  if (!isRecord(value)) throw new LocomoFormatError(['expected one JSON object with speaker_a, speaker_b and session_1, session_2, ...']);
  const conv = isRecord(value.conversation) ? value.conversation : value;
  const issues: string[] = [];
  const names: string[] = [];
  for (const key of ['speaker_a', 'speaker_b'] as const) {
    const name = conv[key];
    if (typeof name !== 'string' || name.trim() === '') issues.push(`${key}: missing (expected the speaker's name)`);
    else if (name.length > LIMITS.maxName) issues.push(`${key}: name is too long`);
    else names.push(name);
  }
  if (names.length === 2 && names[0] === names[1]) issues.push('speaker_a and speaker_b have the same name');

  const sessionKeys = Object.keys(conv).filter((k) => /^session_\d+$/.test(k));
  if (sessionKeys.length === 0) issues.push('no sessions (expected lists of turns named session_1, session_2, ...)');
  if (sessionKeys.length > LIMITS.maxSessions) issues.push(`too many sessions (${sessionKeys.length}, the limit is ${LIMITS.maxSessions})`);
  const diaIds = new Set<string>();
  let withTurns = 0;
  for (const key of sessionKeys) {
    if (issues.length >= 20) break;
    const turns = conv[key];
    if (!Array.isArray(turns)) {
      issues.push(`${key}: expected a list of turns, got ${quote(turns)}`);
      continue;
    }
    // A session with a date but no turns is allowed (the release has some); it is skipped.
    if (turns.length === 0) continue;
    withTurns++;
    if (turns.length > LIMITS.maxTurns) issues.push(`${key}: too many turns (${turns.length}, the limit is ${LIMITS.maxTurns})`);
    const date = conv[`${key}_date_time`];
    if (typeof date !== 'string' || parseLocomoDate(date) === undefined) {
      issues.push(`${key}_date_time: ${date === undefined ? 'missing' : quote(date)} (expected a date like "1:56 pm on 8 May, 2023")`);
    }
    turns.forEach((t: unknown, i) => {
      if (issues.length >= 20) return;
      const where = `${key}[${i}]`;
      if (!isRecord(t)) return void issues.push(`${where}: expected a turn object {speaker, dia_id, text}`);
      if (typeof t.speaker !== 'string' || (names.length === 2 && !names.includes(t.speaker))) {
        issues.push(`${where}.speaker: ${quote(t.speaker)} is neither speaker_a nor speaker_b`);
      }
      if (typeof t.dia_id !== 'string' || t.dia_id.trim() === '' || t.dia_id.length > LIMITS.maxDiaId) {
        issues.push(`${where}.dia_id: expected a short turn id like "D1:3", got ${quote(t.dia_id)}`);
      } else if (diaIds.has(t.dia_id)) {
        issues.push(`${where}.dia_id: ${quote(t.dia_id)} is used twice`);
      } else diaIds.add(t.dia_id);
      if (typeof t.text !== 'string') issues.push(`${where}.text: expected the turn's text, got ${quote(t.text)}`);
      else if (t.text.length > LIMITS.maxText) issues.push(`${where}.text: too long (${t.text.length} characters)`);
      if (t.blip_caption !== undefined && typeof t.blip_caption !== 'string') issues.push(`${where}.blip_caption: expected text`);
    });
  }
  if (sessionKeys.length > 0 && withTurns === 0) issues.push('every session is empty (no turns to import)');
  if (issues.length > 0) throw new LocomoFormatError(issues.slice(0, 20));
  return parseLocomoConversation(value);
}

/** FNV-1a, 32 bits: a short stable fingerprint (not for security). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The id prefix of a conversation's sessions: stable across imports of the same file. */
export function locomoImportPrefix(conv: LocomoConversation): string {
  const first = conv.sessions[0];
  const turn = first?.turns[0];
  return `locomo-${fnv1a([conv.speakerA, conv.speakerB, first?.dateText ?? '', turn?.diaId ?? '', turn?.text ?? ''].join('\u0000'))}`;
}

function memoriseState(job: Job): Partial<MemoriseState> {
  return (job.state ?? {}) as Partial<MemoriseState>;
}

export async function importLocomo(json: unknown, deps: LocomoImportDeps): Promise<LocomoImportResult> {
  const conv = validateLocomo(json);
  const prefix = locomoImportPrefix(conv);
  const now = deps.now ?? Date.now;
  // Relation-aware linking needs a model; without one, link by similarity (no call is made).
  const settings: MemorySettings = { ...deps.settings, relationAwareLinking: deps.llm ? deps.settings.relationAwareLinking : false };
  let current: LocomoSession | undefined;
  const llm = observationSummariser(() => current, deps.llm);
  const names = [conv.speakerA, conv.speakerB];
  const speakerLabel = (t: Turn) => (t.role === 'user' ? conv.speakerA : conv.speakerB);
  // The real model splits segments when loaded (not the summariser, which would fail the call).
  const segmenter: Segmenter = ({ turns, signal }) => segmentSession(turns, { llm: deps.llm, signal, speakerLabel, names });

  const result: LocomoImportResult = { sessions: 0, turns: 0, memories: 0, edges: 0, skipped: 0 };
  const edgesBefore = deps.graph.edgeCount;
  const total = conv.sessions.length;
  const unfinished = (await deps.repo.listJobs()).filter((j) => j.kind === 'memorise' && j.status !== 'done');

  for (const [i, s] of conv.sessions.entries()) {
    if (deps.signal?.aborted) throw deps.signal.reason ?? new Error('aborted');
    const { session, turns } = locomoSessionRecords(conv, s, prefix);
    const existing = await deps.repo.getSession(session.id);
    if (existing?.status === 'memorised') {
      result.skipped++;
      deps.onProgress?.(i + 1, total, `${session.title}: already imported`);
      continue;
    }
    // History first, in one commit; a session found 'ended' is a cut-off import: resume its job.
    // The job is stored with them: a job step writes only while its job record is there.
    const resumed = unfinished.find((j) => j.sessionId === session.id);
    const job = resumed ?? createMemoriseJob(session.id, now());
    if (!existing || !resumed)
      await deps.repo.apply({ ...(existing ? {} : { sessions: [session], turns }), ...(resumed ? {} : { jobs: [job] }) });
    current = s;
    deps.onProgress?.(i, total, `${session.title}: remembering`);
    const out = await runMemoriseJob(job, {
      repo: deps.repo,
      llm,
      embedder: deps.embedder,
      index: deps.index,
      graph: deps.graph,
      memories: deps.memories,
      settings,
      segmenter,
      includeNotes: false,
      now,
      signal: deps.signal,
      onProgress: (j) => deps.onProgress?.(i, total, `${session.title}: ${j.progress?.label ?? j.step}`),
    });
    if (out.status !== 'done') {
      throw new Error(`Could not import ${session.title}: ${out.reason ?? out.job.lastError ?? out.status}`);
    }
    result.sessions++;
    result.turns += turns.length;
    result.memories += memoriseState(out.job).memoryIds?.length ?? 0;
    deps.onProgress?.(i + 1, total, `${session.title}: done`);
  }
  result.edges = deps.graph.edgeCount - edgesBefore;
  return result;
}
