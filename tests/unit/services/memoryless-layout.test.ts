// With memory off (or in a temporary chat) a reply prompt also extends the chat's previous one, so
// the model reads only the new message; a message changed since is sent as it reads now.
import { describe, expect, it } from 'vitest';
import { memorylessPreparer } from '../../../src/services/chat/reply-prompt';
import type { LanguageModel } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';

const llm: LanguageModel = {
  modelId: 'm',
  window: { contextTokens: 4096, maxOutputTokens: 1024 },
  chat: async () => '',
  json: async () => '{}',
};
const session: Session = { id: 's', title: '', startedAt: 0, lastActivityAt: 0, status: 'open' };
const turn = (i: number, role: Turn['role'], text: string): Turn => ({
  id: `t${i}`,
  sessionId: 's',
  index: i,
  role,
  text,
  time: i,
  status: 'complete',
});
const signal = new AbortController().signal;

describe('the memoryless reply prompt', () => {
  it('extends the previous request exactly, and starts afresh when an earlier message changed', async () => {
    const p = memorylessPreparer(() => undefined);
    const history: Turn[] = [turn(0, 'user', 'Hello there')];
    const first = await p.prepare({ session, history, now: 0, llm, signal });
    history.push(turn(1, 'assistant', 'Hi! How can I help?'), turn(2, 'user', 'Tell me a joke'));
    const second = await p.prepare({ session, history, now: 0, llm, signal });
    expect(second.messages.slice(0, -1)).toEqual([...first.messages, { role: 'assistant', content: 'Hi! How can I help?' }]);
    expect(second.readTokens).toBeLessThan(second.promptTokens!);
    history[0] = { ...history[0]!, text: 'Hello again' };
    history.push(turn(3, 'assistant', 'Why did the owl...'), turn(4, 'user', 'Ha'));
    const third = await p.prepare({ session, history, now: 0, llm, signal });
    expect(third.messages[1]).toEqual({ role: 'user', content: 'Hello again' });
    expect(third.readTokens).toBe(third.promptTokens);
  });
});
