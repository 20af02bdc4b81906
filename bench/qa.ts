// LoCoMo question answering end to end, with a model behind any OpenAI-compatible server
// (bench/lib/qa/run.ts says what runs). No figure is measured on the development machines: they
// have no model. Usage:
//   npm run -s bench:qa -- --data <LoCoMo json or folder> --endpoint <http://127.0.0.1:11434> --model <name>
//     [--judge-model <name>] [--api-key <key>] [--max-questions <n per conversation>]
//     [--cache <dir, default .tmp/qa-cache>] [--json]
// Every model call is cached on disk by its exact request: an interrupted run, run again, picks up
// where it stopped. Progress goes to stderr; the summary (or --json) to stdout.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseLocomoConversation } from '../src/memory/locomo';
import { serverModel } from './lib/qa/model-cache';
import { answerConversation, summarise, type ConversationResult } from './lib/qa/run';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const asJson = args.includes('--json');

function fail(message: string): never {
  console.error(`bench:qa: ${message}`);
  process.exit(2);
}

const data = opt('--data') ?? fail('--data <LoCoMo json file or folder> is required');
const endpoint = opt('--endpoint') ?? fail('--endpoint <OpenAI-compatible base URL, e.g. http://127.0.0.1:11434> is required');
const model = opt('--model') ?? fail('--model <name> is required');
const judgeModel = opt('--judge-model') ?? model;
const apiKey = opt('--api-key') ?? process.env.OPENAI_API_KEY;
const maxQuestions = opt('--max-questions') ? Number(opt('--max-questions')) : undefined;
const cacheDir = resolve(opt('--cache') ?? '.tmp/qa-cache');

const files = statSync(data).isDirectory()
  ? readdirSync(data)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(data, f))
  : [data];
if (files.length === 0) fail(`no .json files in ${data}`);

const server = (name: string) => serverModel({ endpoint, model: name, apiKey, cacheDir: join(cacheDir, 'calls') });
const answerer = server(model);
const judge = server(judgeModel);

const progress = (line: string) => process.stderr.write(`${line}\n`);
const results: ConversationResult[] = [];
for (const file of files) {
  const name = basename(file, '.json');
  const conv = parseLocomoConversation(JSON.parse(readFileSync(file, 'utf8')));
  try {
    results.push(await answerConversation(conv, name, { answerer, judge, maxQuestions, onProgress: progress }));
  } catch (e) {
    fail(`${name}: ${e instanceof Error ? e.message : String(e)} (answers so far are cached in ${cacheDir}; run again to resume)`);
  }
}

const summary = summarise(results);
const calls = { fresh: answerer.stats.fresh + judge.stats.fresh, cached: answerer.stats.cached + judge.stats.cached };
const out = {
  endpoint,
  model,
  judgeModel,
  conversations: results.map((r) => ({ name: r.name, sessions: r.sessions, memories: r.memories })),
  ...summary,
  calls,
};
if (asJson) {
  console.log(JSON.stringify(out, null, 2));
} else {
  console.log(
    `LoCoMo QA, ${summary.questions} questions (categories 1-4) over ${results.length} conversation(s); answer model ${model}, judge ${judgeModel}`,
  );
  console.log(`J ${summary.j} · F1 ${summary.f1}`);
  for (const [cat, r] of Object.entries(summary.byCategory)) console.log(`  ${cat.padEnd(12)} J ${r.j} · F1 ${r.f1} (n=${r.n})`);
  console.log(
    `memory tokens per question ~${summary.memoryTokensPerQuestion} · model calls per question ${summary.modelCallsPerQuestion} (+ ${summary.memoriseCalls} while memorising) · re-query on ${summary.requeryRate} of questions`,
  );
  console.log(
    `answer latency p50 ${summary.latencyMs.p50} ms · p95 ${summary.latencyMs.p95} ms · calls asked ${calls.fresh}, from cache ${calls.cached}`,
  );
}
