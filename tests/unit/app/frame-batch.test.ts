// A streaming reply reaches the view once per frame at most, newest text first-class.
import { describe, expect, it } from 'vitest';
import { FrameBatch } from '../../../src/app/frame-batch';

type Item = { id: string; text: string };

function setup() {
  const frames: Array<() => void> = [];
  const shown: Item[] = [];
  const batch = new FrameBatch<Item>(
    (x) => shown.push(x),
    (run) => frames.push(run),
  );
  const frame = () => frames.splice(0).forEach((run) => run());
  return { batch, shown, frame, frames };
}

describe('FrameBatch', () => {
  it('a thousand updates before a frame are shown once, as the newest', () => {
    const { batch, shown, frame, frames } = setup();
    for (let i = 1; i <= 1000; i++) batch.push({ id: 'r', text: 'x'.repeat(i) });
    expect(shown).toEqual([]);
    expect(frames).toHaveLength(1);
    frame();
    expect(shown).toEqual([{ id: 'r', text: 'x'.repeat(1000) }]);
    batch.push({ id: 'r', text: 'y' });
    frame();
    expect(shown.map((x) => x.text)).toEqual(['x'.repeat(1000), 'y']);
  });

  it('a finished item is shown at once, and the older streaming one waiting for the frame is not shown after it', () => {
    const { batch, shown, frame } = setup();
    batch.push({ id: 'r', text: 'partial' });
    batch.now({ id: 'r', text: 'final' });
    frame();
    expect(shown).toEqual([{ id: 'r', text: 'final' }]);
  });

  it('dropping forgets what waits (the whole list was replaced)', () => {
    const { batch, shown, frame } = setup();
    batch.push({ id: 'a', text: 'old' });
    batch.drop();
    frame();
    expect(shown).toEqual([]);
  });
});
