// Test doubles for the memory core: a scripted LanguageModel that counts its calls, and small
// factories. Only used by tests.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';
import type { Edge, Memory, MemoryKind, Relation } from '../../../src/memory/types';

export interface ScriptedCall {
  kind: 'chat' | 'json';
  schemaTitle?: string;
  messages: ChatMessage[];
}

export type Script = (call: ScriptedCall) => string | Promise<string>;

export class ScriptedModel implements LanguageModel {
  readonly modelId = 'scripted-test-model';
  readonly calls: ScriptedCall[] = [];
  constructor(private readonly script: Script) {}

  count(title?: string): number {
    return title === undefined ? this.calls.length : this.calls.filter((c) => c.schemaTitle === title).length;
  }

  async chat(messages: ChatMessage[], _options?: GenerateOptions): Promise<string> {
    const call: ScriptedCall = { kind: 'chat', messages };
    this.calls.push(call);
    return this.script(call);
  }

  async json(messages: ChatMessage[], schema: JsonSchema, _options?: GenerateOptions): Promise<string> {
    const call: ScriptedCall = { kind: 'json', messages, schemaTitle: typeof schema.title === 'string' ? schema.title : undefined };
    this.calls.push(call);
    return this.script(call);
  }
}

/** Candidates as the labelling prompt lists them: index -> text. */
export function candidatesInPrompt(messages: ChatMessage[]): Map<number, string> {
  const out = new Map<number, string>();
  const text = messages.map((m) => m.content).join('\n');
  for (const m of text.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)) out.set(Number(m[1]), m[2]);
  return out;
}

export function newMemoryInPrompt(messages: ChatMessage[]): string {
  const text = messages.map((m) => m.content).join('\n');
  return /^New memory \([^)]*\): (.*)$/m.exec(text)?.[1] ?? '';
}

export const DAY = 86_400_000;
export const T0 = Date.UTC(2024, 0, 1);

export function mem(id: string, day: number, text = `memory ${id}`, kind: MemoryKind = 'event', extra: Partial<Memory> = {}): Memory {
  return {
    id,
    kind,
    text,
    time: T0 + day * DAY,
    sourceTurnIds: [],
    sessionId: `s${day}`,
    edited: false,
    createdAt: T0 + day * DAY,
    ...extra,
  };
}

export function edge(from: string, to: string, relation: Relation = 'SameTopic'): Edge {
  return { id: `edge:${from}->${to}`, from, to, relation, origin: 'model', createdAt: 0 };
}

import type { HybridIndex, IndexedUnit, SearchFilter, SearchHit } from '../../../src/memory/retrieval/types';

/** An index double that ranks units by a fixed order (or by word overlap when none is given). */
export class FixedIndex implements HybridIndex {
  private readonly units = new Map<string, IndexedUnit>();
  constructor(private readonly ranking?: string[]) {}
  get size() {
    return this.units.size;
  }
  has(id: string) {
    return this.units.has(id);
  }
  get(id: string) {
    return this.units.get(id);
  }
  upsert(unit: IndexedUnit) {
    this.units.set(unit.id, unit);
  }
  setVector() {}
  remove(id: string) {
    this.units.delete(id);
  }
  search(query: string, _v: Float32Array | undefined, k: number, filter?: SearchFilter): SearchHit[] {
    const ok = (u: IndexedUnit) => !filter?.exclude?.has(u.id) && (!filter?.kinds || filter.kinds.includes(u.kind));
    const words = new Set(
      query
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w.length > 3),
    );
    const ranked = this.ranking
      ? this.ranking.map((id) => this.units.get(id)).filter((u): u is IndexedUnit => !!u)
      : [...this.units.values()]
          .map((u) => ({
            u,
            s: u.text
              .toLowerCase()
              .split(/\W+/)
              .filter((w) => words.has(w)).length,
          }))
          .filter((x) => x.s > 0)
          .sort((a, b) => b.s - a.s || (a.u.id < b.u.id ? -1 : 1))
          .map((x) => x.u);
    return (
      ranked
        .filter(ok)
        .slice(0, k)
        // The fixed ranking stands for word matches: each hit has a lexical score (not a weak retrieval).
        .map((unit, i) => ({ unit, score: { unitId: unit.id, unitKind: unit.kind, lexical: 1 / (i + 1), fused: 1 / (i + 1) } }))
    );
  }
}

/** Everything a reply prompt sends, its messages in order (memory rides with the newest message). */
export function sentText(prepared: { messages: ChatMessage[] }): string {
  return prepared.messages.map((m) => m.content).join('\n\n');
}
