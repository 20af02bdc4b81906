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

describe('renderMarkdown drops every URL but a safe link href', () => {
  // Every attribute that makes a browser fetch or navigate somewhere (HTML, legacy HTML, SVG,
  // MathML, microdata), plus style (CSS url()).
  const URL_ATTRS = [
    'background',
    'src',
    'href',
    'action',
    'formaction',
    'poster',
    'cite',
    'longdesc',
    'lowsrc',
    'dynsrc',
    'usemap',
    'xlink:href',
    'ping',
    'data',
    'codebase',
    'manifest',
    'profile',
    'srcset',
    'imagesrcset',
    'icon',
    'archive',
    'classid',
    'itemtype',
    'itemid',
    'datasrc',
    'xml:base',
    'style',
  ];
  // Tags the sanitiser keeps (the attribute must go, the element stay) and tags it drops.
  const KEPT = ['table', 'td', 'th', 'tr', 'div', 'span', 'p', 'blockquote', 'ol', 'li', 'pre', 'code', 'h2', 'a'];
  const DROPPED = ['img', 'video', 'object', 'body', 'q', 'ins', 'del', 'input', 'form', 'iframe', 'svg', 'image', 'math'].filter(
    (t) => !KEPT.includes(t),
  );
  // Case variants of each attribute name.
  const cases = (a: string) => [a, a.toUpperCase(), [...a].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('')];
  // Off-site and script URLs, plain, in odd case, and with the scheme entity-encoded or padded.
  const HOSTILE = [
    'https://evil.example/x.png',
    'HTTPS://EVIL.EXAMPLE/x',
    'http://evil.example/x',
    '//evil.example/x',
    '&#104;ttps://evil.example/x',
    '&#x68;&#x74;&#x74;&#x70;&#x73;&#x3a;//evil.example/x',
    'javascript:alert(1)',
    'jav&#x61;script:alert(1)',
    '&#106;avascript:alert(1)',
    ' java\tscript:alert(1)',
    'data:image/png;base64,AAAA',
    'url(https://evil.example/x)',
    'background:url(//evil.example/x)',
  ];
  const WRAP: Record<string, (inner: string) => string> = {
    td: (i) => `<table><tbody><tr>${i}</tr></tbody></table>`,
    th: (i) => `<table><thead><tr>${i}</tr></thead></table>`,
    tr: (i) => `<table><tbody>${i}</tbody></table>`,
    li: (i) => `<ul>${i}</ul>`,
  };
  const doc = new JSDOM('').window.document;
  /** The rendered HTML as a live tree (one jsdom for all cases: a new one per case costs ~15 ms). */
  const parse = (html: string): HTMLElement => {
    const body = doc.createElement('body');
    body.innerHTML = html;
    return body;
  };
  /** Attributes a rendered element may carry that point somewhere, with the element's tag. */
  function urlsIn(body: HTMLElement): string[] {
    const found: string[] = [];
    for (const el of body.querySelectorAll('*')) {
      for (const a of el.getAttributeNames()) {
        const v = el.getAttribute(a) ?? '';
        const safeLink = el.tagName === 'A' && a === 'href' && /^(?:https?:|mailto:)/i.test(v);
        if (!safeLink && (URL_ATTRS.includes(a) || /evil|javascript|data:|url\(/i.test(v)))
          found.push(`<${el.tagName.toLowerCase()} ${a}="${v}">`);
      }
    }
    return found;
  }

  it('<table background="https://..."> (the reported case) loses the background and keeps the table', () => {
    const body = parse(render('<table background="https://evil.example/x.png"><tr><td>cell</td></tr></table>'));
    expect(urlsIn(body)).toEqual([]);
    expect(body.querySelector('table td')?.textContent).toBe('cell');
  });

  /** Renders `el` (wrapped where the parser needs a parent) and asserts that no URL survived. */
  function check(tag: string, el: string, checked: Set<string>, key: string): void {
    const body = parse(render(WRAP[tag]?.(el) ?? el));
    expect(urlsIn(body), el).toEqual([]);
    // A kept tag survives without the attribute, so the check above saw a real element.
    if (KEPT.includes(tag)) expect(body.querySelector(tag), el).not.toBeNull();
    checked.add(key);
  }

  it('no element keeps a URL-bearing attribute, on any tag (kept or dropped)', () => {
    // Every tag x every attribute x the URL shapes most likely to slip past a scheme check; the
    // attribute name's case rotates through its variants.
    const values = [
      'https://evil.example/x',
      '//evil.example/x',
      '&#104;ttps://evil.example/x',
      'jav&#x61;script:alert(1)',
      'data:image/png;base64,AAAA',
    ];
    const checked = new Set<string>();
    let n = 0;
    for (const tag of [...KEPT, ...DROPPED]) {
      for (const attr of URL_ATTRS) {
        if (tag === 'a' && attr === 'href') continue; // links: a test below
        for (const value of values) {
          const name = cases(attr)[n++ % 3];
          check(tag, `<${tag} ${name}="${value}">x</${tag}>`, checked, `${tag} ${attr} ${value}`);
        }
      }
    }
    expect(checked.size).toBe(((KEPT.length + DROPPED.length) * URL_ATTRS.length - 1) * values.length);
  });

  it('no URL-bearing attribute survives on a table or a cell, in any case, with any value', () => {
    const checked = new Set<string>();
    for (const tag of ['table', 'td']) {
      for (const attr of URL_ATTRS) {
        for (const name of cases(attr)) {
          for (const value of HOSTILE) check(tag, `<${tag} ${name}="${value}">x</${tag}>`, checked, `${tag} ${name} ${value}`);
        }
      }
    }
    const names = URL_ATTRS.reduce((sum, a) => sum + new Set(cases(a)).size, 0);
    expect(checked.size).toBe(2 * names * HOSTILE.length);
  });

  it('all URL attributes at once on one element, and attributes markdown writes itself', () => {
    const all = URL_ATTRS.map((a) => `${a}="https://evil.example/${a}"`).join(' ');
    for (const tag of KEPT) {
      const el = `<${tag} ${all}>x</${tag}>`;
      expect(urlsIn(parse(render(WRAP[tag]?.(el) ?? el))), tag).toEqual([]);
    }
    // Markdown images and reference images never become <img>.
    for (const md of [
      '![x](https://evil.example/p.png)',
      '![x][r]\n\n[r]: https://evil.example/p.png',
      '[![x](https://evil.example/p.png)](https://example.org)',
    ]) {
      const body = parse(render(md));
      expect(body.querySelector('img'), md).toBeNull();
      expect(urlsIn(body), md).toEqual([]);
    }
  });

  it('CSS url() cannot come through style attributes, <style> or SVG paint', () => {
    const payloads = [
      '<div style="background:url(https://evil.example/a)">x</div>',
      '<span STYLE="background-image: url(//evil.example)">x</span>',
      '<p style="background:&#117;rl(https://evil.example/a)">x</p>',
      '<style>p{background:url(https://evil.example/a)}</style>',
      '<table><tr><td style="background:url(https://evil.example/a)">x</td></tr></table>',
      '<svg><rect fill="url(https://evil.example/a#p)" /></svg>',
      '<div><svg><style>*{background:url(https://evil.example/a)}</style></svg></div>',
    ];
    for (const p of payloads) {
      const body = parse(render(p));
      expect(body.querySelectorAll('style, svg, [style]').length, p).toBe(0);
      expect(urlsIn(body), p).toEqual([]);
    }
  });

  it('a link keeps http, https and mailto hrefs only, in any case or encoding', () => {
    for (const good of [
      'https://example.org/a',
      'http://example.org/a',
      'HTTPS://EXAMPLE.ORG/A',
      'mailto:me@example.org',
      '&#104;ttps://example.org/e',
    ]) {
      const a = parse(render(`<a href="${good}">x</a>`)).querySelector('a');
      expect(a?.getAttribute('href'), good).toMatch(/^(?:https?:|mailto:)/i);
      expect(a?.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    }
    const bad = [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'jav&#x09;ascript:alert(1)',
      '&#x6A;avascript:alert(1)',
      ' javascript:alert(1)',
      'data:text/html,x',
      'DATA:text/html,x',
      'vbscript:x',
      'file:///etc/passwd',
      'blob:https://x/y',
      'ftp://evil.example/',
      // No in-page anchors: replies have no ids, and '#/settings' is one of the app's own routes.
      '#top',
      '#/settings',
      '/relative',
      'relative/path',
    ];
    for (const b of bad) {
      for (const src of [`<a href="${b}">x</a>`, `<A HREF="${b}">x</A>`, `[x](${b.replace(/ /g, '')})`]) {
        const a = parse(render(src)).querySelector('a');
        expect(a?.hasAttribute('href') ?? false, src).toBe(false);
      }
    }
  });

  it('keeps what markdown itself writes: table alignment, list start, code language', () => {
    const body = parse(render('| a | b |\n|:--|--:|\n| 1 | 2 |\n\n3. three\n4. four\n\n```js\ncode\n```'));
    expect(body.querySelector('th')?.getAttribute('align')).toBe('left');
    expect(body.querySelector('td:last-child')?.getAttribute('align')).toBe('right');
    expect(body.querySelector('ol')?.getAttribute('start')).toBe('3');
    expect(body.querySelector('code')?.getAttribute('class')).toBe('language-js');
  });

  it("drops ids, names and the app's own classes (clobbering, restyling a reply into app UI)", () => {
    const body = parse(render('<div id="app" name="x" class="toast primary" data-testid="delete-all" aria-label="y">z</div>'));
    const div = body.querySelector('div');
    expect(div?.textContent).toBe('z');
    expect(div?.getAttributeNames()).toEqual([]);
  });
});
