// bench:locomo's product-path options, run as a user runs the command: --endpoint has a model (the
// scripted OpenAI-compatible server on 127.0.0.1) summarise every session instead of LoCoMo's
// observations, --embedder runs the app's dense ranking with a local transformers.js model folder
// (the generated static test embedder). Mechanics only: the scripted server's memories and the
// word-hash vectors say nothing about quality.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { embeddingModelOf, localEmbedder } from '../../../bench/lib/bench-models';
import { ingestLocomo } from '../../../bench/lib/locomo-ingest';
import { parseLocomoConversation } from '../../../src/memory/locomo';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../support/fake-openai-server.mjs';

const ROOT = resolve(__dirname, '../../..');
const STATIC = join(ROOT, '.tmp', 'test-models', 'tealeaf-test', 'static-embedder');

const conversation = {
  speaker_a: 'Caroline',
  speaker_b: 'Melanie',
  session_1_date_time: '1:56 pm on 8 May, 2023',
  session_1: [
    { speaker: 'Caroline', dia_id: 'D1:1', text: 'I went to a support group yesterday and it was powerful.' },
    { speaker: 'Melanie', dia_id: 'D1:2', text: 'That sounds wonderful, I painted a sunrise last year.' },
    { speaker: 'Caroline', dia_id: 'D1:3', text: 'My grandmother gave me a necklace from Sweden.' },
  ],
  session_2_date_time: '10:37 am on 27 June, 2023',
  session_2: [
    { speaker: 'Caroline', dia_id: 'D2:1', text: 'I am researching adoption agencies now.' },
    { speaker: 'Melanie', dia_id: 'D2:2', text: 'My kids loved the pottery class.' },
  ],
  observation: {
    session_1_observation: {
      Caroline: [
        ['Caroline went to a support group.', 'D1:1'],
        ['Caroline has a necklace from her grandmother in Sweden.', 'D1:3'],
      ],
      Melanie: [['Melanie painted a sunrise.', 'D1:2']],
    },
    session_2_observation: {
      Caroline: [['Caroline is researching adoption agencies.', 'D2:1']],
      Melanie: [['Melanie took her kids to a pottery class.', 'D2:2']],
    },
  },
  qa: [
    { question: 'What is Caroline researching?', answer: 'adoption agencies', evidence: ['D2:1'], category: 4 },
    { question: 'Where is the necklace from?', answer: 'Sweden', evidence: ['D1:3'], category: 4 },
    { question: 'What did Melanie paint?', answer: 'a sunrise', evidence: ['D1:2'], category: 1 },
  ],
};

interface BenchJson {
  note: string;
  denseNote: string;
  summariser: { kind: string; model?: string; calls?: { fresh: number; cached: number } };
  embedder: { id: string; dimension: number } | null;
  questions: number;
  memories: number;
  segments: number;
  best: { mode: string; recall: Record<string, number> };
  methodNote: string;
  atDefaultBudget: {
    words: number;
    best: string;
    modes: Record<
      string,
      { recall: number; answerHit: number; recallByCategory: Record<string, number>; avgTimelines?: number; avgModelCalls?: number }
    >;
    method: Record<string, { mode: string; over: string; recall: number; answerHit: number }>;
  };
  modes: Record<string, { recall: Record<string, number>; avgModelCalls?: Record<string, number> }>;
}

let fake: FakeOpenAiServer;
let dir: string;
let data: string;
beforeAll(async () => {
  // The test models come from the global setup (tests/support/global-setup.ts).
  fake = await startFakeOpenAiServer();
  dir = mkdtempSync(join(tmpdir(), 'tealeaf-locomo-'));
  data = join(dir, 'conv.json');
  writeFileSync(data, JSON.stringify(conversation));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

// Asynchronous: the scripted server answers from this process while the command runs.
async function bench(...args: string[]): Promise<BenchJson> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'bench/locomo.ts', '--data', data, '--json', ...args],
    {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as BenchJson;
}

describe('bench:locomo --endpoint and --embedder', () => {
  it('without them: observations stand in for the summariser and retrieval is lexical, and the output says so', async () => {
    const out = await bench('--modes', 'turn,turn-dense-only');
    expect(out.summariser).toEqual({ kind: 'observations' });
    // The fusion-weight modes need vectors: without an embedder they would repeat "turn".
    expect(Object.keys(out.modes)).not.toContain('turn-dense-only');
    expect(out.embedder).toBeNull();
    expect(out.note).toMatch(/upper bound/);
    expect(out.denseNote).toMatch(/lexical/);
    // One memory per observation.
    expect(out.memories).toBe(5);
    // Refinement needs the model at reply time: without --endpoint there is no such mode, and the
    // output says what the model-free figures cannot show.
    expect(Object.keys(out.modes)).not.toContain('turn-refined');
    expect(out.methodNote).toMatch(/Model-free: links are by similarity.*no refinement/);
    // Every mode also at the app's default budget, where "best" may differ from the 300 + 1000 pick.
    expect(out.atDefaultBudget.words).toBe(300);
    expect(Object.keys(out.atDefaultBudget.modes).sort()).toEqual(Object.keys(out.modes).sort());
    expect(out.atDefaultBudget.modes.turn!.recall).toBe(out.modes.turn!.recall['300']);
    expect(Object.keys(out.atDefaultBudget.modes.turn!.recallByCategory).sort()).toEqual(['1', '4']);
    expect(['turn', 'turn-plain-topk']).toContain(out.atDefaultBudget.best);
    expect(Object.keys(out.atDefaultBudget.method)).toEqual(['timelines']);
    const t = out.atDefaultBudget.method.timelines!;
    expect(t.recall).toBeCloseTo(out.atDefaultBudget.modes.turn!.recall - out.atDefaultBudget.modes['turn-plain-topk']!.recall, 3);
    expect(out.atDefaultBudget.modes.turn!.avgModelCalls).toBe(0);
  });

  it("with --endpoint, turn-refined has the model refine every turn's timelines, cached like every call", async () => {
    const cache = join(dir, 'cache-refined');
    const args = ['--modes', 'turn', '--endpoint', fake.url, '--model', 'tiny-chat', '--cache', cache];
    const before = fake.requests.length;
    const out = await bench(...args);
    const refineCalls = fake.requests.slice(before).filter((r) => JSON.stringify(r.body).includes('timeline_notes'));
    expect(Object.keys(out.modes)).toEqual(expect.arrayContaining(['turn', 'turn-plain-topk', 'turn-refined']));
    // A memorising switch flipped means memorising again through the model: only when named.
    expect(Object.keys(out.modes)).not.toContain('turn-flip-sameSessionCandidates');
    expect(out.methodNote).toMatch(/turn-refined: the model behind --endpoint refines/);
    // Each question's turn asks the model to refine its timelines (one call per budget)...
    expect(refineCalls.length).toBeGreaterThan(0);
    expect(JSON.stringify(refineCalls[0]!.body)).toMatch(
      /What is Caroline researching\?|Where is the necklace from\?|What did Melanie paint\?/,
    );
    const refined = out.atDefaultBudget.modes['turn-refined']!;
    expect(refined.avgTimelines).toBeGreaterThan(0);
    expect(refined.avgModelCalls).toBeGreaterThan(0);
    // ...and the other modes ask nothing at reply time.
    expect(out.atDefaultBudget.modes.turn!.avgModelCalls).toBe(0);
    expect(out.modes['turn-refined']!.avgModelCalls!['1000']).toBeGreaterThan(0);
    // What timelines and refinement each add at the default budget.
    expect(out.atDefaultBudget.method.refinement).toMatchObject({ mode: 'turn-refined', over: 'turn' });
    expect(out.atDefaultBudget.method.refinement!.recall).toBeCloseTo(refined.recall - out.atDefaultBudget.modes.turn!.recall, 3);
    expect(out.atDefaultBudget.method.timelines).toMatchObject({ mode: 'turn', over: 'turn-plain-topk' });

    // Again: every call, refinement included, comes from the cache.
    const asked = fake.requests.length;
    const again = await bench(...args);
    expect(fake.requests.length).toBe(asked);
    expect(again.summariser.calls!.fresh).toBe(0);
    expect(again.atDefaultBudget).toEqual(out.atDefaultBudget);

    // Named, the memorising switch runs: the conversation is memorised (and labelled) again.
    const named = await bench(
      '--modes',
      'turn-flip-sameSessionCandidates',
      '--endpoint',
      fake.url,
      '--model',
      'tiny-chat',
      '--cache',
      cache,
    );
    expect(Object.keys(named.modes)).toContain('turn-flip-sameSessionCandidates');
  });

  it("with them: the server's model summarises every session, the test model embeds, and evidence is found through the model's memories", async () => {
    const cache = join(dir, 'cache');
    const args = [
      '--modes',
      'turn,turn-dense-only,turn-dense-x2',
      '--endpoint',
      fake.url,
      '--model',
      'tiny-chat',
      '--cache',
      cache,
      '--embedder',
      STATIC,
    ];
    const before = fake.requests.length;
    const out = await bench(...args);
    expect(out.summariser.kind).toBe('model');
    expect(out.summariser.model).toBe('tiny-chat');
    expect(out.note).toMatch(/--endpoint/);
    expect(out.embedder).toMatchObject({ id: 'tealeaf-test/static-embedder', dimension: 32 });
    expect(out.denseNote).toMatch(/static-embedder/);
    expect(Object.keys(out.modes)).toEqual(expect.arrayContaining(['turn', 'turn-dense-only', 'turn-dense-x2']));
    // The scripted summariser makes one memory of each user (Caroline) turn: 3, not LoCoMo's 5 observations.
    expect(out.memories).toBe(3);
    const summaries = fake.requests.slice(before).filter((r) => JSON.stringify(r.body).includes('session_memories'));
    expect(summaries).toHaveLength(2);
    expect(JSON.stringify(summaries[1]!.body)).toContain('researching adoption agencies');
    expect(out.summariser.calls!.fresh).toBeGreaterThanOrEqual(2);
    expect(out.questions).toBe(3);
    // The whole conversation fits in 1000 words: every evidence turn reaches the prompt.
    expect(out.best.recall['1000']).toBe(1);

    // Run again: every model call is answered from the cache, the server is not asked.
    const asked = fake.requests.length;
    const again = await bench(...args);
    expect(fake.requests.length).toBe(asked);
    // Calls repeated within the first run (the same refinement at two budgets) were already cached there.
    expect(again.summariser.calls).toEqual({ fresh: 0, cached: out.summariser.calls!.fresh + out.summariser.calls!.cached });
    expect(again.best.recall).toEqual(out.best.recall);
  });

  it('refuses --endpoint without --model, with the usage', async () => {
    await expect(bench('--endpoint', fake.url)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--endpoint needs --model/),
    });
  });
});

describe('ingesting with an embedder', () => {
  it('gives every memory and segment the vector the app would store for it', async () => {
    const embedder = localEmbedder(STATIC);
    try {
      const c = await ingestLocomo(parseLocomoConversation(conversation), 'c0', { embedder });
      const ids = [...c.memories.map((m) => m.id), ...c.segments.map((s) => s.id)];
      expect(c.memories).toHaveLength(5);
      expect(c.segments.length).toBeGreaterThanOrEqual(2);
      expect([...c.vectors!.keys()].sort()).toEqual(ids.sort());
      // Memories as the memorise job embeds them (index text), segments as re-embedding does (text).
      const m = c.memories[0]!;
      const s = c.segments[0]!;
      const [mv, sv] = await embedder.embed([memoryUnit(m).indexText ?? m.text, s.text]);
      expect(Array.from(c.vectors!.get(m.id)!)).toEqual(Array.from(mv!));
      expect(Array.from(c.vectors!.get(s.id)!)).toEqual(Array.from(sv!));
    } finally {
      embedder.dispose();
    }
  });
});

describe('the embedding model of a folder', () => {
  it("takes a catalog model's pooling and precision from its folder name", () => {
    const folder = join(dir, 'models', 'Xenova', 'bge-small-en-v1.5');
    cpSync(STATIC, folder, { recursive: true });
    const m = embeddingModelOf(folder);
    expect(m).toMatchObject({
      info: { id: 'Xenova/bge-small-en-v1.5', pooling: 'cls', dimension: 384, dtype: 'q8' },
      localModelPath: `${join(dir, 'models')}/`,
    });
    // A copy with only the full-precision weights runs those.
    rmSync(join(folder, 'onnx', 'model_quantized.onnx'));
    expect(embeddingModelOf(folder).info.dtype).toBe('fp32');
  });

  it('reads any other model folder: dimension from config.json, pooling as asked', () => {
    const other = join(dir, 'mine', 'my-embedder');
    cpSync(STATIC, other, { recursive: true });
    rmSync(join(other, 'onnx', 'model_quantized.onnx'));
    expect(embeddingModelOf(other, 'cls')).toEqual({
      info: expect.objectContaining({ id: 'my-embedder', dimension: 32, dtype: 'fp32', pooling: 'cls' }),
      localModelPath: `${join(dir, 'mine')}/`,
    });
  });

  it('says what is missing from a folder that is not a model', () => {
    mkdirSync(join(dir, 'empty'), { recursive: true });
    expect(() => embeddingModelOf(join(dir, 'empty'))).toThrow(/config\.json is missing/);
    const noWeights = join(dir, 'no-weights');
    cpSync(STATIC, noWeights, { recursive: true });
    rmSync(join(noWeights, 'onnx'), { recursive: true });
    expect(() => embeddingModelOf(noWeights)).toThrow(/neither model_quantized\.onnx nor model\.onnx/);
  });
});
