// Types of the generated ChatGPT export (history-export.mjs) for TypeScript tests.
export interface GeneratedExport {
  /** The conversations.json text. */
  text: string;
  /** Chats and messages the import keeps. */
  chats: number;
  messages: number;
  /** In the file's order. */
  titles: string[];
}
export function makeChatgptExport(options: {
  mb: number;
  messagesPerChat?: number;
  wordsPerMessage?: number;
  seed?: number;
}): GeneratedExport;
