// Reading, parsing and checking a ChatGPT or Claude export off the page's thread: a 240 MB file
// froze the page 4.4 s when it was parsed there. Writes stay on the page (only src/store touches
// IndexedDB): this worker hands the checked records over in chunks.
import type { ParserReply, ParserRequest } from './parse-messages';
import { createHistoryParser } from './parse-worker-core';

const scope = self as unknown as {
  postMessage(reply: ParserReply): void;
  onmessage: ((event: MessageEvent<ParserRequest>) => void) | null;
};

const handle = createHistoryParser((reply) => scope.postMessage(reply));
scope.onmessage = (event) => void handle(event.data);
