// Claude's data export (conversations.json): a list of conversations, each with its messages in
// order. A message's words are in `text`, or (newer exports) in the text items of `content`.
// Pure: runs in Node.
import { z } from '../../memory/zod';
import type { Millis } from '../../memory/types';
import { usableTime, type ExportedChat, type ExportedMessage } from './chat-records';

// Only the fields Tealeaf reads are checked; senders and content types are filtered, not refused.
const contentSchema = z.object({ type: z.string(), text: z.string().nullish() });

const messageSchema = z.object({
  uuid: z.string().optional(),
  sender: z.string(),
  text: z.string().nullish(),
  content: z.array(contentSchema).nullish(),
  created_at: z.string().nullish(),
});

export const claudeConversationSchema = z.object({
  uuid: z.string().min(1),
  name: z.string().nullish(),
  created_at: z.string().nullish(),
  updated_at: z.string().nullish(),
  chat_messages: z.array(messageSchema),
});

export type ClaudeConversation = z.infer<typeof claudeConversationSchema>;
type ClaudeMessage = z.infer<typeof messageSchema>;

function fromIso(t: string | null | undefined): Millis | undefined {
  return t ? usableTime(Date.parse(t)) : undefined;
}

/** The message's words: `text`, else its text items (tool calls, thinking and files are left out). */
export function claudeText(m: ClaudeMessage): string {
  const text = (m.text ?? '').trim();
  if (text) return text;
  return (m.content ?? [])
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text!.trim())
    .filter((t) => t.length > 0)
    .join('\n\n');
}

export function claudeChat(conv: ClaudeConversation): ExportedChat {
  const messages: ExportedMessage[] = [];
  for (const m of conv.chat_messages) {
    if (m.sender !== 'human' && m.sender !== 'assistant') continue;
    const text = claudeText(m);
    if (!text) continue;
    const time = fromIso(m.created_at);
    messages.push({
      ...(m.uuid ? { id: m.uuid } : {}),
      role: m.sender === 'human' ? 'user' : 'assistant',
      text,
      ...(time !== undefined ? { time } : {}),
    });
  }
  const createdAt = fromIso(conv.created_at);
  const updatedAt = fromIso(conv.updated_at);
  return {
    id: conv.uuid,
    title: conv.name ?? '',
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
    messages,
  };
}

/** Whether a list entry looks like a Claude conversation (for telling the formats apart). */
export function looksLikeClaude(entry: Record<string, unknown>): boolean {
  return 'chat_messages' in entry;
}
