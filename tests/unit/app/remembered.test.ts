import { describe, expect, it } from 'vitest';
import { passageLines, scoreWords } from '../../../src/app/chat/remembered';

describe('passageLines', () => {
  it('names the speakers and drops markdown marks and role prefixes', () => {
    const lines = passageLines('user: I **love** my `bike`\nassistant: Great! Some tips:\n- check the *tyres*\nuser: thanks');
    expect(lines).toEqual([
      { speaker: 'You', text: 'I love my bike' },
      { speaker: 'Tealeaf', text: 'Great! Some tips:\n• check the tyres' },
      { speaker: 'You', text: 'thanks' },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/user:|assistant:|\*\*|`/);
  });

  it('keeps the names of imported conversations and cuts long passages', () => {
    expect(passageLines('Caroline: I went to a support group\nMelanie: How was it?')).toEqual([
      { speaker: 'Caroline', text: 'I went to a support group' },
      { speaker: 'Melanie', text: 'How was it?' },
    ]);
    const long = passageLines(`user: ${'word '.repeat(400)}`, 100);
    expect(long).toHaveLength(1);
    expect(long[0].text.length).toBeLessThanOrEqual(101);
    expect(long[0].text.endsWith('…')).toBe(true);
  });
});

describe('scoreWords', () => {
  it('says which signals matched, in words', () => {
    expect(scoreWords({ unitId: 'm', unitKind: 'memory', lexical: 0.4213, fused: 0.0328 })).toBe('same words 0.42 · overall 0.033');
    expect(scoreWords({ unitId: 'm', unitKind: 'memory', lexical: 1, dense: 0.5, fused: 0.1 })).toBe(
      'same words 1.00 · similar meaning 0.50 · overall 0.100',
    );
    expect(scoreWords({ unitId: 'm', unitKind: 'memory', topic: 2 / 3, topicRank: 1, fused: 0.016 })).toBe(
      'shared topics 0.67 · overall 0.016',
    );
  });
});
