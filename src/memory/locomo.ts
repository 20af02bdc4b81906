// Reader for LoCoMo conversation files (docs/METHOD.md, section 6): sessions with their dates,
// turns with dia_ids, the per-speaker observations with their source turns, and the questions.
// Generic and shared: the call-count benchmark and the retrieval benchmark both read it.
import { clampText } from './limits';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../ports';
import type { Id, Millis, Session, Turn } from './types';

export interface LocomoTurn {
  diaId: string;
  speaker: string;
  text: string;
  /** Caption of a shared photo, when the turn shared one. */
  imageCaption?: string;
}

export interface LocomoObservation {
  speaker: string;
  fact: string;
  diaIds: string[];
}

export interface LocomoSession {
  /** N of session_N. */
  index: number;
  dateText: string;
  time: Millis;
  turns: LocomoTurn[];
  observations: LocomoObservation[];
  summary?: string;
}

export interface LocomoQuestion {
  question: string;
  answer?: string;
  adversarialAnswer?: string;
  evidence: string[];
  category: number;
}

export interface LocomoConversation {
  speakerA: string;
  speakerB: string;
  /** Sessions that have turns, in session order. */
  sessions: LocomoSession[];
  qa: LocomoQuestion[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" -> epoch millis (read as UTC, so results do not depend on the machine). */
export function parseLocomoDate(text: string): Millis | undefined {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!m) return undefined;
  const month = MONTHS.findIndex((name) => name.startsWith(m[5].toLowerCase().slice(0, 3)));
  if (month < 0) return undefined;
  let hour = Number(m[1]) % 12;
  if (m[3].toLowerCase() === 'pm') hour += 12;
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** Observation sources come as "D1:3", ["D1:3", "D1:5"] or "D8:6; D9:17". */
function splitDiaIds(raw: unknown): string[] {
  const parts = Array.isArray(raw) ? raw : [raw];
  return parts
    .flatMap((p) => (typeof p === 'string' ? p.split(/[\s,;]+/) : []))
    .map((s) => s.trim())
    .filter((s) => /^D\d+:\d+$/.test(s));
}

function asRecord(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function parseLocomoConversation(json: unknown): LocomoConversation {
  const root = asRecord(json);
  // Some releases wrap the sessions in a "conversation" object next to "qa".
  const conv = root.conversation ? asRecord(root.conversation) : root;
  const observationsRoot = root.observation ? asRecord(root.observation) : root;
  const summaryRoot = root.session_summary ? asRecord(root.session_summary) : root;
  const sessions: LocomoSession[] = [];
  const numbers = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  for (const n of numbers) {
    const rawTurns = conv[`session_${n}`];
    if (!Array.isArray(rawTurns) || rawTurns.length === 0) continue;
    const dateText = String(conv[`session_${n}_date_time`] ?? '');
    const time = parseLocomoDate(dateText);
    if (time === undefined) continue;
    const turns: LocomoTurn[] = rawTurns.map((t) => {
      const r = asRecord(t);
      const caption = typeof r.blip_caption === 'string' ? r.blip_caption : undefined;
      return {
        diaId: String(r.dia_id ?? ''),
        speaker: String(r.speaker ?? ''),
        text: String(r.text ?? ''),
        ...(caption ? { imageCaption: caption } : {}),
      };
    });
    const observations: LocomoObservation[] = [];
    for (const [speaker, list] of Object.entries(asRecord(observationsRoot[`session_${n}_observation`]))) {
      if (!Array.isArray(list)) continue;
      for (const entry of list) {
        if (!Array.isArray(entry) || typeof entry[0] !== 'string') continue;
        observations.push({ speaker, fact: entry[0], diaIds: splitDiaIds(entry[1]) });
      }
    }
    const summary = summaryRoot[`session_${n}_summary`];
    sessions.push({ index: n, dateText, time, turns, observations, ...(typeof summary === 'string' ? { summary } : {}) });
  }
  const qa: LocomoQuestion[] = (Array.isArray(root.qa) ? root.qa : []).map((q) => {
    const r = asRecord(q);
    return {
      question: String(r.question ?? ''),
      ...(r.answer !== undefined ? { answer: String(r.answer) } : {}),
      ...(r.adversarial_answer !== undefined ? { adversarialAnswer: String(r.adversarial_answer) } : {}),
      evidence: splitDiaIds(r.evidence),
      category: Number(r.category ?? 0),
    };
  });
  return { speakerA: String(conv.speaker_a ?? ''), speakerB: String(conv.speaker_b ?? ''), sessions, qa };
}

/** The text of a turn as the app stores it (a shared photo becomes a bracketed caption). */
export function locomoTurnText(t: LocomoTurn): string {
  // Clamped after the caption is added: the stored text must fit what a backup may hold.
  return clampText(t.imageCaption ? `${t.text} [shares a photo: ${t.imageCaption}]` : t.text);
}

/**
 * App sessions and turns for one LoCoMo session. Speaker A plays the user, speaker B the
 * assistant. Turn ids are `${sessionId}:${dia_id}` and externalId keeps the dia_id.
 * Turns are one minute apart from the session's date so that order and times stay realistic.
 */
export function locomoSessionRecords(conv: LocomoConversation, s: LocomoSession, prefix = 'locomo'): { session: Session; turns: Turn[] } {
  const sessionId: Id = `${prefix}:s${s.index}`;
  const turns: Turn[] = s.turns.map((t, i) => ({
    id: `${sessionId}:${t.diaId}`,
    sessionId,
    index: i,
    role: t.speaker === conv.speakerA ? 'user' : 'assistant',
    text: locomoTurnText(t),
    time: s.time + i * 60_000,
    status: 'complete',
    externalId: t.diaId,
  }));
  const last = turns.length > 0 ? turns[turns.length - 1].time : s.time;
  return {
    session: {
      id: sessionId,
      title: `${conv.speakerA} & ${conv.speakerB}, session ${s.index}`,
      startedAt: s.time,
      lastActivityAt: last,
      endedAt: last,
      status: 'ended',
      endReason: 'import',
    },
    turns,
  };
}

/** A transcript line of the summarising prompt starts with its turn's label: "T12 [..." or "T12 (part 1 of 3) [...". */
const SHOWN_LINE = /^T(\d+)(?: \(part \d+ of \d+\))? \[/gm;

/**
 * The observations a model shown these messages could write: those with a source turn in the
 * transcript it was given, citing only those turns, and no more than the schema allows. Memorising
 * in parts shows one part of a session per call; answering every part with the whole session's
 * observations gave each memory the first part's turns (or a guess) as its sources.
 */
function observationsShown(s: LocomoSession, messages: readonly ChatMessage[], schema: JsonSchema): LocomoObservation[] {
  const shown = new Set<string>();
  for (const m of messages)
    for (const match of m.content.matchAll(SHOWN_LINE)) {
      const turn = s.turns[Number(match[1]) - 1];
      if (turn) shown.add(turn.diaId);
    }
  const out: LocomoObservation[] = [];
  for (const o of s.observations) {
    const diaIds = o.diaIds.filter((d) => shown.has(d));
    if (diaIds.length > 0) out.push({ ...o, diaIds });
  }
  return out.slice(0, maxEvents(schema));
}

function maxEvents(schema: JsonSchema): number {
  const events = (schema.properties as Record<string, { maxItems?: unknown } | undefined> | undefined)?.events;
  return typeof events?.maxItems === 'number' ? events.maxItems : Infinity;
}

/**
 * A LanguageModel that answers the summarising call (schema 'session_memories') with the LoCoMo
 * observations of the session being memorised, so imported memories carry LoCoMo's own facts and
 * sources. Every other call (relation labels, segmentation, chat) goes to `delegate`, the loaded
 * model; without one those calls fail, and callers are expected not to make them.
 */
export function observationSummariser(getSession: () => LocomoSession | undefined, delegate?: LanguageModel): LanguageModel {
  const noModel = (what: string) => new Error(`no language model is loaded for ${what}`);
  return {
    modelId: delegate ? `locomo-observations+${delegate.modelId}` : 'locomo-observations',
    // The loaded model's window, read when asked (a server's may come after this wrapper is made).
    get window() {
      return delegate?.window;
    },
    chat(messages: ChatMessage[], options?: GenerateOptions): Promise<string> {
      return delegate ? delegate.chat(messages, options) : Promise.reject(noModel('a chat reply'));
    },
    async json(messages: ChatMessage[], schema: JsonSchema, options?: GenerateOptions): Promise<string> {
      if (schema.title !== 'session_memories') {
        if (!delegate) throw noModel(`the call "${String(schema.title ?? 'untitled')}"`);
        return delegate.json(messages, schema, options);
      }
      const s = getSession();
      if (!s) throw new Error('no LoCoMo session is being memorised');
      // Sources are given as dia_ids: the summary parser resolves them through Turn.externalId.
      return JSON.stringify({
        events: observationsShown(s, messages, schema).map((o) => ({ text: o.fact, about: o.speaker, turns: o.diaIds })),
        userTraits: [],
        assistantTraits: [],
        notes: [],
      });
    },
  };
}
