// TeaFarm (Theanine §5), the counterfactual evaluation, on a LoCoMo conversation with a model behind
// any OpenAI-compatible server: the conversation is memorised session by session as in bench:qa,
// then src/memory/eval/teafarm.ts writes counterfactual questions from the memories, asks each in a
// simulated session under each condition and has a judge decide whether the reply corrected the
// false premise. No success rate is measured on the development machines: they have no model.
// Usage:
//   npm run -s bench:teafarm -- --data <LoCoMo conversation json> --endpoint <http://127.0.0.1:11434> --model <name>
//     [--judge-model <name>] [--questions <n, default 5>] [--conditions full,no-memory,...] [--api-key <key>]
//     [--cache <dir, default .tmp/teafarm-cache>] [--json]
// Model calls and finished cases are cached on disk: an interrupted run, run again, continues.
// Progress goes to stderr; the summary (or --json) to stdout.
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseLocomoConversation } from '../src/memory/locomo';
import { withDefaults } from '../src/memory/settings';
import { CONDITION_IDS, isConditionId } from '../src/memory/eval/conditions';
import { runTeaFarm } from '../src/memory/eval/teafarm';
import { serverModel } from './lib/qa/model-cache';
import { memorise } from './lib/qa/run';
import { FileTeaFarmCache } from './lib/teafarm/file-cache';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const asJson = args.includes('--json');

function fail(message: string): never {
  console.error(`bench:teafarm: ${message}`);
  process.exit(2);
}

const data = opt('--data') ?? fail('--data <LoCoMo conversation json> is required');
const endpoint = opt('--endpoint') ?? fail('--endpoint <OpenAI-compatible base URL, e.g. http://127.0.0.1:11434> is required');
const model = opt('--model') ?? fail('--model <name> is required');
const judgeModel = opt('--judge-model') ?? model;
const apiKey = opt('--api-key') ?? process.env.OPENAI_API_KEY;
const questions = Number(opt('--questions') ?? 5);
if (!Number.isInteger(questions) || questions < 1 || questions > 20) fail('--questions must be a whole number from 1 to 20');
const conditions = (opt('--conditions') ?? CONDITION_IDS.join(',')).split(',').map((c) => c.trim());
const unknown = conditions.filter((c) => !isConditionId(c));
if (unknown.length) fail(`unknown condition(s) ${unknown.join(', ')}; known: ${CONDITION_IDS.join(', ')}`);
const cacheDir = resolve(opt('--cache') ?? '.tmp/teafarm-cache');

const server = (name: string) => serverModel({ endpoint, model: name, apiKey, cacheDir: join(cacheDir, 'calls') });
const agent = server(model);
const judge = server(judgeModel);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const STEP = { questions: 'writing questions', 'lead-in': 'lead-in', question: 'asking', judge: 'judging', done: 'done' } as const;

const name = basename(data, '.json');
const conv = parseLocomoConversation(JSON.parse(readFileSync(data, 'utf8')));
const settings = withDefaults();
let report;
let m;
try {
  m = await memorise(conv, name, agent, settings, progress);
  report = await runTeaFarm({
    llm: agent,
    judge,
    index: m.index,
    graph: m.graph,
    memoriesById: m.memories,
    settings,
    conditions: conditions.filter(isConditionId),
    questions,
    // The new session a day after the conversation's last one.
    now: m.end + 86_400_000,
    cache: new FileTeaFarmCache(join(cacheDir, 'results')),
    onProgress: (p) =>
      progress(
        p.step === 'questions'
          ? `${name}: writing questions`
          : `${name}: ${STEP[p.step]}${p.question ? ` (question ${p.question}` : ''}${p.condition ? `, ${p.condition})` : ''} · ${p.done}/${p.total} cases done`,
      ),
  });
} catch (e) {
  fail(`${name}: ${e instanceof Error ? e.message : String(e)} (finished work is cached in ${cacheDir}; run again to resume)`);
}

const out = {
  endpoint,
  model,
  judgeModel,
  conversation: { name, sessions: conv.sessions.length, memories: m.memories.size },
  status: report.status,
  questions: report.questions,
  conditions: report.conditions,
  cases: report.cases,
  problems: report.problems,
  calls: { fresh: agent.stats.fresh + judge.stats.fresh, cached: agent.stats.cached + judge.stats.cached },
};
if (asJson) {
  console.log(JSON.stringify(out, null, 2));
} else {
  console.log(`TeaFarm on ${name}: ${report.questions.length} questions, agent ${model}, judge ${judgeModel} (${report.status})`);
  for (const s of report.conditions)
    console.log(
      `  ${s.label.padEnd(34)} SR ${s.successRate === null ? '-' : s.successRate.toFixed(2)} (${s.corrected}/${s.checked} corrected${s.unjudged ? `, ${s.unjudged} unjudged` : ''}${s.errors ? `, ${s.errors} failed` : ''})`,
    );
  console.log(`calls asked ${out.calls.fresh}, from cache ${out.calls.cached}`);
}
