// The recall gate: the LoCoMo retrieval bench's product mode ('turn') on the shared files, against
// a committed baseline (bench/baselines/recall.json). Run by `npm test` (tests/unit/bench/recall-gate.test.ts)
// and by hand: `npx tsx bench/lib/recall-gate.ts --data ../shared/data/locomo`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseLocomoConversation } from '../../src/memory/locomo';
import { ingestLocomo } from './locomo-ingest';
import { MODES } from './locomo-modes';
import { runMode } from './locomo-report';

export interface RecallBaseline {
  /** The mode's evidence recall at each budget (words). */
  turn: { '300': number; '1000': number };
  /** The files it was measured on, and how many memories they gave. */
  data: string[];
  memories: number;
  /** The commit whose code gave these figures, and why the baseline is what it is. */
  commit: string;
  why: string;
}

/** How far below the baseline a figure may fall before the gate fails. */
export const TOLERANCE = 0.01;

export const BASELINE_FILE = new URL('../baselines/recall.json', import.meta.url);

export function readBaseline(): RecallBaseline {
  return JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as RecallBaseline;
}

export interface RecallNow {
  turn: { '300': number; '1000': number };
  data: string[];
  memories: number;
  /** Memories whose every source turn is one the summary stand-in did not cite for them. */
  memoriesWithoutSources: number;
}

export async function measureRecall(dir: string): Promise<RecallNow> {
  const data = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const conversations = data.map((f) => parseLocomoConversation(JSON.parse(readFileSync(join(dir, f), 'utf8'))));
  const ingested = [];
  for (const [i, conv] of conversations.entries()) ingested.push(await ingestLocomo(conv, `c${i}`));
  const mode = MODES.find((m) => m.name === 'turn')!;
  const result = await runMode(mode, ingested, data, {});
  const memories = ingested.reduce((a, c) => a + c.memories.length, 0);
  // Every LoCoMo observation names its turns: a memory made from one cites at least one of them.
  let memoriesWithoutSources = 0;
  for (const c of ingested) {
    const cited = new Map(c.conv.sessions.flatMap((s) => s.observations.map((o) => [o.fact, new Set(o.diaIds)] as const)));
    const ext = new Map(c.turns.map((t) => [t.id, t.externalId]));
    for (const m of c.memories) {
      const want = cited.get(m.text);
      if (want && !m.sourceTurnIds.some((id) => want.has(ext.get(id) ?? ''))) memoriesWithoutSources++;
    }
  }
  return { turn: { '300': result.recall[300]!, '1000': result.recall[1000]! }, data, memories, memoriesWithoutSources };
}

/** What falls short of the baseline, in words; empty when nothing does. */
export function shortfalls(now: RecallNow, base: RecallBaseline): string[] {
  const out: string[] = [];
  for (const budget of ['300', '1000'] as const) {
    const floor = base.turn[budget] - TOLERANCE;
    if (now.turn[budget] < floor)
      out.push(
        `recall at ${budget} words is ${now.turn[budget].toFixed(3)}, below the baseline ${base.turn[budget].toFixed(3)} (measured at ${base.commit}) by more than ${TOLERANCE}`,
      );
  }
  if (now.memoriesWithoutSources > 0) out.push(`${now.memoriesWithoutSources} memories cite none of the turns they came from`);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const dir = args.includes('--data') ? args[args.indexOf('--data') + 1]! : '../shared/data/locomo';
  const now = await measureRecall(dir);
  const base = readBaseline();
  console.log(JSON.stringify({ now, baseline: base.turn, shortfalls: shortfalls(now, base) }, null, 2));
}
