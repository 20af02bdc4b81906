// A reply's prompt with memory (docs/METHOD.md 1.6): the memory method's turn (prepareTurn) on the
// live index and graph, each chat's last request kept so the next extends it, and the chat's turns
// embedded for in-chat recall by meaning (chat-vectors.ts).
import type { Embedder } from '../../ports';
import type { Id, Memory } from '../../memory/types';
import type { HybridIndex } from '../../memory/retrieval/types';
import type { MemoryGraph } from '../../memory/graph';
import type { RefineCache } from '../../memory/recall/refine';
import type { SentChats } from '../../memory/recall/sent-chat';
import { prepareTurn } from '../../memory/recall/turn';
import type { SettingsService } from '../settings';
import { replyDialogue, type PrepareInput, type ReplyPrompt, type TurnPreparer } from '../chat/reply-prompt';
import type { ChatVectors } from './chat-vectors';

export interface ReplyDeps {
  settings: SettingsService;
  /** The prompt without memory (use switched off). */
  memoryless: TurnPreparer;
  index: HybridIndex;
  graph: MemoryGraph;
  memories: ReadonlyMap<Id, Memory>;
  embedder?: Embedder;
  refineCache: RefineCache;
  seed: number;
  sentChats: SentChats;
  chatVectors: ChatVectors;
}

export function prepareReply(deps: ReplyDeps, input: PrepareInput): Promise<ReplyPrompt> {
  // The background holds its next embedding call from now until the prompt is built: the reply
  // waits at most for the call in flight, then for its own message's embedding.
  return deps.chatVectors.during(() => prepareHeld(deps, input));
}

async function prepareHeld(deps: ReplyDeps, input: PrepareInput): Promise<ReplyPrompt> {
  const { settings, embedder, chatVectors } = deps;
  // Memory use switched off (in any tab: read from the store): the reply sees only this chat,
  // and nothing is retrieved.
  if (!(await settings.refresh()).memoryUse) return deps.memoryless.prepare(input);
  const { now, llm, signal } = input;
  const dialogue = replyDialogue(input);
  const prepared = await prepareTurn({
    dialogue,
    now,
    index: deps.index,
    graph: deps.graph,
    memoriesById: deps.memories,
    llm,
    embedder,
    settings: settings.value.memory,
    refineCache: deps.refineCache,
    seed: deps.seed,
    // The user's persona replaces the opening line; the date and memory instructions follow it.
    persona: settings.value.systemPrompt.trim() || undefined,
    signal,
    budgetScale: input.budgetScale,
    sent: deps.sentChats.get(input.session.id),
    // The chat's turns embedded so far: earlier exchanges are searched by meaning too.
    chatVectors: embedder ? chatVectors.vectorsFor(dialogue) : undefined,
  });
  deps.sentChats.set(input.session.id, prepared.sent);
  const message = dialogue.at(-1);
  if (prepared.messageVector && message?.role === 'user') chatVectors.put(message, prepared.messageVector);
  // Whatever of the chat is not embedded yet (all of it after a reload) is, in the background.
  chatVectors.note(dialogue);
  return {
    messages: prepared.messages,
    usedMemory: prepared.usedMemory,
    maxTokens: prepared.maxTokens,
    promptTokens: prepared.replyTokens,
    readTokens: prepared.readTokens,
  };
}
