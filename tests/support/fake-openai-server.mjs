// TEST DOUBLE: an OpenAI-compatible model server on 127.0.0.1 for unit, e2e and bench:qa tests.
// Chat answers stream over server-sent events, cut into pieces at awkward places (inside a line,
// inside a UTF-8 character) to exercise the client's parser. JSON calls answer by the schema's
// title like the scripted model (tests/support/scripted-model.ts), so the memory pipeline runs
// end to end. Behaviour is set per server and can be changed while it runs (`server.set({...})`):
//   allowOrigin: value of Access-Control-Allow-Origin ('*' by default; null = refuse the browser)
//   status:      answer every completion with this HTTP status (e.g. 500)
//   stall:       never answer completions (timeouts)
//   schema:      false = refuse response_format with 400, as servers without structured output do
//   schemaIgnored: true = take response_format json_schema but answer in prose, as a server that
//                ignores it lets a small model do (asked in words, the schema in the prompt, it reads)
//   malformed:   put one malformed event before the reply
//   delayMs:     pause between streamed pieces
//   eventDelayMs: pause after each whole event instead (e.g. 5 = about 200 tokens/s)
//   endless:     'json' or 'chat': after the first words, whitespace events without end (a small
//                model stuck in JSON mode; max_tokens ignored), one per eventDelayMs (or as fast as
//                the socket takes them); 'trickle' sends one space every eventDelayMs forever
//   noStream:    ignore `stream: true` and answer one application/json completion
//   maxTokensIgnored: answer whole whatever max_tokens says (otherwise a reply stops there, a word
//                a token, with finish_reason / done_reason "length", as real servers do)
//   refuseMaxTokens: answer 400 naming the context length to any request with max_tokens (vLLM)
//   modelsStall: GET /v1/models sends its headers and the start of the list, never the rest
//   models:      ids listed by GET /v1/models
//   replies:     [{ when, say }]: a chat whose last user message contains `when` answers `say`
//   answers:     { [schema title]: (text, schema) => value }: a JSON call of that title answers
//                what the function returns (undefined: as usual), e.g. a summary with traits
//   kind:        which real server to be about the model's window (null: say nothing, as a plain
//                OpenAI-compatible server): 'llama.cpp' (GET /props, POST /apply-template and
//                /tokenize; refuses a prompt of contextTokens or more with its 400), 'lmstudio'
//                (GET /api/v0/models/<id>; loads the model on first use; refuses a longer prompt
//                with its 400), 'ollama' (POST /api/show, GET /api/ps; loads on first use; CUTS a
//                longer prompt from the front, silently, as Ollama does; POST /api/chat loads it
//                with options.num_ctx), 'vllm' (max_model_len in
//                GET /v1/models; refuses with its 400)
//   contextTokens: that server's context for the model (tokens: see promptTokens below)
//   loaded:      LM Studio / Ollama: the model is loaded already (else it loads on the first chat)
//   numCtx:      Ollama: the Modelfile's PARAMETER num_ctx (null: none)
// Model lists and the questions about the model's window are logged in `probes`, not `requests`.
// `port` (start only) listens on that port: a test closes the server and starts it again on the
// same address, as a model server that was stopped and restarted.
import { createServer } from 'node:http';

const encoder = new TextEncoder();

function summarise(text) {
  const events = [];
  // "T3 [user, date]: text" in the app; "T3 [Caroline (user), date]: text" for LoCoMo transcripts.
  for (const m of text.matchAll(/^(T\d+) \[[^\]]*\buser\b[^\]]*\]: (.+)$/gm))
    events.push({ text: `The user said: ${m[2].trim()}`, about: 'user', turns: [m[1]] });
  return { events, userTraits: [], assistantTraits: [], notes: [], topics: [] };
}

function jsonAnswer(title, text, schema) {
  switch (title) {
    case 'session_memories':
      return summarise(text);
    case 'relation_labels': {
      const n = (text.match(/^Candidate \d+/gm) ?? []).length;
      return { labels: Array.from({ length: n }, (_, i) => ({ candidate: i + 1, relation: 'SameTopic' })) };
    }
    case 'timeline_notes':
    case 'memory_reflection': {
      // Notes for the timelines asked about, and the self-reflection: what was found is enough.
      const n = Number(schema?.properties?.notes?.maxItems ?? 0);
      return {
        notes: Array.from({ length: n }, (_, i) => ({ timeline: i + 1, note: 'Relevant background from earlier conversations.' })),
        enough: true,
        keywords: [],
      };
    }
    case 'answer_judgement': {
      // The mem0 judge prompt: CORRECT when the generated answer contains the gold answer.
      // The prompt's example also has a "Gold answer:" line: the real one is the last.
      const gold = [...text.matchAll(/^Gold answer: (.*)$/gm)].at(-1)?.[1]?.trim().toLowerCase() ?? '';
      const answer = [...text.matchAll(/^Generated answer: (.*)$/gm)].at(-1)?.[1]?.toLowerCase() ?? '';
      return { reasoning: 'scripted', label: gold && answer.includes(gold) ? 'CORRECT' : 'WRONG' };
    }
    case 'teafarm_questions': {
      // One counterfactual question per remembered line of the summaries.
      const max = Number(schema?.properties?.questions?.maxItems ?? 1);
      const facts = [...text.matchAll(/^- (.+)$/gm)].map((m) => m[1].replace(/^The user said: /, '').trim());
      return {
        questions: facts.slice(0, max).map((fact) => ({
          question: `Since that is all over now, what do you make of this: ${fact}?`,
          false_premise: `That it is over: ${fact}`,
          correct_answer: fact,
          lead_in: ['Hello again.'],
        })),
      };
    }
    case 'teafarm_verdict':
      return { verdict: 'fooled', reason: 'scripted' };
    default:
      return {};
  }
}

/** Splits bytes into pieces of 1-7 bytes: lines, events and characters get cut anywhere. */
function pieces(bytes) {
  const out = [];
  let i = 0;
  let k = 0;
  while (i < bytes.length) {
    const n = 1 + ((k++ * 5) % 7);
    out.push(bytes.slice(i, i + n));
    i += n;
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The fake's tokenizer: a chat marker, a word or a punctuation mark is one token. */
export const textTokens = (text) => (text.match(/<\|[a-z_]+\|>|\w+|[^\w\s]/g) ?? []).length;
/** ChatML, as Qwen's template renders messages, with the reply header. */
export const renderChat = (messages) =>
  messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
export const promptTokens = (messages) => textTokens(renderChat(messages));

/**
 * A server's prompt cache, as llama.cpp's slot and Ollama keep it: the tokens of the longest
 * common prefix with the previous prompt are reused, the rest read anew. Counted on the rendered
 * prompt, by this server's own count (not the app's).
 */
function readByCache(previous, messages) {
  const now = renderChat(messages);
  let i = 0;
  const before = previous ?? '';
  while (i < now.length && i < before.length && now[i] === before[i]) i++;
  // Whole tokens only: back to the last boundary the two share.
  while (i > 0 && /\w/.test(now[i - 1] ?? '') && /\w/.test(now[i] ?? '')) i--;
  const prompt = textTokens(now);
  const cached = Math.min(prompt, textTokens(now.slice(0, i)));
  return { rendered: now, prompt, cached, anew: prompt - cached };
}

export async function startFakeOpenAiServer({ port: wanted = 0, ...initial } = {}) {
  const config = {
    allowOrigin: '*',
    status: 0,
    stall: false,
    schema: true,
    schemaIgnored: false,
    malformed: false,
    delayMs: 0,
    eventDelayMs: 0,
    endless: false,
    noStream: false,
    modelsStall: false,
    refuseMaxTokens: false,
    maxTokensIgnored: false,
    models: ['tiny-chat', 'tiny-judge'],
    replies: [],
    kind: null,
    contextTokens: 4096,
    loaded: false,
    numCtx: null,
    ...initial,
  };
  const requests = [];
  // The last prompt this server read (the one slot of llama.cpp and Ollama), for its cache.
  let slot;
  const probes = [];
  const answer = (title, text, schema) => config.answers?.[title]?.(text, schema) ?? jsonAnswer(title, text, schema);
  const sockets = new Set();
  const server = createServer(async (req, res) => {
    const cors = () => {
      if (config.allowOrigin) {
        res.setHeader('Access-Control-Allow-Origin', config.allowOrigin);
        res.setHeader('Access-Control-Allow-Headers', 'content-type, authorization');
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      }
    };
    cors();
    if (req.method === 'OPTIONS') return res.writeHead(204).end();
    const url = new URL(req.url, 'http://127.0.0.1');
    const json = (status, value) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      probes.push({ path: url.pathname });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (config.modelsStall) return res.write('{"object":"list","data":[');
      const extra = config.kind === 'vllm' ? { max_model_len: config.contextTokens } : {};
      return res.end(JSON.stringify({ object: 'list', data: config.models.map((id) => ({ id, object: 'model', ...extra })) }));
    }
    let raw = '';
    for await (const c of req) raw += c;
    let body;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return res.writeHead(400).end('bad json');
    }
    const window = windowAnswer(config, req.method, url, body);
    if (window) {
      probes.push({ path: url.pathname, body });
      return json(window.status ?? 200, window.body);
    }
    // Ollama's own chat route (/api/chat, newline-delimited JSON) takes options.num_ctx: the context
    // it loads the model with. Its body is read as the OpenAI one's, the answer written in its lines.
    const native = config.kind === 'ollama' && req.method === 'POST' && url.pathname === '/api/chat';
    if (req.method !== 'POST' || (url.pathname !== '/v1/chat/completions' && !native)) return res.writeHead(404).end('not found');
    requests.push({ path: url.pathname, body });
    if (native) {
      const options = body.options ?? {};
      if (options.num_predict !== undefined) body.max_tokens = options.num_predict;
      if (body.format === 'json') body.response_format = { type: 'json_object' };
      else if (body.format && typeof body.format === 'object')
        body.response_format = { type: 'json_schema', json_schema: { schema: body.format } };
      if (options.num_ctx) config.contextTokens = options.num_ctx;
    }
    // Writes after the client went away must not crash the test process.
    res.on('error', () => undefined);
    if (config.stall) return; // never answers
    if (config.refuseMaxTokens && body.max_tokens !== undefined)
      return res.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { message: `This model's maximum context length is 2048 tokens. However, you requested ${body.max_tokens} tokens.` },
        }),
      );
    if (config.status) return res.writeHead(config.status, { 'content-type': 'text/plain' }).end('scripted failure');
    if (!config.models.includes(body.model))
      return res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `model "${body.model}" not found` } }));
    const format = body.response_format;
    if (format && format.type === 'json_schema' && !config.schema)
      return res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'response_format is not supported' } }));
    let messages = Array.isArray(body.messages) ? body.messages : [];
    if (config.kind) {
      const refused = contextRefusal(config, messages);
      if (refused) return json(400, refused);
      // Ollama cuts what does not fit from the front, the system prompt first, and says nothing.
      if (config.kind === 'ollama')
        while (messages.length > 1 && promptTokens(messages) >= config.contextTokens) {
          messages = messages.slice(1);
          requests.at(-1).cut = true;
        }
      config.loaded = true;
    }
    const text = messages.map((m) => m.content).join('\n');
    // What the engine reports it read: llama.cpp's timings, vLLM's usage (when asked for), Ollama's
    // prompt_eval_count; servers of no known kind report nothing.
    const cache = readByCache(slot, messages);
    slot = cache.rendered;
    requests.at(-1).read = { prompt: cache.prompt, cached: cache.cached, anew: cache.anew };
    const usage =
      config.kind === 'llama.cpp'
        ? { timings: { prompt_n: cache.anew, cache_n: cache.cached } }
        : config.kind === 'vllm' && body.stream_options?.include_usage
          ? { usage: { prompt_tokens: cache.prompt, prompt_tokens_details: { cached_tokens: cache.cached } } }
          : {};
    let reply;
    if (format?.type === 'json_schema' && config.schemaIgnored) reply = 'Sure! Here is what is worth remembering: you moved, and you cook.';
    else if (format?.type === 'json_schema')
      reply = JSON.stringify(answer(format.json_schema?.schema?.title ?? '', text, format.json_schema?.schema));
    else if (format?.type === 'json_object' || /Answer with one JSON value only/.test(text)) {
      const m = text.match(/matching this JSON schema:\n(.+)$/m);
      const schema = m ? JSON.parse(m[1]) : {};
      reply = JSON.stringify(answer(schema.title ?? '', text, schema));
    } else {
      // The person's own words: what memory adds before them (<memory>...</memory>) is not theirs.
      const lastUser = ([...messages].reverse().find((m) => m.role === 'user')?.content ?? '').replace(
        /^<memory>\n[\s\S]*?\n<\/memory>\n\n/,
        '',
      );
      const rule = config.replies.find((r) => lastUser.includes(r.when));
      reply = rule ? rule.say : `Served locally: ${lastUser} ✓`;
    }
    // Like a real server, the answer stops at max_tokens (a word here is a token), and says why.
    let finish = 'stop';
    const words = reply.match(/\S+\s*|\s+/g) ?? [];
    if (!config.maxTokensIgnored && typeof body.max_tokens === 'number' && words.length > body.max_tokens) {
      reply = words.slice(0, body.max_tokens).join('');
      finish = 'length';
    }
    if (native) {
      const line = (content, done = false) =>
        `${JSON.stringify({ model: body.model, message: { role: 'assistant', content }, done, ...(done ? { done_reason: finish, prompt_eval_count: cache.anew } : {}) })}\n`;
      if (body.stream === false) return res.writeHead(200, { 'content-type': 'application/json' }).end(line(reply, true));
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      let lines = '';
      for (const word of reply.match(/\S+\s*|\s+/g) ?? []) lines += line(word);
      lines += line('', true);
      for (const p of pieces(encoder.encode(lines))) {
        if (res.destroyed) return;
        res.write(p);
        if (config.delayMs) await sleep(config.delayMs);
      }
      return res.end();
    }
    if (config.noStream) {
      const completion = {
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: finish }],
      };
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (content) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
    const isJson = Boolean(format) || /Answer with one JSON value only/.test(text);
    if (config.endless === 'trickle' || (config.endless === 'json' && isJson) || (config.endless === 'chat' && !isJson)) {
      // Starts like an answer, then never ends (the client has to stop reading).
      if (config.endless !== 'trickle') res.write(event(reply.slice(0, 2)));
      while (!res.destroyed) {
        const more = config.endless === 'trickle' ? ' ' : ' '.repeat(64);
        if (!res.write(event(more)))
          await new Promise((ok) => {
            res.once('drain', ok);
            res.once('close', ok);
          });
        await sleep(config.eventDelayMs || 0);
      }
      return;
    }
    if (config.eventDelayMs) {
      for (const word of reply.match(/\S+\s*|\s+/g) ?? []) {
        if (res.destroyed) return;
        res.write(event(word));
        await sleep(config.eventDelayMs);
      }
      return res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\ndata: [DONE]\n\n`);
    }
    let stream = '';
    if (config.malformed) stream += 'data: {not json\n\n';
    for (const word of reply.match(/\S+\s*|\s+/g) ?? [])
      stream += `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: word } }] })}\r\n\r\n`;
    stream += `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: finish }], ...usage })}\n\ndata: [DONE]\n\n`;
    for (const p of pieces(encoder.encode(stream))) {
      if (res.destroyed) return;
      res.write(p);
      if (config.delayMs) await sleep(config.delayMs);
    }
    res.end();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(wanted, '127.0.0.1', ok);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    probes,
    set: (patch) => Object.assign(config, patch),
    close: () =>
      new Promise((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}

/** What each server answers about the model's window (its own paths), or undefined (404). */
function windowAnswer(config, method, url, body) {
  const model = config.models[0];
  switch (`${config.kind} ${method} ${url.pathname}`) {
    case 'llama.cpp GET /props':
      return { body: { default_generation_settings: { n_ctx: config.contextTokens, params: {} }, total_slots: 1, chat_template: '' } };
    case 'llama.cpp POST /apply-template':
      return { body: { prompt: renderChat(body?.messages ?? []) } };
    case 'llama.cpp POST /tokenize':
      return { body: { tokens: Array.from({ length: textTokens(String(body?.content ?? '')) }, (_, i) => i + 1) } };
    case 'ollama POST /api/show': {
      const parameters = `${config.numCtx ? `num_ctx                        ${config.numCtx}\n` : ''}stop                           "<|im_end|>"`;
      return { body: { parameters, model_info: { 'general.architecture': 'qwen2', 'qwen2.context_length': 32768 } } };
    }
    case 'ollama GET /api/ps':
      return {
        body: {
          models: config.loaded ? [{ name: `${model}:latest`, model: `${model}:latest`, context_length: config.contextTokens }] : [],
        },
      };
    default:
      break;
  }
  if (config.kind === 'lmstudio' && method === 'GET' && url.pathname.startsWith('/api/v0/models/')) {
    const id = decodeURIComponent(url.pathname.slice('/api/v0/models/'.length));
    if (!config.models.includes(id)) return { status: 404, body: { error: `Model ${id} not found` } };
    const state = config.loaded ? { state: 'loaded', loaded_context_length: config.contextTokens } : { state: 'not-loaded' };
    return { body: { id, object: 'model', type: 'llm', arch: 'qwen2', ...state, max_context_length: 32768 } };
  }
  return undefined;
}

/** The 400 a real server sends for a prompt too long for its context (Ollama sends none). */
function contextRefusal(config, messages) {
  const n = promptTokens(messages);
  const ctx = config.contextTokens;
  if (config.kind === 'llama.cpp' && n >= ctx)
    return {
      error: {
        code: 400,
        message: `request (${n} tokens) exceeds the available context size (${ctx} tokens), try increasing it`,
        type: 'exceed_context_size_error',
        n_prompt_tokens: n,
        n_ctx: ctx,
      },
    };
  if (config.kind === 'lmstudio' && n > ctx)
    return {
      error: `Trying to keep the first ${n} tokens when context the overflows. However, the model is loaded with context length of only ${ctx} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
    };
  if (config.kind === 'vllm' && n >= ctx)
    return {
      error: {
        message: `This model's maximum context length is ${ctx} tokens. However, your request has ${n} input tokens. Please reduce the length of the input messages.`,
        type: 'BadRequestError',
        code: 400,
      },
    };
  return undefined;
}
