// In-chat recall of earlier exchanges knows when a later one changed them (docs/METHOD.md 1.10, "The
// reply sees a window of its chat"): in one long chat "I live in Oslo" early and "I moved from Oslo
// to Bergen" later, both before the window; asked "where do I live now?", the old exchange is found
// by its words, and the later change must come with it, the old one marked as past and the newest as
// the current state. Run fresh (as the first reply after a reload: nothing sent before) and as a
// prompt that extends the previous request of the same chat.
import { describe, expect, it } from 'vitest';
import { enforce } from '../../support/standin';
import { ModelDouble } from '../../support/model-double';
import { MemoryGraph } from '../../../src/memory/graph';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { RefineCache } from '../../../src/memory/recall/refine';
import { prepareTurn, type DialogueTurn, type PreparedTurn } from '../../../src/memory/recall/turn';
import { withDefaults } from '../../../src/memory/settings';
import { LATEST_MARK, PAST_MARK } from '../../../src/memory/recall/chat-window';
import { T0 } from './helpers';

const FILLER = ['the', 'garden', 'river', 'coffee', 'walked', 'quietly', 'yesterday', 'because'];
const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => FILLER[(i * 7 + seed) % 8]).join(' ');

/** A chat of `n` turns with 300-word replies; `said` puts the person's own lines at given turns. */
function chat(n: number, said: Record<number, string>): DialogueTurn[] {
  return Array.from({ length: n }, (_, i) => {
    const user = i % 2 === 0;
    const text = said[i] ?? (user ? `On day ${i} I repaired bicycle number ${i} and named it Bike${i}.` : words(300, i));
    return { id: `t${i}`, role: user ? 'user' : 'assistant', text, time: T0 + i * 3_600_000 };
  });
}

async function prepare(dialogue: DialogueTurn[], sent?: PreparedTurn['sent']): Promise<PreparedTurn> {
  return prepareTurn({
    dialogue,
    now: T0 + dialogue.length * 3_600_000,
    index: createHybridIndex(),
    graph: new MemoryGraph(),
    memoriesById: new Map(),
    llm: enforce(new ModelDouble(), 'webgpu-4096'),
    settings: withDefaults({}),
    refineCache: new RefineCache(),
    seed: 1,
    sent,
  });
}

/** The reply prompt for the message at the end: fresh (after a reload), or extending the request before it. */
async function asked(dialogue: DialogueTurn[], fresh: boolean): Promise<PreparedTurn> {
  if (fresh) return prepare(dialogue);
  const before = await prepare(dialogue.slice(0, -2));
  return prepare(dialogue, before.sent);
}

/** The exchanges recalled for the newest message, each with its header line. */
function recalled(p: PreparedTurn): string[] {
  const all = p.messages.at(-1)!.content;
  const at = all.lastIndexOf('Earlier in this conversation');
  if (at < 0) return [];
  const section = all.slice(at).split('\n</memory>')[0]!;
  return section
    .split('\n')
    .slice(1)
    .join('\n')
    .split(/\n(?=\S)/);
}
const blockWith = (p: PreparedTurn, needle: RegExp) => recalled(p).find((b) => needle.test(b));
/** Whether the text is in the prompt as a message of the dialogue (not recalled). */
const asMessage = (p: PreparedTurn, text: string) => p.messages.some((m) => m.role === 'user' && m.content.endsWith(text));

const MOVES = [
  'I moved from Oslo to Bergen last week.',
  'Big news: I have relocated from Oslo to Bergen.',
  'I no longer live in Oslo, I am in Bergen now.',
  'We left Oslo and got a flat in Bergen in May.',
  'Oslo is behind me: I switched to Bergen for the new job.',
];
const QUESTIONS = ['where do I live now?', 'Which city do I live in these days?', 'Remind me where I live.'];
const OSLO = 'I live in Oslo, near the fjord.';

describe.each([true, false])('in-chat recall of a change (fresh prompt: %s)', (fresh) => {
  describe.each(MOVES)('the move told as "%s"', (move) => {
    it.each(QUESTIONS)('asked "%s" at turn 41: the move is recalled beside the old state, marked', async (question) => {
      const dialogue = [...chat(40, { 4: OSLO, 30: move }), { id: 'q', role: 'user' as const, text: question, time: T0 + 41 * 3_600_000 }];
      const p = await asked(dialogue, fresh);
      expect(p.chat.left, 'both exchanges are before the window').toBeGreaterThan(30);
      const newer = blockWith(p, /Bergen/);
      expect(newer, 'the later exchange is recalled').toBeDefined();
      expect(newer).toContain(LATEST_MARK);
      expect(p.usedMemory.earlierTurnIds).toContain('t30');
      // The old state: left out, or marked as past.
      const older = blockWith(p, /live in Oslo, near/);
      if (older) expect(older).toContain(PAST_MARK);
      // In chat order: the old state before the move.
      if (older) expect(recalled(p).indexOf(older)).toBeLessThan(recalled(p).indexOf(newer!));
    });
  });

  it('the move still in the window: the recalled old state is marked as past', async () => {
    const dialogue = [
      ...chat(40, { 4: OSLO, 38: 'I moved from Oslo to Bergen last week.' }),
      { id: 'q', role: 'user' as const, text: 'where do I live now?', time: T0 + 41 * 3_600_000 },
    ];
    const p = await asked(dialogue, fresh);
    const move = 'I moved from Oslo to Bergen last week.';
    expect(asMessage(p, move)).toBe(true);
    const older = blockWith(p, /live in Oslo, near/);
    if (older) expect(older).toContain(PAST_MARK);
    else {
      // Recalled already for the move itself, in the message that tells it (an extended prompt
      // keeps what it sent): the change follows it directly.
      const withMove = p.messages.find((m) => m.role === 'user' && m.content.endsWith(move));
      expect(withMove?.content).toMatch(/live in Oslo, near/);
    }
  });

  it('a chain of moves: the newest is the current state, the others past', async () => {
    const dialogue = [
      ...chat(40, { 4: OSLO, 16: 'I moved from Oslo to Bergen last week.', 28: 'Moved again: from Bergen to Stavanger this time.' }),
      { id: 'q', role: 'user' as const, text: 'where do I live now?', time: T0 + 41 * 3_600_000 },
    ];
    const p = await asked(dialogue, fresh);
    const newest = blockWith(p, /Stavanger/);
    expect(newest).toBeDefined();
    expect(newest).toContain(LATEST_MARK);
    for (const old of [blockWith(p, /live in Oslo, near/), blockWith(p, /Oslo to Bergen/)]) if (old) expect(old).toContain(PAST_MARK);
  });

  it.each([
    ['a later liking, no change', 'I love the fjords around Oslo.'],
    ['a later question that only mentions it', 'Should I visit Oslo again next summer?'],
    ['a later change of something else', 'I quit my job at the bakery last week.'],
  ])('%s: the old state stays unmarked', async (_, later) => {
    const dialogue = [
      ...chat(40, { 4: OSLO, 30: later }),
      { id: 'q', role: 'user' as const, text: 'where do I live now?', time: T0 + 41 * 3_600_000 },
    ];
    const p = await asked(dialogue, fresh);
    const older = blockWith(p, /live in Oslo, near/);
    expect(older, 'the old state is recalled by its words').toBeDefined();
    expect(older).not.toContain(PAST_MARK);
    expect(recalled(p).join('\n')).not.toContain(LATEST_MARK);
  });
});
