// Every state that keeps a message in the box has its words; every state that sends has none.
import { describe, expect, it } from 'vitest';
import { sendBlock, type SendState } from '../../../src/app/chat/send-block';
import type { EngineKind } from '../../../src/app/engine-status';

const base: SendState = { text: true, tooLong: false, phase: 'idle', engine: 'ready', command: false };

describe('why a message was not sent', () => {
  it('a ready model and an idle chat send; an empty box or a too-long text say nothing here', () => {
    expect(sendBlock(base)).toBeUndefined();
    expect(sendBlock({ ...base, text: false, engine: 'none' })).toBeUndefined();
    expect(sendBlock({ ...base, tooLong: true, engine: 'none' })).toBeUndefined();
  });

  const engines: Array<[EngineKind, RegExp]> = [
    ['none', /no model is loaded.*model picker/],
    ['loading', /still loading/],
    ['unreachable', /not reachable.*Reconnect/],
  ];
  it.each(engines)('engine %s: a message waits, with what to do; a memory command goes', (engine, words) => {
    expect(sendBlock({ ...base, engine })).toMatch(words);
    expect(sendBlock({ ...base, engine, command: true })).toBeUndefined();
  });

  it('while a reply is written or the chat is saved, nothing goes, a command neither', () => {
    expect(sendBlock({ ...base, phase: 'replying', command: true })).toMatch(/press Stop/);
    expect(sendBlock({ ...base, phase: 'remembering' })).toMatch(/in a moment/);
  });
});
