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

describe('renderMarkdown drops every URL but a safe link href (issue 9, defect 7)', () => {
  const URL_ATTRS = ['background', 'src', 'href', 'action', 'formaction', 'poster', 'cite', 'longdesc', 'lowsrc', 'dynsrc', 'usemap', 'xlink:href', 'ping', 'data', 'codebase', 'manifest', 'profile', 'srcset', 'icon', 'style'];
  const TAGS = ['table', 'td', 'div', 'span', 'p', 'blockquote', 'q', 'ins', 'body', 'video', 'object', 'html'];
  const hostile = ['https://evil.example/x.png', 'HTTPS://EVIL.EXAMPLE/x', '//evil.example/x', 'javascript:alert(1)', 'jav&#x61;script:alert(1)', 'data:image/png;base64,AAAA'];
  const parse = (html: string) => new JSDOM(`<body>${html}</body>`).window.document.body;

  it('no element but <a> keeps a URL attribute, whatever the tag, attribute, case or value', () => {
    for (const tag of TAGS) {
      for (const value of hostile) {
        for (const upper of [false, true]) {
          const attrs = URL_ATTRS.map((a) => `${upper ? a.toUpperCase() : a}="${value}"`).join(' ');
          const body = parse(render(`<${tag} ${attrs}>x</${tag}>`));
          for (const el of body.querySelectorAll('*')) {
            for (const a of el.getAttributeNames()) {
              const v = el.getAttribute(a) ?? '';
              const bad = (el.tagName !== 'A' || a !== 'href') && (URL_ATTRS.includes(a) || /evil|javascript|data:|url\(/i.test(v));
              expect(bad, `<${tag} ...="${value}"> kept ${a}="${v}" on <${el.tagName}>`).toBe(false);
            }
          }
        }
      }
    }
  });

  it('CSS url() cannot come through style attributes or <style>', () => {
    for (const p of ['<div style="background:url(https://evil.example/a)">x</div>', '<style>p{background:url(https://evil.example/a)}</style>', '<span style="background-image: url(//evil.example)">x</span>']) {
      expect(render(p)).not.toMatch(/url\(|evil/i);
    }
  });

  it('a link keeps http, https and mailto hrefs only', () => {
    expect(render('<a href="https://example.org/a">x</a>')).toContain('href="https://example.org/a"');
    expect(render('<a href="mailto:me@example.org">x</a>')).toContain('href="mailto:me@example.org"');
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'jav&#x09;ascript:alert(1)', 'data:text/html,x', 'vbscript:x', 'file:///etc/passwd']) {
      expect(render(`<a href="${bad}">x</a>`)).not.toContain('href=');
    }
  });
});
