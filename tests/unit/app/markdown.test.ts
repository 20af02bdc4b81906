import { describe, expect, it } from 'vitest';
import { JSDOM } from 'jsdom';
import type { WindowLike } from 'dompurify';
import { renderMarkdown } from '../../../src/app/markdown';

const win = new JSDOM('').window as unknown as WindowLike;
const render = (s: string) => renderMarkdown(s, win);

describe('renderMarkdown', () => {
  it('renders ordinary markdown', () => {
    const html = render('**bold** and `code`\n\n- one\n- two');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>code</code>');
    expect(html).toContain('<li>one</li>');
  });

  const payloads = [
    '<script>window.__pwned=1</script>',
    '<img src=x onerror="window.__pwned=1">',
    '<svg onload="window.__pwned=1"></svg>',
    '[click](javascript:window.__pwned=1)',
    '<a href="javascript:alert(1)">x</a>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<div onclick="alert(1)">x</div>',
    '<style>body{display:none}</style>',
    '<form action="https://evil.example"><input name=a></form>',
    '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    '<details open ontoggle=alert(1)>',
  ];
  for (const p of payloads) {
    it(`neutralises ${p.slice(0, 40)}`, () => {
      const html = render(p);
      expect(html).not.toMatch(/<script|onerror|onload|onclick|ontoggle|javascript:|<iframe|<style|<form|<img|<svg|data:text/i);
    });
  }

  it('keeps safe links and marks them external', () => {
    const html = render('[docs](https://example.org/a)');
    expect(html).toContain('href="https://example.org/a"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });
});
