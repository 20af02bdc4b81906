// bench:calls — how many model calls the memory method costs, replaying a LoCoMo conversation
// through the real pipeline (src/memory) with a counting scripted model:
//   - the summarising call is answered with the session's LoCoMo observations (their dia_ids
//     mapped to the transcript's turn labels) and no topics (LoCoMo has no topic annotation), so
//     the segment step uses the fallback splitter;
//   - relation labelling answers SameTopic when the two memories share enough words, else None;
//   - the refinement call answers one short note per timeline, and its self-reflection (asked in
//     the same call, also with no timelines when refinement is off) stands in for the model's
//     judgement with a rule: "enough" when at least half of the content words of the last user
//     message occur in what the call was shown, else "not enough" with the missing words as
//     keywords (so the re-query rate measures this rule on LoCoMo, not a model);
//   - the reply is a fixed sentence.
// For each session, every turn of speaker A (the "user") is first replayed through prepareTurn
// against the memory of the earlier sessions (refinement + reply = the turn's calls), then the
// session ends and is memorised (construction calls).
// Usage: npx tsx bench/calls.ts --data <path to your LoCoMo json> [--json]
//        [--similarity] (relation-aware linking off) [--no-refine] [--plain] (plain top-k)
//        [--no-requery] (self-reflection off)
//        [--no-segments] (no segmentation step, memories only in the index)
// As in the app (MemoryService), session end also segments the session along the topics of the
// summarising call (no call of its own; here none are given, so the fallback splitter runs) and
// the segments join the index that prepareTurn searches, so prompts carry segments as in the app.
// Tokens are approximated as characters / 4 (src/memory/text.ts approxTokens).
import { readFileSync } from 'node:fs';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../src/ports';
import { MemoryGraph } from '../src/memory/graph';
import { parseLocomoConversation, locomoSessionRecords, type LocomoSession } from '../src/memory/locomo';
import { createMemoriseJob, runMemoriseJob, type Segmenter } from '../src/memory/ingest/memorise';
import { segmentSession } from '../src/memory/ingest/segments';
import { segmentUnit } from '../src/memory/retrieval/units';
import { RefineCache } from '../src/memory/recall/refine';
import { withDefaults } from '../src/memory/settings';
import { prepareTurn, type DialogueTurn } from '../src/memory/recall/turn';
import { seedFrom } from '../src/memory/rng';
import { contentWords, wordOverlap } from '../src/memory/text';
import { InMemoryRepository } from '../tests/support/in-memory-repository';
import { createHybridIndex } from '../src/memory/retrieval/hybrid';
import type { Id, Memory } from '../src/memory/types';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string) => process.argv.includes(name);

const dataPath = arg('--data');
if (!dataPath) {
  console.error('usage: tsx bench/calls.ts --data <LoCoMo conversation json> [--json]');
  process.exit(2);
}

/** Scripted model that counts calls and answers from the LoCoMo data. */
class CountingModel implements LanguageModel {
  readonly modelId = 'bench-scripted';
  /** The default WebGPU model's window and cap: calls are fitted (and sessions cut into parts) as for it. */
  readonly window = { contextTokens: 4096, maxOutputTokens: 1024 };
  calls = 0;
  /** Calls that asked the self-reflection, and those that answered "not enough" with keywords. */
  reflections = 0;
  requeries = 0;
  /** Observations and turn labels of the session being memorised. */
  current: { session: LocomoSession; labelOf: Map<string, string> } | undefined;

  async chat(_messages: ChatMessage[], _o?: GenerateOptions): Promise<string> {
    this.calls++;
    return 'Thanks for telling me.';
  }

  async json(messages: ChatMessage[], schema: JsonSchema, _o?: GenerateOptions): Promise<string> {
    this.calls++;
    const prompt = messages.map((m) => m.content).join('\n');
    switch (schema.title) {
      case 'session_memories': {
        const cur = this.current;
        if (!cur) return '{"events":[],"userTraits":[],"assistantTraits":[],"topics":[]}';
        const events = cur.session.observations.map((o) => ({
          text: o.fact,
          about: o.speaker,
          turns: o.diaIds.map((d) => cur.labelOf.get(d)).filter((x): x is string => !!x),
        }));
        return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
      }
      case 'relation_labels': {
        const target = /^New memory \([^)]*\): (.*)$/m.exec(prompt)?.[1] ?? '';
        const labels = [...prompt.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)].map((m) => ({
          candidate: Number(m[1]),
          relation: wordOverlap(m[2], target) >= 0.3 ? 'SameTopic' : 'None',
        }));
        return JSON.stringify({ labels });
      }
      case 'timeline_notes':
      case 'memory_reflection': {
        const lines = prompt.split('\n').filter((l) => /^\d+\. \[/.test(l));
        const notes = lines.map((l, i) => ({
          timeline: i + 1,
          note: l
            .replace(/^\d+\. /, '')
            .split(/\s+/)
            .slice(0, 16)
            .join(' '),
        }));
        const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
        if (!('enough' in props)) return JSON.stringify({ notes });
        this.reflections++;
        const [conversation = '', ...found] = messages[1]!.content.split('\n\n');
        const asked = [...new Set(contentWords([...conversation.matchAll(/^user: (.*)$/gm)].at(-1)?.[1] ?? ''))];
        const shown = new Set(contentWords(found.join('\n')));
        const missing = asked.filter((w) => !shown.has(w));
        const enough = missing.length * 2 <= asked.length;
        if (!enough) this.requeries++;
        return JSON.stringify({ notes, enough, keywords: enough ? [] : missing.slice(0, 8) });
      }
      default:
        return '{}';
    }
  }
}

async function main(): Promise<void> {
  const conv = parseLocomoConversation(JSON.parse(readFileSync(dataPath!, 'utf8')));
  const settings = withDefaults({
    relationAwareLinking: !flag('--similarity'),
    refinement: !flag('--no-refine'),
    retrievalMode: flag('--plain') ? 'plain-topk' : 'timelines',
    reflectiveRequery: !flag('--no-requery'),
  });
  const repo = new InMemoryRepository();
  const index = createHybridIndex();
  const graph = new MemoryGraph();
  const memories = new Map<Id, Memory>();
  const llm = new CountingModel();
  const cache = new RefineCache();
  const segmenter: Segmenter | undefined = flag('--no-segments')
    ? undefined
    : ({ turns, ranges, signal }) => segmentSession(turns, { ranges, signal });

  let constructionCalls = 0;
  let turns = 0;
  let turnCalls = 0;
  let promptTokens = 0;

  for (const s of conv.sessions) {
    const { session, turns: sessionTurns } = locomoSessionRecords(conv, s);
    await repo.apply({ sessions: [{ ...session, status: 'open' }], turns: sessionTurns });

    // The chat: each user turn is answered with the memory of earlier sessions.
    const dialogue: DialogueTurn[] = [];
    for (const t of sessionTurns) {
      dialogue.push({ role: t.role, text: t.text, time: t.time });
      if (t.role !== 'user') continue;
      const before = llm.calls;
      const prepared = await prepareTurn({
        dialogue: dialogue.slice(-8),
        now: t.time,
        index,
        graph,
        memoriesById: memories,
        llm,
        settings,
        refineCache: cache,
        seed: seedFrom(session.id),
      });
      await llm.chat(prepared.messages);
      turns++;
      turnCalls += llm.calls - before;
      promptTokens += prepared.promptTokens;
    }

    // Session end: memorise.
    await repo.apply({ sessions: [session] });
    llm.current = { session: s, labelOf: new Map(sessionTurns.map((t, i) => [t.externalId!, `T${i + 1}`])) };
    const before = llm.calls;
    const job = createMemoriseJob(session.id, session.endedAt ?? session.startedAt);
    await repo.apply({ jobs: [job] });
    const out = await runMemoriseJob(job, { repo, llm, index, graph, memories, settings, segmenter, now: () => job.createdAt });
    if (out.status !== 'done') throw new Error(`session ${session.id}: job ${out.status} ${out.reason ?? out.job.lastError ?? ''}`);
    constructionCalls += llm.calls - before;
    llm.current = undefined;
    for (const seg of await repo.listSegments()) if (!index.has(seg.id)) index.upsert(segmentUnit(seg));
  }

  const result = {
    sessions: conv.sessions.length,
    newMemories: repo.memories.size,
    constructionCalls,
    turns,
    turnCalls: Number((turnCalls / Math.max(1, turns)).toFixed(3)),
    // Turns whose refinement call also judged the memory found, and turns that searched again.
    reflectionsPerTurn: Number((llm.reflections / Math.max(1, turns)).toFixed(3)),
    requeriesPerTurn: Number((llm.requeries / Math.max(1, turns)).toFixed(3)),
    promptTokensPerTurn: Math.round(promptTokens / Math.max(1, turns)),
  };
  if (flag('--json')) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`sessions ${result.sessions}, new memories ${result.newMemories}, edges ${repo.edges.size}`);
    console.log(
      `construction calls ${constructionCalls} (target <= sessions + memories = ${result.sessions + result.newMemories}; paper: ${result.sessions + 3 * result.newMemories})`,
    );
    console.log(
      `turns ${turns}, model calls per turn ${result.turnCalls} (target <= 2), self-reflection on ${result.reflectionsPerTurn} of turns, re-query on ${result.requeriesPerTurn} (no call of its own), prompt tokens per turn ~${result.promptTokensPerTurn} (chars/4)`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
