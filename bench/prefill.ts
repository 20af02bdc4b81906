// bench:prefill — how much must the engine read before a reply's first token, turn after turn?
// Every engine keeps what it read for the previous request (tests/support/standin/kv-cache.ts):
// web-llm only when the new request extends the conversation it holds exactly ('exact'), a
// llama.cpp server or Ollama the longest common token prefix ('lcp'). Chats with memory in play
// (bench/lib/prefill/chats.ts: synthetic chats of 50 and 200 turns on two memorised sessions, the
// shared LoCoMo conversations' later sessions on their memorised earlier ones) are replayed
// through the app's reply preparation (prepareTurn, each turn handed the previous turn's `sent`),
// each prompt and the call before the reply sent to both engines, each reply a scripted one of
// 200-300 words. Reported per window, chat kind and rule (from turn 8 on): tokens read anew before
// the reply, the share of reply requests that extend the previous one exactly, everything read
// and written before the first reply token, the share of turns with a call before the reply, and
// the seconds they imply at 100, 300 and 1,000 prompt tokens a second; and the in-chat recall
// checks of bench:fit (near, far, memory), so a layout that reads less but loses evidence shows.
// Usage: npm run -s bench:prefill -- --data <LoCoMo json or folder> [--json] [--windows 4096,32768] [--seed 1]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseLocomoConversation } from '../src/memory/locomo';
import { engineProfile, enforce, type EnforcedModel } from '../tests/support/standin';
import { locomoPlan, syntheticMemory, syntheticPlan, type ChatPlan } from './lib/prefill/chats';
import { EngineTee, Replier } from './lib/prefill/engines';
import { replay, type ProbeResult, type TurnRecord } from './lib/prefill/replay';
import { FROM_TURN, RATES, recallRows, ruleRow, type RecallRow, type RuleRow } from './lib/prefill/report';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const json = process.argv.includes('--json');
const data = arg('--data');
if (!data) {
  console.error('usage: npm run -s bench:prefill -- --data <LoCoMo json or folder> [--json] [--windows 4096,32768] [--seed 1]');
  process.exit(2);
}
const windows = (arg('--windows') ?? '4096,32768').split(',').map(Number);
const seed = Number(arg('--seed') ?? 1);
const files = statSync(data).isDirectory()
  ? readdirSync(data)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(data, f))
  : [data];
const log = (s: string) => {
  if (!json) console.error(s);
};

/** The engines compared: the same model family, window and cap, one rule each. */
const RULES = [
  { rule: 'exact', profile: 'webgpu-4096' },
  { rule: 'lcp', profile: 'server-4096' },
] as const;

function enginesFor(window: number): { engines: EnforcedModel[]; aside: EnforcedModel } {
  const make = (profile: string, cache?: string) =>
    enforce(new Replier(seed), engineProfile(JSON.stringify({ profile, contextTokens: window, ...(cache ? { cache } : {}) })));
  return { engines: RULES.map((r) => make(r.profile)), aside: make('webgpu-4096', 'none') };
}

/** Chat kinds: each LoCoMo conversation counts as one chat of the kind "locomo". */
const kindOf = (plan: ChatPlan) => (plan.kind.startsWith('locomo-') ? 'locomo' : plan.kind);

async function main(): Promise<void> {
  const started = Date.now();
  const memory = await syntheticMemory();
  const plans: ChatPlan[] = [syntheticPlan(50, memory), syntheticPlan(200, memory)];
  for (const f of files) plans.push(await locomoPlan(parseLocomoConversation(JSON.parse(readFileSync(f, 'utf8'))), basename(f, '.json')));
  log(
    `plans ready in ${Math.round((Date.now() - started) / 1000)} s: ${plans.map((p) => `${p.kind} (${p.lines.length} turns)`).join(', ')}`,
  );

  const rows: RuleRow[] = [];
  const recall: RecallRow[] = [];
  for (const window of windows) {
    const byKind = new Map<string, { turns: TurnRecord[]; probes: ProbeResult[] }>();
    for (const plan of plans) {
      const { engines, aside } = enginesFor(window);
      const t0 = Date.now();
      const out = await replay(plan, new EngineTee(engines), engines, aside, seed);
      log(`${window}: ${plan.kind} replayed in ${Math.round((Date.now() - t0) / 1000)} s`);
      const kind = kindOf(plan);
      const into = byKind.get(kind) ?? byKind.set(kind, { turns: [], probes: [] }).get(kind)!;
      into.turns.push(...out.turns);
      into.probes.push(...out.probes);
    }
    for (const [kind, { turns, probes }] of byKind) {
      RULES.forEach((r, i) => rows.push(ruleRow(window, kind, r.rule, i, turns)));
      recall.push(...recallRows(window, kind, probes));
    }
  }
  const result = {
    seconds: Math.round((Date.now() - started) / 1000),
    files: files.map((f) => basename(f)),
    seed,
    fromTurn: FROM_TURN,
    engines: RULES.map((r) => ({ ...r, engine: engineProfile(r.profile).engine })),
    chats: plans.map((p) => ({ kind: p.kind, about: p.about, turns: p.lines.length, probes: p.probes.length })),
    rows,
    recall,
  };
  if (json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  for (const c of result.chats) console.log(`${c.kind}: ${c.about}`);
  console.log(`\nfrom turn ${FROM_TURN} on; seconds before the first token from the medians at ${RATES.join(' / ')} tokens a second`);
  console.log(
    'window chat          rule   turns prompt  cached  readAnew p50/p90  exact  before p50/p90  pre    s readAnew         s before  cut  least limit / longest reply',
  );
  for (const r of rows)
    console.log(
      [
        String(r.window).padEnd(6),
        r.chat.padEnd(13),
        r.rule.padEnd(6),
        String(r.turns).padStart(5),
        String(r.promptMedian).padStart(6),
        String(r.cachedMedian).padStart(6),
        `${r.readAnewMedian}/${r.readAnewP90}`.padStart(17),
        r.exactShare.toFixed(3).padStart(6),
        `${r.beforeReplyMedian}/${r.beforeReplyP90}`.padStart(15),
        r.preReplyShare.toFixed(3).padStart(6),
        RATES.map((x) => r.seconds[x]!.readAnew)
          .join(' / ')
          .padStart(16),
        RATES.map((x) => r.seconds[x]!.beforeReply)
          .join(' / ')
          .padStart(16),
        String(r.cutReplies).padStart(4),
        `${r.minReplyLimit} / ${r.maxReplyTokens}`.padStart(12),
      ].join(' '),
    );
  console.log('\nin-chat recall (evidence in the prompt of a question asked aside)');
  for (const r of recall) console.log(`${r.window} ${r.chat.padEnd(13)} ${r.kind.padEnd(6)} ${r.recall.toFixed(3)} over ${r.questions}`);
  console.log(`\n${result.seconds} s`);
}

await main();
