// bench:fit — does every model call fit the models Tealeaf ships?
// For each engine profile of the stand-in (tests/support/standin: a real tokenizer of the model's
// family, its window and output cap; the catalog's models grouped by profile), every builder of a
// model call runs over the shared LoCoMo conversations (each session memorised through the real
// job, each conversation also as one long session, TeaFarm, the import's segmentation, replies to
// its questions) and over synthetic chats of 50 and 200 turns with 300-word replies (the reply with
// and without memory every 20 turns, then the chat memorised). Reported per profile and builder:
// the largest prompt plus asked output as a share of the window, and calls over it (`overWindow`,
// must be 0: the stand-in refuses them as the engine would). Then memorising coverage of the first
// and last tenth of long sessions; tokens before a reply's first token with the call before it
// made always (as before) or only when retrieval is unsure, with recall at 300 words; what a reply
// late in a long chat still sees of the chat's start; and the pipeline under injected small-model
// faults at 10 % and 30 %. Last, the adversarial corpus (bench/lib/fit/adversarial.ts: chats of
// pasted blobs, digits, code, other scripts, emoji, URLs... generated from fixed seeds) under the
// profiles that count with the estimate alone, `overWindow` counted by the real tokenizer.
// The model is a double (tests/support/model-double.ts) that does its job: a memory per user line
// it is shown, labels by shared words, the self-reflection by the rule of bench:calls. So coverage
// measures how sessions are cut into calls, not what a real model writes; recall is LoCoMo's
// evidence turns among the prompt's sources, its memories LoCoMo's own observations (bench:locomo).
// Usage: npm run -s bench:fit -- --data <LoCoMo json or folder> [--json] [--profiles a,b] [--quick] [--only adversarial]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseLocomoConversation, type LocomoConversation } from '../src/memory/locomo';
import { CPU_MODELS, LLM_MODELS } from '../src/models/catalog';
import { engineProfile } from '../tests/support/standin';
import { BUILDERS } from './lib/fit/tagged';
import { adversarialRun, type AdversarialRow } from './lib/fit/adversarial';
import {
  builderRun,
  chatRecall,
  faultRun,
  ingestLocomo,
  replyStart,
  type ChatRecallRow,
  type FaultRun,
  type ReplyStart,
  type CoverageRow,
} from './lib/fit/runs';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const json = process.argv.includes('--json');
const quick = process.argv.includes('--quick');
const only = arg('--only');
const data = arg('--data');
if (!data) {
  console.error('usage: npm run -s bench:fit -- --data <LoCoMo json or folder> [--json] [--profiles a,b] [--quick] [--only adversarial]');
  process.exit(2);
}
const files = statSync(data).isDirectory()
  ? readdirSync(data)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(data, f))
  : [data];
const convs: LocomoConversation[] = files.map((f) => parseLocomoConversation(JSON.parse(readFileSync(f, 'utf8'))));
const log = (s: string) => {
  if (!json) console.error(s);
};

/**
 * Profiles whose builders count with the estimate alone (no countTokens, as a model server of an
 * unknown family): the stand-in's profiles with the count taken away. The stand-in still counts
 * with the real tokenizer whether a call fits.
 */
const ESTIMATE_PROFILES: Record<string, string> = {
  'webgpu-4096-estimate': JSON.stringify({ profile: 'webgpu-4096', exposesCount: false, name: 'webgpu-4096-estimate' }),
  'cpu-2048-estimate': JSON.stringify({ profile: 'cpu-2048', exposesCount: false, name: 'cpu-2048-estimate' }),
};
const specOf = (name: string) => ESTIMATE_PROFILES[name] ?? name;

/** Which catalog models each profile stands for (family, window and cap). */
const FAMILY_PROFILE: Record<string, string> = {
  'Qwen2.5': 'webgpu-4096',
  'Llama 3.2': 'llama3.2-4096',
  Qwen3: 'qwen3-4096',
  'Phi-3.5': 'phi3.5-4096',
};
const modelsOf = (profile: string) => [
  ...(ESTIMATE_PROFILES[profile] ? ['a model server of a family without a tokenizer here (counted by the estimate)'] : []),
  ...LLM_MODELS.filter((m) => FAMILY_PROFILE[m.family] === profile).map((m) => m.id),
  ...(profile === 'cpu-2048' ? CPU_MODELS.map((m) => m.id) : []),
];
const profiles = (
  arg('--profiles') ??
  (quick ? 'webgpu-4096,cpu-2048' : 'webgpu-4096,llama3.2-4096,qwen3-4096,phi3.5-4096,cpu-2048,webgpu-4096-estimate,cpu-2048-estimate')
).split(',');
/** The adversarial corpus: the default profile (exact counts) and every profile that estimates. */
const ADVERSARIAL_PROFILES = ['webgpu-4096', 'webgpu-4096-estimate', 'llama3.2-4096', 'qwen3-4096', 'phi3.5-4096', 'cpu-2048-estimate'];

interface BuilderRow {
  calls: number;
  maxShare: number;
  overWindow: number;
  /** Answers cut by the output limit (the cap, or what was left of the window). */
  cut: number;
}

async function main(): Promise<void> {
  const started = Date.now();
  const perProfile: Record<
    string,
    { models: string[]; window: number; cap: number; builders: Record<string, BuilderRow>; coverage: CoverageRow[]; failedJobs: number }
  > = {};
  const adversarial: Record<string, { window: number; cap: number; exposesCount: boolean; rows: AdversarialRow[] }> = {};
  for (const profile of quick ? ['webgpu-4096-estimate'] : ADVERSARIAL_PROFILES) {
    const p = engineProfile(specOf(profile));
    log(`adversarial corpus: ${profile}`);
    const { rows } = await adversarialRun(specOf(profile), p.contextTokens);
    adversarial[profile] = { window: p.contextTokens, cap: p.maxOutputTokens, exposesCount: p.exposesCount, rows };
  }
  if (only === 'adversarial') {
    if (json) console.log(JSON.stringify({ seconds: Math.round((Date.now() - started) / 1000), adversarial }, null, 2));
    else printAdversarial(adversarial);
    return;
  }
  for (const profile of profiles) {
    const p = engineProfile(specOf(profile));
    const run = await builderRun(specOf(profile), convs, log);
    const builders: Record<string, BuilderRow> = {};
    for (const b of BUILDERS) {
      const calls = run.calls.filter((c) => c.builder === b);
      builders[b] = {
        calls: calls.length,
        maxShare: Math.max(0, ...calls.map((c) => (c.promptTokens + c.asked) / p.contextTokens)),
        overWindow: calls.filter((c) => c.overflowed || c.promptTokens + c.asked > p.contextTokens).length,
        cut: calls.filter((c) => c.cut).length,
      };
    }
    perProfile[profile] = {
      models: modelsOf(profile),
      window: p.contextTokens,
      cap: p.maxOutputTokens,
      builders,
      coverage: run.coverage,
      failedJobs: run.failedJobs,
    };
  }
  log('reply start: ingesting LoCoMo observations');
  const ingested = await Promise.all(convs.map((c, i) => ingestLocomo(c, `q${i}`)));
  const start: Record<string, ReplyStart[]> = {};
  for (const profile of ['webgpu-4096', 'cpu-2048']) start[profile] = await replyStart(profile, ingested);
  const inChat: ChatRecallRow[] = [];
  for (const profile of ['webgpu-4096', 'cpu-2048']) inChat.push(...(await chatRecall(profile, convs)));
  const faults: FaultRun[] = [];
  for (const profile of ['webgpu-4096', 'cpu-2048']) {
    log(`faults: ${profile}`);
    const clean = await faultRun(profile, 0, convs);
    faults.push(clean.row);
    for (const rate of quick ? [0.3] : [0.1, 0.3]) faults.push((await faultRun(profile, rate, convs, clean.worlds)).row);
  }
  const result = {
    files: files.map((f) => f.split('/').at(-1)),
    seconds: Math.round((Date.now() - started) / 1000),
    profiles: perProfile,
    replyStart: start,
    faults,
    adversarial,
  };
  if (json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  for (const [profile, r] of Object.entries(perProfile)) {
    console.log(`\n${profile}: window ${r.window}, cap ${r.cap}; models: ${r.models.join(', ')}`);
    console.log('builder        calls  max share  overWindow  cut');
    for (const [b, row] of Object.entries(r.builders))
      console.log(
        `${b.padEnd(14)} ${String(row.calls).padStart(5)}  ${row.maxShare.toFixed(3).padStart(9)}  ${String(row.overWindow).padStart(10)}  ${String(row.cut).padStart(3)}`,
      );
    console.log(`jobs failed: ${r.failedJobs}`);
    for (const c of r.coverage)
      console.log(`coverage ${c.session} (${c.users} user lines): first tenth ${c.first.toFixed(3)}, last tenth ${c.last.toFixed(3)}`);
  }
  console.log('\ntokens before the first reply token (LoCoMo questions), recall at 300 words');
  for (const [profile, rows] of Object.entries(start))
    for (const r of rows)
      console.log(
        `${profile} ${r.gate.padEnd(11)} turns ${r.turns} called ${r.called} median ${r.tokensMedian} p90 ${r.tokensP90} recall ${r.recall.toFixed(3)}`,
      );
  console.log('\nrecall of the evidence turns from the chat itself (LoCoMo conversations as one chat, no memory)');
  for (const r of inChat) console.log(`${r.profile} ${r.where}: ${r.recall.toFixed(3)} over ${r.questions} questions`);
  console.log('\nfaults: profile rate jobs failed lostFacts/namedTurns corrupted traitsRetired faultsFired recall@300');
  for (const f of faults)
    console.log(
      `${f.profile} ${f.rate} ${f.jobs} ${f.failedJobs} ${f.lostFacts}/${f.namedTurns} ${f.corrupted} ${f.traitsRetired} ${f.faultsFired} ${f.recall.toFixed(3)}`,
    );
  printAdversarial(adversarial);
  console.log(`\n${result.seconds} s`);
}

function printAdversarial(
  adversarial: Record<string, { window: number; cap: number; exposesCount: boolean; rows: AdversarialRow[] }>,
): void {
  console.log('\nadversarial corpus (120-turn chats of pastes; overWindow by the real tokenizer)');
  for (const [profile, r] of Object.entries(adversarial)) {
    console.log(`${profile}: window ${r.window}, cap ${r.cap}, counted by ${r.exposesCount ? 'the tokenizer' : 'the estimate'}`);
    console.log('kind            calls  max share  overWindow  failed jobs');
    for (const row of r.rows)
      console.log(
        `${row.kind.padEnd(14)} ${String(row.calls).padStart(6)}  ${row.maxShare.toFixed(3).padStart(9)}  ${String(row.overWindow).padStart(10)}  ${String(row.failedJobs).padStart(11)}`,
      );
  }
}

await main();
