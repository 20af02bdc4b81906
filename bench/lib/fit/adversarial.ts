// bench:fit's adversarial corpus: chats whose turns are texts an English-word estimate undercounts
// (tests/support/adversarial-texts.ts: pasted base64 and hex, random ids, long and spaced digits,
// code, symbol runs, CJK and other scripts, emoji, accented Latin, URLs, whitespace layouts, a
// mix), generated from fixed seeds. Each chat of 120 turns (a user's paste, a short English reply)
// is answered at its middle and end, with memory and without, then memorised. The prompts are
// built by the profile's counter (the estimate, where the profile exposes no count); whether a
// call fits is counted by the stand-in with the real tokenizer, so `overWindow` does not depend on
// the counter that built the prompt.
import { adversarialText, TEXT_KINDS, rng, type TextKind } from '../../../tests/support/adversarial-texts';
import { enforce } from '../../../tests/support/standin';
import { ModelDouble } from '../../../tests/support/model-double';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { withDefaults } from '../../../src/memory/settings';
import { memorylessPreparer } from '../../../src/services/chat/reply-prompt';
import type { Session, Turn } from '../../../src/memory/types';
import { TaggedModel, type TaggedCall } from './tagged';
import { emptyWorld, memorise } from './world';

export const ADVERSARIAL_TURNS = 120;
const REPLIES = ['Got it, thanks.', 'I see, that is a long one!', 'Here it is again, as you asked.', 'Saved. Anything else?'];

/** One chat of pastes of `kind`: user turns of 40 to 1,200 characters, short English replies. */
export function adversarialChat(kind: TextKind, seed: number, start: number): { session: Session; turns: Turn[] } {
  const r = rng(seed);
  const id = `adv-${kind}-${seed}`;
  const turns: Turn[] = Array.from({ length: ADVERSARIAL_TURNS }, (_, i) => ({
    id: `${id}:t${i}`,
    sessionId: id,
    index: i,
    role: i % 2 === 0 ? 'user' : 'assistant',
    text: i % 2 === 0 ? adversarialText(kind, seed * 1000 + i, 40 + Math.floor(r() * 1160)) : REPLIES[i % REPLIES.length]!,
    time: start + i * 60_000,
    status: 'complete',
  }));
  const last = turns.at(-1)!.time;
  return { session: { id, title: id, startedAt: start, lastActivityAt: last, endedAt: last, status: 'ended' }, turns };
}

export interface AdversarialRow {
  kind: TextKind;
  calls: number;
  /** The largest prompt plus asked output, as a share of the window, by the real tokenizer. */
  maxShare: number;
  overWindow: number;
  /** Memorise jobs that failed (twice). */
  failedJobs: number;
}

/** The adversarial chats under one profile (a name or a JSON spec, see engineProfile). */
export async function adversarialRun(
  profile: string,
  contextTokens: number,
  seeds = [1],
): Promise<{ rows: AdversarialRow[]; calls: TaggedCall[] }> {
  const rows: AdversarialRow[] = [];
  const all: TaggedCall[] = [];
  const settings = withDefaults({ refineWhenUnsure: false });
  for (const kind of TEXT_KINDS) {
    const llm = new TaggedModel(enforce(new ModelDouble({ judge: true, traits: true }), profile));
    let failedJobs = 0;
    for (const seed of seeds) {
      const chat = adversarialChat(kind, seed, Date.UTC(2025, 0, 1));
      const world = emptyWorld();
      for (const k of [ADVERSARIAL_TURNS / 2, ADVERSARIAL_TURNS - 2]) {
        const dialogue = chat.turns.slice(0, k + 1).map((t) => ({ id: t.id, role: t.role, text: t.text, time: t.time }));
        llm.phase = 'reply';
        const prepared = await prepareTurn({
          dialogue,
          now: chat.turns[k]!.time,
          index: world.index,
          graph: world.graph,
          memoriesById: world.memories,
          llm,
          settings,
          refineCache: new RefineCache(),
          seed: 1,
        }).catch(() => undefined);
        if (prepared) await llm.chat(prepared.messages, { maxTokens: prepared.maxTokens }).catch(() => undefined);
        llm.phase = 'memoryless';
        const plain = await memorylessPreparer(() => undefined)
          .prepare({
            session: chat.session,
            history: chat.turns.slice(0, k + 1),
            now: chat.turns[k]!.time,
            llm,
            signal: new AbortController().signal,
          })
          .catch(() => undefined);
        if (plain) await llm.chat(plain.messages, { maxTokens: plain.maxTokens }).catch(() => undefined);
      }
      llm.phase = 'summary';
      const out = await memorise(world, chat.session, chat.turns, llm, withDefaults({ relationAwareLinking: false }));
      if (out.status !== 'done') failedJobs++;
    }
    const calls = llm.tagged;
    all.push(...calls);
    rows.push({
      kind,
      calls: calls.length,
      maxShare: Math.max(0, ...calls.map((c) => (c.promptTokens + c.asked) / contextTokens)),
      overWindow: calls.filter((c) => c.overflowed || c.promptTokens + c.asked > contextTokens).length,
      failedJobs,
    });
  }
  return { rows, calls: all };
}
