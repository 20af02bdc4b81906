// A stand-in under a real engine's limits whose every call is tagged with the builder that made it,
// so bench:fit can report per builder (the JSON calls are known by their schema titles; chat calls
// by the phase the bench is in).
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';
import type { CallRecord, EnforcedModel } from '../../../tests/support/standin';

export const BUILDERS = ['reply', 'refinement', 'summary', 'labelling', 'teafarm', 'memoryless', 'segmentation'] as const;
export type Builder = (typeof BUILDERS)[number];

const BY_TITLE: Record<string, Builder> = {
  session_memories: 'summary',
  relation_labels: 'labelling',
  timeline_notes: 'refinement',
  memory_reflection: 'refinement',
  teafarm_questions: 'teafarm',
  teafarm_verdict: 'teafarm',
};

export interface TaggedCall extends CallRecord {
  builder: Builder;
  /** The output the caller asked for (its maxTokens, or the engine's cap). */
  asked: number;
}

export class TaggedModel implements LanguageModel {
  /** Chat calls count as this builder's (set by the bench as it goes). */
  phase: Builder = 'reply';
  readonly tagged: TaggedCall[] = [];

  constructor(readonly inner: EnforcedModel) {}

  get modelId(): string {
    return this.inner.modelId;
  }

  get window() {
    return this.inner.window;
  }

  private tag(from: number, fallback: Builder, options?: GenerateOptions): void {
    const asked = Math.min(options?.maxTokens ?? Infinity, this.inner.window.maxOutputTokens);
    for (const c of this.inner.calls.slice(from))
      this.tagged.push({ ...c, asked, builder: c.title ? (BY_TITLE[c.title] ?? fallback) : fallback });
  }

  async chat(messages: ChatMessage[], options?: GenerateOptions): Promise<string> {
    const from = this.inner.calls.length;
    try {
      return await this.inner.chat(messages, options);
    } finally {
      this.tag(from, this.phase, options);
    }
  }

  async json(messages: ChatMessage[], schema: JsonSchema, options?: GenerateOptions): Promise<string> {
    const from = this.inner.calls.length;
    try {
      return await this.inner.json(messages, schema, options);
    } finally {
      this.tag(from, this.phase, options);
    }
  }
}
