// Phase I-2's model call: one call labels the relation between a new memory and all of its j
// associative candidates. Each pair is shown in time order (earlier, later) and the model names
// the relation read from the earlier memory to the later one, so the label always matches the
// direction of the edge we store (older -> newer), whichever of the two is the new memory.
import type { ChatMessage, JsonSchema } from '../../ports';
import { RELATIONS, type RelationLabel } from '../types';
import { extractJson, normaliseRelation, pickArray, readIndex } from '../llm-output';
import { promptDate } from '../text';

export interface LabelledEvent {
  text: string;
  time: number;
  /** A short excerpt of the turns the memory came from. */
  excerpt?: string;
}

export interface LabellingCandidate extends LabelledEvent {
  /** True when the candidate is older than the new memory. */
  earlier: boolean;
}

export const RELATION_LABELS: readonly RelationLabel[] = [...RELATIONS, 'None'];

export function relationLabelSchema(count: number): JsonSchema {
  return {
    title: 'relation_labels',
    type: 'object',
    properties: {
      labels: {
        type: 'array',
        minItems: count,
        maxItems: count,
        items: {
          type: 'object',
          properties: {
            candidate: { type: 'integer', minimum: 1, maximum: count },
            relation: { type: 'string', enum: [...RELATION_LABELS] },
          },
          required: ['candidate', 'relation'],
        },
      },
    },
    required: ['labels'],
  };
}

const RELATION_GUIDE = [
  'Relations, read from the EARLIER memory (A) to the LATER one (B):',
  '- Changed: what A says changed into what B says (a preference, plan or fact is now different).',
  '- Cause: A brought B about.',
  '- Reason: A happened because of B; B explains A.',
  '- HinderedBy: one of them can get in the way of the other.',
  '- React: because of A, the person feels what B says.',
  '- Want: because of A, the person wants what B says.',
  '- SameTopic: no cause or effect, but clearly the same specific subject.',
  '- None: not related enough to connect.',
].join('\n');

/** How much of each memory and excerpt the call shows (a memory the user edited may be long). */
export interface LabellingDetail {
  textChars: number;
  /** 0: no excerpts. */
  excerptChars: number;
}

/** What the call shows when the window allows it; fittedLabels shows less in a small one. */
export const FULL_DETAIL: LabellingDetail = { textChars: 400, excerptChars: 200 };

function cut(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, Math.max(0, chars - 1)).trimEnd()}…` : text;
}

function describe(label: string, e: LabelledEvent, detail: LabellingDetail): string {
  const excerpt = e.excerpt && detail.excerptChars > 0 ? `\n  said: "${cut(e.excerpt, detail.excerptChars)}"` : '';
  return `${label} (${promptDate(e.time)}): ${cut(e.text, detail.textChars)}${excerpt}`;
}

/** Tokens the answer takes: one short label per candidate. */
export function labelOutputTokens(count: number): number {
  return 24 + 24 * count;
}

/** Less detail for a smaller budget: excerpts shorten, then go, then the memories' own texts shorten. */
export function detailFor(tokens: number, full: number): LabellingDetail {
  const share = full > 0 ? tokens / full : 1;
  if (share >= 1) return FULL_DETAIL;
  if (share >= 0.7) return { textChars: 400, excerptChars: 80 };
  if (share >= 0.5) return { textChars: 300, excerptChars: 0 };
  return { textChars: Math.max(60, Math.floor(300 * share)), excerptChars: 0 };
}

export function labellingMessages(
  newMemory: LabelledEvent,
  candidates: readonly LabellingCandidate[],
  detail: LabellingDetail = FULL_DETAIL,
): ChatMessage[] {
  const lines = candidates.map((c, i) => {
    const order = c.earlier ? 'A = candidate, B = new memory' : 'A = new memory, B = candidate';
    return `${describe(`Candidate ${i + 1}`, c, detail)}\n  order: ${order}`;
  });
  return [
    {
      role: 'system',
      content:
        'You connect memories of a long conversation into timelines. For each candidate, decide how it ' +
        'relates to the new memory.\n' +
        RELATION_GUIDE +
        '\nAnswer with JSON only: one label per candidate.',
    },
    {
      role: 'user',
      content: `${describe('New memory', newMemory, detail)}\n\n${lines.join('\n\n')}`,
    },
  ];
}

export interface LabelsResult {
  /** One label per candidate, in candidate order; None where the model gave nothing usable. */
  labels: RelationLabel[];
  problems: string[];
}

/** Reads the labelling output. Unknown names and missing entries are None; bad indices dropped. */
export function parseRelationLabels(raw: unknown, count: number): LabelsResult {
  const labels: RelationLabel[] = Array.from({ length: count }, () => 'None');
  const seen = new Set<number>();
  const ex = extractJson(raw);
  const problems = [...ex.problems];
  if (!ex.found) return { labels, problems };

  const assign = (index: number | undefined, rawLabel: unknown) => {
    if (index === undefined || index < 1 || index > count) {
      problems.push(`candidate index ${String(index)} out of range`);
      return;
    }
    if (seen.has(index)) {
      problems.push(`candidate ${index} labelled twice; first kept`);
      return;
    }
    seen.add(index);
    const { label, recognised } = normaliseRelation(rawLabel);
    if (!recognised) problems.push(`unknown relation ${JSON.stringify(rawLabel)} read as None`);
    labels[index - 1] = label;
  };

  const list = pickArray(ex.value, ['labels', 'relations', 'results', 'candidates']);
  if (list) {
    list.forEach((entry, pos) => {
      if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
        const o = entry as Record<string, unknown>;
        const idx = readIndex(o.candidate ?? o.index ?? o.id ?? o.i) ?? pos + 1;
        assign(idx, o.relation ?? o.label ?? o.type);
      } else {
        assign(pos + 1, entry);
      }
    });
  } else if (ex.value && typeof ex.value === 'object') {
    // {"1": "Cause", "2": "None"}
    for (const [k, v] of Object.entries(ex.value as Record<string, unknown>)) assign(readIndex(k), v);
  } else {
    problems.push('labels not found');
  }
  return { labels, problems };
}
