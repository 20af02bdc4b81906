// bench:prefill's parts: the scripted reply (200-300 words, the same for the same message), the
// tee that sends each call to engines differing only in their cache rule, and the figures from
// turn 8 on.
import { describe, expect, it } from 'vitest';
import { enforce } from '../../support/standin';
import { EngineTee, Replier, scriptedReply } from '../../../bench/lib/prefill/engines';
import { ruleRow } from '../../../bench/lib/prefill/report';
import type { TurnRecord } from '../../../bench/lib/prefill/replay';

describe('bench:prefill', () => {
  it('writes replies of 200 to 300 words, seeded by the message', () => {
    for (const message of ['Hello there.', 'Pepper hid under the bed again when the storm came.', '']) {
      const words = scriptedReply(message, 1).split(/\s+/).length;
      expect(words).toBeGreaterThanOrEqual(200);
      expect(words).toBeLessThanOrEqual(300);
      expect(scriptedReply(message, 1)).toBe(scriptedReply(message, 1));
    }
    expect(scriptedReply('Hello there.', 1)).not.toBe(scriptedReply('Hello there.', 2));
  });

  it('sends every call to each engine and answers with the first one’s', async () => {
    const engines = [enforce(new Replier(1), 'webgpu-4096'), enforce(new Replier(1), 'server-4096')];
    const tee = new EngineTee(engines);
    const system = { role: 'system' as const, content: 'Be kind.' };
    const first = await tee.chat([system, { role: 'user', content: 'Hi.' }]);
    await tee.chat([system, { role: 'user', content: 'Hi.' }, { role: 'assistant', content: first }, { role: 'user', content: 'More?' }]);
    await tee.json([{ role: 'user', content: 'Judge.' }], { title: 'memory_reflection', type: 'object' });
    expect(engines.map((e) => e.calls.length)).toEqual([3, 3]);
    expect(engines.map((e) => e.calls[1]!.cachedTokens > 0)).toEqual([true, true]);
  });

  it('reports medians from turn 8 on, the call before the reply counted with what it wrote', () => {
    const turns: TurnRecord[] = Array.from({ length: 12 }, (_, i) => ({
      turn: i + 1,
      extendsPrevious: i % 2 === 0,
      engines: [
        {
          pre: i % 2 === 0 ? { readAnew: 100, outputTokens: 20, promptTokens: 100 } : undefined,
          reply: {
            promptTokens: 1000,
            readAnew: i < 7 ? 1000 : 50 + i,
            cachedTokens: i < 7 ? 0 : 950 - i,
            outputTokens: i === 3 ? 600 : 300,
            limit: i === 3 ? 600 : 1024 - i,
            cut: i === 3,
          },
        },
      ],
    }));
    const row = ruleRow(4096, 'test', 'exact', 0, turns);
    expect(row.turns).toBe(5);
    expect(row.readAnewMedian).toBe(59);
    expect(row.exactShare).toBe(0.4);
    expect(row.preReplyShare).toBe(0.4);
    expect(row.beforeReplyMedian).toBe(61);
    expect(row.beforeReplyP90).toBe(180);
    expect(row.seconds['100']).toEqual({ readAnew: 0.59, beforeReply: 0.61 });
    // Replies cut at their limit, the least limit and the longest reply: over every turn.
    expect(row.cutReplies).toBe(1);
    expect(row.minReplyLimit).toBe(600);
    expect(row.maxReplyTokens).toBe(600);
  });
});
