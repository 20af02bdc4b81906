// ChatGPT's data export (conversations.json): a list of conversations, each a tree of message
// nodes (`mapping`), because editing a message or regenerating a reply starts a branch. Tealeaf
// keeps the branch the user last saw: from `current_node` up to the root. Pure: runs in Node.
import { z } from '../../memory/zod';
import type { Millis } from '../../memory/types';
import { usableTime, type ExportedChat, type ExportedMessage } from './chat-records';

// Only the fields Tealeaf reads are checked; exports carry many more, and their enums grow (new
// roles, content types), so those are read as strings and filtered, not refused.
const messageSchema = z.object({
  id: z.string().optional(),
  author: z.object({ role: z.string() }),
  create_time: z.number().nullish(),
  content: z.object({ content_type: z.string(), parts: z.array(z.unknown()).nullish() }),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  recipient: z.string().nullish(),
});

const nodeSchema = z.object({
  parent: z.string().nullish(),
  children: z.array(z.string()).nullish(),
  message: messageSchema.nullish(),
});

export const chatgptConversationSchema = z
  .object({
    id: z.string().optional(),
    conversation_id: z.string().optional(),
    title: z.string().nullish(),
    create_time: z.number().nullish(),
    update_time: z.number().nullish(),
    // Read into a Map: node ids are keys from the file, and a record would drop "__proto__" (with
    // it the message and every one before it on the branch).
    mapping: z.preprocess(
      (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? new Map(Object.entries(v)) : v),
      z.map(z.string(), nodeSchema, { error: 'expected an object of message nodes' }),
    ),
    current_node: z.string().nullish(),
  })
  .refine((c) => Boolean(c.id ?? c.conversation_id), { message: 'a conversation needs an id or conversation_id' });

export type ChatgptConversation = z.infer<typeof chatgptConversationSchema>;
type ChatgptNode = z.infer<typeof nodeSchema>;
type ChatgptMessage = z.infer<typeof messageSchema>;

/** Unix seconds (a float, or null) as milliseconds. */
function fromSeconds(t: number | null | undefined): Millis | undefined {
  return typeof t === 'number' ? usableTime(t * 1000) : undefined;
}

/** Without a usable current_node: the leaf written last (a later entry wins a tie). */
function newestLeaf(nodes: Map<string, ChatgptNode>): string | undefined {
  let best: string | undefined;
  let bestTime = -Infinity;
  for (const [id, node] of nodes) {
    if ((node.children ?? []).some((c) => nodes.has(c))) continue;
    const t = fromSeconds(node.message?.create_time) ?? -Infinity;
    if (t >= bestTime) [best, bestTime] = [id, t];
  }
  return best;
}

/** The nodes from the root to the node the user last saw; a cycle in a broken file stops the walk. */
export function currentBranch(conv: ChatgptConversation): ChatgptNode[] {
  const nodes = conv.mapping;
  let id = conv.current_node && nodes.has(conv.current_node) ? conv.current_node : newestLeaf(nodes);
  const path: ChatgptNode[] = [];
  const seen = new Set<string>();
  while (id !== undefined && !seen.has(id)) {
    seen.add(id);
    const node = nodes.get(id);
    if (!node) break;
    path.push(node);
    id = node.parent ?? undefined;
  }
  return path.reverse();
}

/** The message's words as the user saw them, or undefined when it is not a shown text message. */
export function shownText(m: ChatgptMessage): string | undefined {
  const role = m.author.role;
  if (role !== 'user' && role !== 'assistant') return undefined; // system prompts, tool output
  if (m.metadata?.is_visually_hidden_from_conversation === true) return undefined;
  // An assistant message addressed to a tool (code, browsing) is a call, not a reply.
  if (m.recipient && m.recipient !== 'all') return undefined;
  const type = m.content.content_type;
  if (type !== 'text' && type !== 'multimodal_text') return undefined;
  // Images, files and audio are objects among the parts: only the strings are words.
  const text = (m.content.parts ?? [])
    .filter((p): p is string => typeof p === 'string')
    .join('\n')
    .trim();
  return text || undefined;
}

export function chatgptChat(conv: ChatgptConversation): ExportedChat {
  const messages: ExportedMessage[] = [];
  for (const node of currentBranch(conv)) {
    const m = node.message;
    const text = m ? shownText(m) : undefined;
    if (!m || text === undefined) continue;
    const time = fromSeconds(m.create_time);
    messages.push({
      ...(m.id ? { id: m.id } : {}),
      role: m.author.role === 'user' ? 'user' : 'assistant',
      text,
      ...(time !== undefined ? { time } : {}),
    });
  }
  const createdAt = fromSeconds(conv.create_time);
  const updatedAt = fromSeconds(conv.update_time);
  return {
    id: conv.id ?? conv.conversation_id ?? '',
    title: conv.title ?? '',
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
    messages,
  };
}

/** Whether a list entry looks like a ChatGPT conversation (for telling the formats apart). */
export function looksLikeChatgpt(entry: Record<string, unknown>): boolean {
  return 'mapping' in entry;
}
