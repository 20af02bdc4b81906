import { describe, expect, it } from 'vitest';
import { endSession, isEmptySession, isIdleExpired, sessionsToEnd, titleFrom } from '../../../src/services/chat/session-rules';
import type { Session, Turn } from '../../../src/memory/types';

const H = 3600_000;
const open = (id: string, last: number): Session => ({ id, title: id, startedAt: last - 1000, lastActivityAt: last, status: 'open' });

describe('session boundaries', () => {
  it('expires an open session only at or after the idle gap', () => {
    expect(isIdleExpired(open('a', 0), H - 1, H)).toBe(false);
    expect(isIdleExpired(open('a', 0), H, H)).toBe(true);
    expect(isIdleExpired({ ...open('a', 0), status: 'ended' }, 10 * H, H)).toBe(false);
  });

  it('a gap of 0 disables the idle rule', () => {
    expect(isIdleExpired(open('a', 0), 100 * H, 0)).toBe(false);
  });

  it('ends idle sessions and every other open session when a new chat starts', () => {
    const res = sessionsToEnd([open('old', 0), open('cur', 5 * H), open('other', 5 * H)], 5 * H + 10, H, 'cur');
    expect(res.map((r) => [r.session.id, r.reason])).toEqual([
      ['old', 'idle'],
      ['other', 'new-chat'],
    ]);
  });

  it('ends at the last activity, not at the moment of noticing', () => {
    const s = endSession(open('a', 1234), 'idle');
    expect(s.status).toBe('ended');
    expect(s.endedAt).toBe(1234);
    expect(s.endReason).toBe('idle');
  });

  it('a session with no user words is empty', () => {
    const t = (role: 'user' | 'assistant', text: string): Turn => ({
      id: text,
      sessionId: 's',
      index: 0,
      role,
      text,
      time: 0,
      status: 'complete',
    });
    expect(isEmptySession([])).toBe(true);
    expect(isEmptySession([t('user', '  ')])).toBe(true);
    expect(isEmptySession([t('user', 'hi')])).toBe(false);
  });

  it('titles come from the first line, cut at a word', () => {
    expect(titleFrom('  hello\n world ')).toBe('hello world');
    const long = titleFrom('I want to talk about my trip to Lisbon next spring and what to pack for it');
    expect(long.endsWith('…')).toBe(true);
    expect(long.length).toBeLessThanOrEqual(61);
    expect(titleFrom('')).toBe('New chat');
  });
});
