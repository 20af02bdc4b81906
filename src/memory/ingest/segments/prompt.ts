// The one model call that splits a whole session into topical segments (SeCom, docs/METHOD.md,
// section 5).
import type { ChatMessage, JsonSchema } from '../../../ports';
import type { Turn } from '../../types';

/** What the model must return: contiguous, inclusive turn ranges covering every turn once. */
export const SEGMENTATION_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    segments: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          start: { type: 'integer', minimum: 0 },
          end: { type: 'integer', minimum: 0 },
          topic: { type: 'string', maxLength: 80 },
        },
        required: ['start', 'end'],
      },
    },
  },
  required: ['segments'],
};

/** Turns longer than this are shortened in the prompt: the topic is clear from the start. */
const MAX_CHARS_PER_TURN = 400;

export function buildSegmentationMessages(turns: readonly Turn[], speakerLabel: (turn: Turn) => string = (t) => t.role): ChatMessage[] {
  const lines = turns.map((t, i) => {
    const text = t.text.length > MAX_CHARS_PER_TURN ? `${t.text.slice(0, MAX_CHARS_PER_TURN)}...` : t.text;
    return `[${i}] ${speakerLabel(t)}: ${text.replace(/\s+/g, ' ')}`;
  });
  const last = turns.length - 1;
  return [
    {
      role: 'system',
      content:
        'You divide a conversation into segments. A segment is a run of consecutive turns about one topic. ' +
        'Start a new segment where the conversation moves to a different subject. ' +
        'Segments must follow each other with no gaps and no overlaps: the first starts at turn 0, ' +
        `each next one starts right after the previous one ends, and the last ends at turn ${last}. ` +
        'Answer only with JSON: {"segments": [{"start": number, "end": number, "topic": "a few words"}]}.',
    },
    { role: 'user', content: `Turns 0 to ${last}:\n${lines.join('\n')}` },
  ];
}
