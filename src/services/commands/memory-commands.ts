// Memory commands in the chat: "remember that …" stores the user's words as a memory,
// "forget …" finds memories and deletes them once the user confirms in the chat, "what do you
// remember about …" lists what is true now. Answered from the store with no model call, with any
// engine or none. Every write goes through MemoryService.applyLive (the one writer; its live index
// follows), the answer turn in the same change as the memories it made or deleted. The answer
// names its memories in `usedMemory`, so it follows them (src/memory/derived.ts).
import type { ChangeSet, Embedder, LanguageModel, Repository } from '../../ports';
import type { CommandAnswer, Id, Memory, Millis, Turn, UsedMemory } from '../../memory/types';
import { parseMemoryCommand, type MemoryCommand } from '../../memory/commands/parse';
import { instructionFact, rememberedFact, type RememberedFact } from '../../memory/commands/fact';
import { instructionReading } from '../../memory/commands/instruction-words';
import { askInstructionOrFact } from '../../memory/commands/instruction-ask';
import { memoryKindPatch } from '../../memory/corrections';
import { isPast } from '../../memory/past';
import { displayText } from '../../memory/voice';
import { duplicateKey } from '../../memory/text';
import { memoryUnit } from '../../memory/ingest/memorise';
import { tokenize } from '../../memory/retrieval/tokenize';
import { isForgotten } from '../../memory/forget/lines';
import type { MemoryService } from '../memory/memory';
import { appendTurn } from '../chat/turn-append';
import { newId } from '../ids';
import { answerText, type AnswerFacts } from './words';

/** What the chat asks of the commands (ChatService's hook). */
export interface ChatCommands {
  /**
   * When `text`, the last of `turns` (stored unless the chat is temporary), is a memory command:
   * its answer is added after it and the session's turns are returned. Undefined: no command, or
   * one the model answers (nothing remembered about what was asked, and a model is loaded).
   */
  answer(text: string, turns: Turn[], temporary: boolean): Promise<Turn[] | undefined>;
}

export interface MemoryCommandsOptions {
  /** Reads only: writes go through `memory`. */
  repo: Pick<Repository, 'listTurns' | 'getTurns'>;
  memory: MemoryService;
  getEmbedder: () => Embedder | undefined;
  getModel: () => LanguageModel | undefined;
  now?: () => Millis;
}

/** Most memories a search lists (a forget card, a list); the persona bank ("me") lists more. */
export const MAX_FOUND = 12;
export const MAX_ABOUT_ME = 40;
/**
 * A memory found by meaning only (no word in common) counts when its cosine similarity is at least
 * this and close to the best one; the search model's nearest neighbours are otherwise anything.
 */
export const DENSE_MIN = 0.75;
const DENSE_SPREAD = 0.05;

const listed = (memoryIds: Id[]): UsedMemory => ({ memoryIds, segmentIds: [], timelines: [], scores: [] });
const newestFirst = (a: Memory, b: Memory) => b.time - a.time || b.createdAt - a.createdAt;

/**
 * Whether the person said something of their own in this chat before the question (the last turn):
 * a message that was not a memory command (a command's answer, next to it, carries `command`).
 * Those words become memories when the chat ends.
 */
function saidInChat(turns: readonly Turn[]): boolean {
  const before = turns.slice(0, -1);
  return before.some((t, i) => t.role === 'user' && before[i + 1]?.command === undefined);
}

export class MemoryCommands implements ChatCommands {
  private readonly now: () => Millis;

  constructor(private readonly opts: MemoryCommandsOptions) {
    this.now = opts.now ?? Date.now;
  }

  private get memory(): MemoryService {
    return this.opts.memory;
  }

  async answer(text: string, turns: Turn[], temporary: boolean): Promise<Turn[] | undefined> {
    const command = parseMemoryCommand(text);
    const user = turns.at(-1);
    if (!command || user?.role !== 'user') return undefined;
    if (temporary) {
      // Nothing of a temporary chat is stored or remembered: it says so and does nothing.
      return [...turns, this.answerTurn(user, { kind: command.kind, state: 'temporary' })];
    }
    const made = await this.make(command, user, turns);
    if (!made) return undefined;
    const writer = { listTurns: (id: Id) => this.opts.repo.listTurns(id), apply: (c: ChangeSet) => this.memory.applyLive(c) };
    return appendTurn(writer, made.turn, true, (t) => ({ ...made.change, turns: [t] }));
  }

  /** The answer to a command, with the change it makes (written with the answer). */
  private async make(command: MemoryCommand, user: Turn, turns: readonly Turn[]): Promise<{ turn: Turn; change: ChangeSet } | undefined> {
    if (command.kind === 'remember') return this.remember(await this.factOf(command.fact, command.instruction === true), user);
    const found = command.me ? this.aboutMe(command.kind === 'forget') : await this.find(command.about);
    if (command.kind === 'forget') {
      const ids = found.map((m) => m.id);
      const lines = command.me ? [] : await this.findLines(command.about, turns, found);
      const facts = { kind: 'forget', about: command.about, count: ids.length, messages: lines.length } as const;
      const state = ids.length + lines.length > 0 ? 'asked' : 'none';
      return { turn: this.answerTurn(user, { ...facts, state }, ids, lines), change: {} };
    }
    let current = found.filter((m) => !isPast(m));
    // No lasting fact about the user yet (a small model often writes what they said as events):
    // what they told is listed rather than "nothing".
    const told = command.me && current.length === 0 ? this.toldByMe() : [];
    if (told.length > 0) current = told;
    // Nothing at all about it (maybe a question of knowledge): the model answers, where there is one.
    if (!command.me && found.length === 0 && this.opts.getModel()) return undefined;
    const limit = command.me ? MAX_ABOUT_ME : MAX_FOUND;
    const shown = current.slice(0, limit).map((m) => m.id);
    const facts: AnswerFacts = { kind: 'recall', state: shown.length ? 'done' : 'none', about: command.about, count: shown.length };
    if (current.length > limit) facts.more = current.length - limit;
    if (told.length > 0) facts.told = true;
    else if (found.length > current.length) facts.past = found.length - current.length;
    if (command.me && saidInChat(turns)) facts.chatPending = true;
    return { turn: this.answerTurn(user, facts, shown), change: {} };
  }

  /**
   * What "remember …" keeps: a standing instruction where the words are about how to answer, else a
   * fact; where the words leave it open, the loaded model says (without one: a fact, which the
   * answer's card offers to make an instruction in one click).
   */
  private async factOf(words: string, instruction: boolean): Promise<RememberedFact> {
    if (instruction) return instructionFact(words);
    const reading = instructionReading(words);
    if (reading !== 'unsure') return rememberedFact(words, reading === 'instruction');
    const llm = this.opts.getModel();
    const asked = llm ? await askInstructionOrFact(llm, words) : undefined;
    return rememberedFact(words, asked === 'instruction');
  }

  /**
   * The person moves a memory between instruction and fact (the answer's card, Persona). One that
   * came from a "remember" is written again from the words said; the answer that made it says the
   * new kind, in the same change.
   */
  async setKind(id: Id, to: 'instruction' | 'fact'): Promise<void> {
    const memory = this.memory.memories.get(id);
    if (!memory) return;
    const [source] = await this.opts.repo.getTurns(memory.sourceTurnIds.slice(0, 1));
    const said = source?.role === 'user' ? parseMemoryCommand(source.text) : undefined;
    const patch = memoryKindPatch(memory, to, said?.kind === 'remember' ? said.fact : memory.text);
    if (!patch) return;
    const change: ChangeSet = { memoryPatches: [patch] };
    const next: Memory = {
      ...memory,
      kind: patch.kind ?? memory.kind,
      text: patch.text ?? memory.text,
      subject: patch.subject ?? memory.subject,
    };
    const embedder = this.opts.getEmbedder();
    if (embedder && next.text !== memory.text) {
      // Found by its new words' meaning at once, as an edit is.
      const [vector] = await embedder.embed([memoryUnit(next).indexText ?? next.text]).catch(() => [undefined]);
      if (vector) change.vectors = [{ unitId: id, modelId: embedder.modelId, vector }];
    }
    const card = source && (await this.rememberCard(source, id));
    if (card) {
      const facts: AnswerFacts = { kind: 'remember', state: 'done', remembered: displayText(next), instruction: to === 'instruction' };
      change.turns = [{ ...card, text: answerText(facts) }];
    }
    await this.memory.applyLive(change);
  }

  /** The answer to the "remember" said in `said`, while it still names the memory. */
  private async rememberCard(said: Turn, id: Id): Promise<Turn | undefined> {
    const turns = await this.opts.repo.listTurns(said.sessionId);
    return turns.find(
      (t) => t.command?.kind === 'remember' && t.command.state === 'done' && t.index > said.index && t.usedMemory?.memoryIds.includes(id),
    );
  }

  private async remember(fact: RememberedFact, user: Turn): Promise<{ turn: Turn; change: ChangeSet }> {
    const key = duplicateKey(fact.kind, fact.subject, fact.text);
    const known = [...this.memory.memories.values()].find((m) => !isPast(m) && duplicateKey(m.kind, m.subject, m.text) === key);
    if (known) {
      const facts: AnswerFacts = { kind: 'remember', state: 'none', remembered: displayText(known) };
      return { turn: this.answerTurn(user, facts, [known.id]), change: {} };
    }
    // The user's own: `edited`, so no memorise job ever replaces it (src/store/integrity.ts).
    const memory: Memory = {
      id: `said:${user.id}`,
      kind: fact.kind,
      text: fact.text,
      subject: fact.subject,
      ...(fact.context ? { context: fact.context } : {}),
      time: user.time,
      sourceTurnIds: [user.id],
      sessionId: user.sessionId,
      edited: true,
      createdAt: this.now(),
      worthRemembering: true,
    };
    const change: ChangeSet = { memories: [memory] };
    const embedder = this.opts.getEmbedder();
    if (embedder) {
      // Found by meaning at once (else the next start's catch-up would embed it).
      const [vector] = await embedder.embed([memoryUnit(memory).indexText ?? memory.text]).catch(() => [undefined]);
      if (vector) change.vectors = [{ unitId: memory.id, modelId: embedder.modelId, vector }];
    }
    const facts: AnswerFacts = {
      kind: 'remember',
      state: 'done',
      remembered: displayText(memory),
      instruction: memory.kind === 'instruction',
    };
    return { turn: this.answerTurn(user, facts, [memory.id]), change };
  }

  /** The persona bank: the user's traits, newest first (for a forget, past ones too: they are stored). */
  private aboutMe(withPast: boolean): Memory[] {
    const traits = [...this.memory.memories.values()].filter((m) => m.kind === 'user-trait' && (withPast || !isPast(m)));
    return traits.sort(newestFirst);
  }

  /** What the user told about themselves that is still current (events, notes, instructions), newest first. */
  private toldByMe(): Memory[] {
    const about = [...this.memory.memories.values()].filter((m) => m.kind !== 'assistant-trait' && m.subject === 'user' && !isPast(m));
    return about.sort(newestFirst);
  }

  /** Memories about `about`: the retrieval of replies (words, and meaning where the search model is loaded). */
  private async find(about: string): Promise<Memory[]> {
    const embedder = this.opts.getEmbedder();
    const vector = embedder
      ? await embedder.embed([about]).then(
          ([v]) => v,
          () => undefined,
        )
      : undefined;
    const hits = this.memory.index.search(about, vector, 4 * MAX_FOUND, { kinds: ['memory'] });
    const best = Math.max(-Infinity, ...hits.map((h) => h.score.dense ?? -Infinity));
    const close = (dense: number | undefined) => dense !== undefined && dense >= DENSE_MIN && dense >= best - DENSE_SPREAD;
    return hits
      .filter((h) => (h.score.lexical ?? 0) > 0 || close(h.score.dense))
      .map((h) => this.memory.memories.get(h.unit.id))
      .filter((m): m is Memory => m !== undefined)
      .slice(0, MAX_FOUND);
  }

  /**
   * The user's own messages holding every word of `about` that no memory found came from:
   * in this chat (not memorised yet) and in past chats' passages. A fact the summary worded
   * otherwise, or not memorised yet, can be forgotten too.
   */
  private async findLines(about: string, turns: readonly Turn[], found: readonly Memory[]): Promise<Id[]> {
    const words = tokenize(about);
    if (words.length === 0) return [];
    const covered = new Set(found.flatMap((m) => m.sourceTurnIds));
    const holds = (t: Turn) => {
      if (t.role !== 'user' || covered.has(t.id) || isForgotten(t) || parseMemoryCommand(t.text)) return false;
      const own = new Set(tokenize(t.text));
      return words.every((w) => own.has(w));
    };
    const passages = this.memory.index.search(about, undefined, 4 * MAX_FOUND, { kinds: ['segment'] });
    const past = await this.opts.repo.getTurns(passages.flatMap((h) => h.unit.sourceTurnIds));
    const ids = [...turns.filter(holds), ...past.filter(holds)].map((t) => t.id);
    return [...new Set(ids)].slice(0, MAX_FOUND);
  }

  private answerTurn(user: Turn, facts: AnswerFacts, memoryIds: Id[] = [], lines: Id[] = []): Turn {
    const command: CommandAnswer = { kind: facts.kind, state: facts.state, ...(lines.length ? { lines } : {}) };
    return {
      id: newId('turn'),
      sessionId: user.sessionId,
      index: user.index + 1,
      role: 'assistant',
      text: answerText(facts),
      time: this.now(),
      status: 'complete',
      command,
      ...(memoryIds.length ? { usedMemory: listed(memoryIds) } : {}),
    };
  }

  /**
   * "Forget these n": forgets the chosen memories and messages the card asked about, with every
   * copy of them (forgetting.ts), the card saying so in the same change. Returns the undo.
   */
  async forget(cardId: Id, ids: Id[], lineIds: Id[] = []): Promise<ChangeSet | undefined> {
    const card = await this.card(cardId, 'forget', 'asked');
    const asked = new Set(card?.usedMemory?.memoryIds ?? []);
    const offered = new Set(card?.command?.lines ?? []);
    const chosen = ids.filter((id) => asked.has(id) && this.memory.memories.has(id));
    const lines = lineIds.filter((id) => offered.has(id));
    if (!card || chosen.length + lines.length === 0) return undefined;
    const counts = { kind: 'forget', count: chosen.length, messages: lines.length } as const;
    const after = this.restate(card, { ...counts, state: 'forgotten' });
    const undo = await this.memory.forgetting.forget(chosen, { turns: [after] }, lines);
    return undo && { ...undo, turns: [this.restate(card, { ...counts, state: 'undone' })] };
  }

  /** "Keep them": the card says nothing was forgotten. */
  async keep(cardId: Id): Promise<void> {
    const card = await this.card(cardId, 'forget', 'asked');
    if (card) await this.memory.applyLive({ turns: [this.restate(card, { kind: 'forget', state: 'kept' })] });
  }

  /** Undo of "remember that": the memory it made is deleted as the explorer deletes one (a tombstone). */
  async unremember(cardId: Id): Promise<void> {
    const card = await this.card(cardId, 'remember', 'done');
    const ids = card?.usedMemory?.memoryIds ?? [];
    if (card) await this.memory.deleteMemories(ids, { turns: [this.restate(card, { kind: 'remember', state: 'undone' })] });
  }

  /** Undo of a forget: the change `forget` returned. */
  async undo(change: ChangeSet): Promise<void> {
    await this.memory.applyLive(change);
  }

  private async card(id: Id, kind: CommandAnswer['kind'], state: CommandAnswer['state']): Promise<Turn | undefined> {
    const [turn] = await this.opts.repo.getTurns([id]);
    return turn?.command?.kind === kind && turn.command.state === state ? turn : undefined;
  }

  /** The answer in a new state: its words from that state; it names no memory any more. */
  private restate(card: Turn, facts: AnswerFacts): Turn {
    const next: Turn = { ...card, text: answerText(facts), command: { kind: facts.kind, state: facts.state } };
    delete next.usedMemory;
    delete next.drewOn;
    return next;
  }
}
