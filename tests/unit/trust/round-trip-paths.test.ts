// The round-trip property (tests/unit/store/backup.test.ts) over data the app itself makes, not
// generated records: each case imports a random Claude history (messages from a line to past the
// longest message), chats with a model server on 127.0.0.1 (replies from a line to past the
// longest message, random edits, regenerations and flips of versions), memorises everything
// with the job runner, sometimes deletes a chat or corrects a memory, then exports a backup and
// imports it into an empty store (every store equal) and into the same store (nothing added).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ChatService } from '../../../src/services/chat/chat';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { importHistory } from '../../../src/services/history/import';
import { LocalServerModel } from '../../../src/models/local-server';
import { IdbRepository } from '../../../src/store/repository';
import { exportBackup, importBackup, serializeBackup } from '../../../src/store/backup';
import { MAX_MESSAGE, MAX_MODEL_ID } from '../../../src/memory/limits';
import type { Repository } from '../../../src/ports';
import { dump, freshFactory } from '../store/helpers';
import { ScriptedModel } from '../memory/helpers';
import { startFakeOpenAiServer } from '../../support/fake-openai-server.mjs';
import { until } from '../../support/until';

const DATA = ['sessions', 'turns', 'memories', 'edges', 'segments', 'vectors', 'settings', 'tombstones'] as const;
const open = () => IdbRepository.open({ factory: freshFactory() });

// Texts from a line to past the longest message; the long ones are built once.
const LONG = `${'a long letter '.repeat(600_000 / 14)}`.trim();
const HUGE = `${'paragraph of a pasted book. '.repeat(Math.ceil((MAX_MESSAGE + 5_000) / 28))}`;
const SIZES = { short: 'a line', long: LONG, huge: HUGE } as const;
type Size = keyof typeof SIZES;
const size: fc.Arbitrary<Size> = fc.oneof(
  { arbitrary: fc.constant('short' as const), weight: 6 },
  { arbitrary: fc.constant('long' as const), weight: 1 },
  { arbitrary: fc.constant('huge' as const), weight: 1 },
);

type Op =
  | { kind: 'send'; reply: Size }
  | { kind: 'edit'; at: number }
  | { kind: 'regenerate'; at: number }
  | { kind: 'flip'; at: number; to: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('send' as const), reply: size }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(30) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('regenerate' as const), at: fc.nat(30) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('flip' as const), at: fc.nat(30), to: fc.nat(4) }), weight: 2 },
);

const usage = fc.record({
  chats: fc.array(fc.array(size, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
  ops: fc.array(op, { minLength: 2, maxLength: 24 }),
  deleteChat: fc.boolean(),
  correct: fc.boolean(),
});

function claudeExport(chats: Size[][], run: number): string {
  return JSON.stringify(
    chats.map((messages, c) => ({
      uuid: `run${run}-chat${c}`,
      name: `Chat ${c}`,
      created_at: new Date(Date.UTC(2024, 0, 1 + c)).toISOString(),
      chat_messages: messages.flatMap((s, m) => [
        {
          uuid: `q${m}`,
          sender: 'human',
          text: `${SIZES[s]} (${c}.${m})`,
          created_at: new Date(Date.UTC(2024, 0, 1 + c, 0, m)).toISOString(),
        },
        {
          uuid: `a${m}`,
          sender: 'assistant',
          text: `Noted ${c}.${m}.`,
          created_at: new Date(Date.UTC(2024, 0, 1 + c, 0, m, 30)).toISOString(),
        },
      ]),
    })),
  );
}

async function settled(repo: Repository): Promise<void> {
  await until('every job done or failed', async () => (await repo.listJobs()).every((j) => j.status === 'done' || j.status === 'failed'));
}

/** Every user message becomes an event (its first words), with the topics left to the segmenter. */
const summariser = new ScriptedModel(({ kind, schemaTitle, messages }) => {
  if (kind === 'chat') return 'ok';
  if (schemaTitle === 'session_memories') {
    const text = messages.map((m) => m.content).join('\n');
    const lines = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.{0,40})/gm)];
    return JSON.stringify({ events: lines.map((m) => ({ text: `The user said: ${m[2]}`, about: 'user', turns: [m[1]] })), topics: [] });
  }
  if (schemaTitle === 'relation_labels') return JSON.stringify({ labels: [] });
  return '{}';
});

type Fake = Awaited<ReturnType<typeof startFakeOpenAiServer>>;
let fake: Fake;
beforeAll(async () => {
  fake = await startFakeOpenAiServer({
    // A server that also offers a model whose name is longer than any the app keeps.
    models: ['tiny-chat', `made-up-${'x'.repeat(MAX_MODEL_ID)}`],
    replies: [
      // Streamed in long pieces (the server sends a word at a time): the test is about the size.
      { when: 'REPLY-long', say: `${'w'.repeat(5_000)} `.repeat(120) },
      { when: 'REPLY-huge', say: `${'x'.repeat(MAX_MESSAGE)} and more` },
    ],
  });
});
afterAll(async () => {
  await fake.close();
});

describe('round trip of what the app makes through its own paths', () => {
  it('property: history import, chat with edits and versions, server replies, memorising, deletions: the backup imports exactly', async () => {
    const seen = { cases: 0, splitMessages: 0, longPassages: 0, deepestEdits: 0, longReplies: 0, deleted: 0 };
    let run = 0;
    await fc.assert(
      fc.asyncProperty(usage, async (u) => {
        run++;
        const repo = await open();
        const [model] = await new LocalServerModel({ baseUrl: fake.url, model: '' }).listModels();
        expect(model).toBe('tiny-chat');
        const llm = new LocalServerModel({ baseUrl: fake.url, model });
        const settings = new SettingsService(repo);
        // Memorised by a scripted model: the server double echoes whole messages back in its
        // summaries, a word per event, which would only measure the double.
        const memory = new MemoryService(
          repo,
          settings,
          () => summariser,
          () => undefined,
        );
        const history = await importHistory(new Blob([claudeExport(u.chats, run)]), {
          repo,
          exclusive: (fn) => memory.exclusive(fn),
          now: () => Date.UTC(2025, 0, 1),
        });
        seen.splitMessages += history.split;

        // Saved as the app saves a streaming reply (every 250 ms).
        const chat = new ChatService({ repo, preparer: memory, getModel: () => llm, idleGapMs: () => 3_600_000 });
        let edits = 0;
        for (const [n, o] of u.ops.entries()) {
          const users = chat.turns.filter((x) => x.role === 'user');
          const replies = chat.turns.filter((x) => x.role === 'assistant');
          if (o.kind === 'send' || users.length === 0) {
            const reply = o.kind === 'send' ? o.reply : 'short';
            if (reply !== 'short') seen.longReplies++;
            await chat.send(`message ${n}${reply === 'short' ? '' : ` REPLY-${reply}`}`);
          } else if (o.kind === 'edit') {
            edits++;
            await chat.editAndResend(users[o.at % users.length]!.id, `message ${n}, edited`);
          } else if (o.kind === 'regenerate' && replies.length > 0) {
            await chat.regenerate(replies[o.at % replies.length]!.id);
          } else if (o.kind === 'flip') {
            await chat.showVersion(chat.turns[o.at % chat.turns.length]!.id, o.to);
          }
        }
        seen.deepestEdits = Math.max(seen.deepestEdits, edits);
        await chat.endCurrent();
        await memory.load();
        memory.kick();
        await settled(repo);
        await memory.load();
        if (u.correct) {
          const first = [...memory.memories.values()][0];
          if (first) await memory.editMemory(first.id, 'The user corrected this.');
        }
        if (u.deleteChat) {
          const [first] = await repo.listSessions();
          await memory.deleteSession(first!.id, { deleteMemories: run % 2 === 0 });
          seen.deleted++;
        }
        if ((await repo.listSegments()).some((s) => s.text.length > 500_000)) seen.longPassages++;

        const text = serializeBackup(await exportBackup(repo.db, { includeVectors: true, now: () => 1 }));
        const target = await open();
        await importBackup(target.db, text, { mode: 'replace' });
        expect(await dump(target.db, DATA)).toBe(await dump(repo.db, DATA));
        const again = await importBackup(repo.db, text, { mode: 'merge' });
        expect(Object.values(again.added).every((x) => x === 0)).toBe(true);
        // `repo` stays open: the job runner the deletion kicked may still read it.
        target.close();
        seen.cases++;
      }),
      { numRuns: 30 },
    );
    console.log(
      `[trust] app-made round trips: ${seen.cases} cases (${seen.splitMessages} imported messages split, ${seen.longPassages} with a passage over 500,000 characters, ${seen.longReplies} long server replies, up to ${seen.deepestEdits} edits in one chat, ${seen.deleted} with a chat deleted)`,
    );
    expect(seen.cases).toBe(30);
    expect(seen.splitMessages).toBeGreaterThan(0);
    expect(seen.longPassages).toBeGreaterThan(0);
    // A safety net, not a budget: 30 cases of CPU work, about 300 s with other work running, past
    // 600 s on a machine busier still.
  }, 1_800_000);
});
