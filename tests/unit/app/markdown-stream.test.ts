// Streaming replies render incrementally: finished blocks keep their HTML, only the
// open end is rendered again, and the result is what rendering the whole text gives.
import { describe, expect, it } from 'vitest';
import { JSDOM } from 'jsdom';
import fc from 'fast-check';
import type { WindowLike } from 'dompurify';
import { renderMarkdown } from '../../../src/app/markdown';
import { MarkdownStream, type MarkdownPart } from '../../../src/app/markdown-stream';

const win = new JSDOM('').window as unknown as WindowLike;
const joined = (parts: MarkdownPart[]) => parts.map((p) => p.html).join('');

/** Streams `text` in pieces of the given sizes (cycled); returns the parts after each update. */
function stream(text: string, sizes: number[], s = new MarkdownStream(win)): MarkdownPart[][] {
  const out: MarkdownPart[][] = [];
  for (let at = 0, k = 0; at < text.length; k++) {
    at = Math.min(text.length, at + sizes[k % sizes.length]);
    out.push(s.update(text.slice(0, at), at === text.length));
  }
  // A burst is shown over a few frames: the view updates again while the stream is behind.
  for (let frames = 0; s.behind; frames++) {
    expect(frames).toBeLessThan(text.length / 1000 + 2);
    out.push(s.update(text, true));
  }
  return out;
}

// Texts where a block changes with what follows it: setext headings, tables, loose and ordered
// lists, code fences, quotes, nested lists, hard breaks.
const SAMPLES = [
  'Title\n=====\n\nA paragraph\nwith a break.\n\nSub\n---\n\ntext',
  '| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |\n\nafter the table',
  '- one\n\n- two\n\n- three\n\nend\n\n1. a\n2. b\n\n   still b\n3. c',
  '```js\nconst a = 1;\n\n\nconst b = 2;\n```\n\nafter\n\n~~~\nx\n~~~',
  '> quoted\n> more\n\n> another\n\npara\n\n* a\n  * nested\n    * deeper\n* b',
  'Some **bold** and *it*\n`code` and [a link](https://example.org)\n\n---\n\n## Head\n\nend',
  '1) first\n2) second\n\n10. ten\n11. eleven\n\n    indented code\n\nlast',
];

describe('MarkdownStream', () => {
  for (const [i, text] of SAMPLES.entries())
    it(`ends as renderMarkdown of the whole text (sample ${i + 1}), whatever the pieces`, () => {
      for (const sizes of [[1], [2, 5, 3], [7], [13, 1], [text.length]]) {
        const updates = stream(text, sizes);
        expect(joined(updates.at(-1)!)).toBe(renderMarkdown(text, win));
      }
    });

  it('any markdown-ish text, streamed in any pieces, ends as the whole render', () => {
    const line = fc.constantFrom(
      '',
      '# h',
      'para text',
      '- item',
      '  - sub',
      '1. one',
      '> q',
      '```',
      '| a | b |',
      '| - | - |',
      '---',
      '    code',
      '***x***',
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }),
        (lines, sizes) => {
          const text = lines.join('\n');
          fc.pre(text.length > 0);
          expect(joined(stream(text, sizes).at(-1)!)).toBe(renderMarkdown(text, win));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finished blocks keep their HTML and key; the open end stays small however long the reply', () => {
    const block = (i: number) =>
      i % 3 === 0 ? `## Part ${i}` : i % 3 === 1 ? `Paragraph ${i} ${'word '.repeat(80)}` : `- a ${i}\n- b ${i}`;
    const text = Array.from({ length: 600 }, (_, i) => block(i)).join('\n\n'); // ~100 KB
    const s = new MarkdownStream(win);
    let before: MarkdownPart[] = [];
    let largestOpen = 0;
    for (const parts of stream(text, [97], s)) {
      const open = parts.at(-1)!;
      largestOpen = Math.max(largestOpen, open.html.length);
      // Every part finished before is still there, unchanged.
      const done = before.slice(0, -1);
      expect(parts.slice(0, done.length)).toEqual(done);
      before = parts;
    }
    expect(text.length).toBeGreaterThan(80_000);
    expect(largestOpen).toBeLessThan(2_000);
    expect(joined(before)).toBe(renderMarkdown(text, win));
  });

  it('a long reply arriving at once is rendered a window at a time, never all in one update', () => {
    const text = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} ${'word '.repeat(50)}`).join('\n\n'); // ~100 KB
    const s = new MarkdownStream(win);
    const text0 = (parts: MarkdownPart[]) => new JSDOM(joined(parts)).window.document.body.textContent!.length;
    const first = s.update(text, true);
    expect(s.behind).toBe(true);
    expect(text0(first)).toBeLessThan(10_000);
    const updates = [first];
    while (s.behind) updates.push(s.update(text, true));
    expect(updates.length).toBeGreaterThan(10);
    for (let i = 1; i < updates.length; i++) expect(text0(updates[i]) - text0(updates[i - 1])).toBeLessThan(10_000);
    expect(joined(updates.at(-1)!)).toBe(renderMarkdown(text, win));
    // One block longer than the window (a huge code block) is still finished, whole.
    const code = '```\n' + 'x = 1\n'.repeat(4000) + '```\n\nafter\n\nthe end';
    expect(joined(stream(code, [code.length]).at(-1)!)).toBe(renderMarkdown(code, win));
  });

  it('starts again when the text is not a continuation (another version of the reply)', () => {
    const s = new MarkdownStream(win);
    s.update('First version\n\nwith blocks\n\nand more\n\nend');
    expect(joined(s.update('Second'))).toBe(renderMarkdown('Second', win));
  });

  it('a reference definition written after its use links it once the reply is written', () => {
    const text = 'See [the docs][d].\n\nMore text\n\nAnd more\n\n[d]: https://example.org/docs';
    const updates = stream(text, [5]);
    expect(joined(updates.at(-1)!)).toBe(renderMarkdown(text, win));
    expect(joined(updates.at(-1)!)).toContain('href="https://example.org/docs"');
  });

  it('hostile HTML split over blocks and pieces stays neutralised', () => {
    const payloads = [
      '<div>\n\n<img src=x onerror="window.__pwned=1">\n\n</div>',
      '<table>\n\n<tr><td onclick="alert(1)">x</td></tr>\n\n</table>',
      '[x](javascript:alert(1))\n\n<a href="javascript:alert(1)">y</a>\n\n<script>\nalert(1)\n</script>',
      '<math><mtext>\n\n<table><mglyph><style><img src=x onerror=alert(1)>',
      '<svg>\n\n<a xlink:href="javascript:alert(1)">x</a>\n\n</svg>',
    ];
    const dom = new JSDOM('').window;
    for (const p of payloads)
      for (const parts of stream(p, [1, 3, 9])) {
        // Each part goes into its own element (Message.svelte), so each is checked alone.
        for (const part of parts) {
          const box = dom.document.createElement('div');
          box.innerHTML = part.html;
          expect(box.querySelector('script, img, svg, style, iframe, math, form')).toBeNull();
          for (const el of box.querySelectorAll('*'))
            for (const a of el.attributes) {
              expect(a.name).not.toMatch(/^on|xlink/i);
              expect(a.value).not.toMatch(/javascript:/i);
            }
        }
      }
  });
});
