// A generated ChatGPT conversations.json of about `mb` megabytes, for the large-import e2e test
// and the freeze bench (bench/history-freeze.mjs). Real exports' shape: a tree of message nodes
// per chat (a hidden context node, a regenerated reply on a side branch), each message with the
// fields an export carries. Deterministic (a seeded generator): the same size gives the same file.
const WORDS =
  'garden trip sister coffee painting concert dog hike beach exam project recipe bakery guitar novel museum marathon camping violin school promotion wedding cousin puppy kayak the a and with about my we'.split(
    ' ',
  );

/**
 * @param {{ mb: number, messagesPerChat?: number, wordsPerMessage?: number, seed?: number }} options
 * @returns {{ text: string, chats: number, messages: number, titles: string[] }} the file's text;
 *   chats and messages: how many the import keeps; titles in the file's order.
 */
export function makeChatgptExport({ mb, messagesPerChat = 24, wordsPerMessage = 180, seed = 11 }) {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const words = (n) => Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
  const target = mb * 1024 * 1024;
  const parts = [];
  const titles = [];
  let size = 2;
  let messages = 0;
  const T0 = Date.UTC(2022, 0, 1) / 1000;
  for (let c = 0; size < target; c++) {
    const id = `gen-${c}`;
    const start = T0 + c * 3600;
    const node = (nid, parent, children, message) => ({ id: nid, parent, children, message });
    const msg = (nid, role, text, t, extra = {}) => ({
      id: nid,
      author: { role, name: null, metadata: {} },
      create_time: t,
      update_time: null,
      content: { content_type: 'text', parts: [text] },
      status: 'finished_successfully',
      end_turn: true,
      weight: 1.0,
      metadata: {},
      recipient: 'all',
      ...extra,
    });
    const mapping = { [`${id}-root`]: node(`${id}-root`, null, [`${id}-ctx`], null) };
    mapping[`${id}-ctx`] = node(`${id}-ctx`, `${id}-root`, [`${id}-m0`], {
      ...msg(`${id}-ctx`, 'user', '', null),
      content: { content_type: 'user_editable_context', parts: [] },
      metadata: { is_visually_hidden_from_conversation: true },
    });
    let parent = `${id}-ctx`;
    for (let m = 0; m < messagesPerChat; m++) {
      const nid = `${id}-m${m}`;
      const role = m % 2 === 0 ? 'user' : 'assistant';
      const text = `${role === 'user' ? `Chat ${c} question ${m}:` : `Answer ${m}:`} ${words(wordsPerMessage)}`;
      const children = m + 1 < messagesPerChat ? [`${id}-m${m + 1}`] : [];
      // A reply regenerated once: the old one stays on a branch the import leaves out.
      if (m === 1) children.push(`${id}-old`);
      mapping[nid] = node(nid, parent, children, msg(nid, role, text, start + m * 30));
      parent = nid;
    }
    mapping[`${id}-old`] = node(`${id}-old`, `${id}-m1`, [], msg(`${id}-old`, 'assistant', `Replaced: ${words(20)}`, start + 40));
    const title = `Generated chat ${c}`;
    const conv = { title, create_time: start, update_time: start + messagesPerChat * 30, mapping, current_node: parent, id };
    const json = JSON.stringify(conv);
    parts.push(json);
    titles.push(title);
    size += json.length + 1;
    messages += messagesPerChat;
  }
  return { text: `[${parts.join(',')}]`, chats: parts.length, messages, titles };
}
