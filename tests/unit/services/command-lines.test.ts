// A memory command's own line and its answer are never model input: "forget that I hate cilantro",
// once done from the store, is not sent to the model in the same chat, nor searched with; the
// messages around it are.
import { describe, expect, it } from 'vitest';
import { dialogueOf } from '../../../src/services/chat/reply-prompt';
import type { Turn } from '../../../src/memory/types';

const turn = (index: number, role: Turn['role'], text: string, extra: Partial<Turn> = {}): Turn => ({
  id: `t${index}`,
  sessionId: 's',
  index,
  role,
  text,
  time: index,
  status: 'complete',
  ...extra,
});

describe('memory commands in the dialogue a reply sees', () => {
  it('the command and its answer are left out, in any wording the command service answered', () => {
    for (const words of ['forget that I hate cilantro', 'remember that answers should always be short', 'what do you remember about me?']) {
      const turns = [
        turn(0, 'user', 'I cooked soup today'),
        turn(1, 'assistant', 'Lovely!'),
        turn(2, 'user', words),
        turn(3, 'assistant', 'Done.', { command: { kind: 'forget', state: 'done' } as Turn['command'] }),
        turn(4, 'user', 'What should I cook tomorrow?'),
      ];
      expect(dialogueOf(turns).map((t) => t.text)).toEqual(['I cooked soup today', 'Lovely!', 'What should I cook tomorrow?']);
    }
  });

  it('an ordinary message that mentions forgetting is kept', () => {
    const turns = [turn(0, 'user', 'I always forget my keys'), turn(1, 'assistant', 'Try a hook by the door.')];
    expect(dialogueOf(turns)).toHaveLength(2);
  });
});
