// Model text is untrusted: render markdown with marked, then sanitise with DOMPurify so that no
// script, event handler, javascript: URL, iframe or form can come out of a reply, and no element
// can make the browser fetch anything (privacy: a model-written <table background=https://...>
// would be an off-device request the moment the reply renders).
import { Marked, type Token } from 'marked';
import DOMPurify, { type WindowLike } from 'dompurify';

const marked = new Marked({ gfm: true, breaks: true, async: false });

type Purifier = ReturnType<typeof DOMPurify>;
/** One configured purifier per window (the page's, or a test's jsdom). */
const purifiers = new WeakMap<WindowLike, Purifier>();

function getPurifier(win: WindowLike = window as unknown as WindowLike): Purifier {
  let p = purifiers.get(win);
  if (!p) {
    p = configure(DOMPurify(win));
    purifiers.set(win, p);
  }
  return p;
}

/**
 * Link targets a reply may carry: the web and mail. Not '#...': replies have no ids to jump to,
 * and '#/settings' would be one of the app's own routes.
 */
const SAFE_HREF = /^(?:https?:|mailto:)/i;

/** The only classes marked writes (fenced code languages); app classes could restyle a reply into UI. */
const SAFE_CLASS = /^language-[\w+#.-]{1,40}$/;

function configure(p: Purifier): Purifier {
  p.addHook('uponSanitizeAttribute', (node, data) => {
    // `href` is allowed (below) for <a> only; `class` only as a code language.
    if (data.attrName === 'href' && node.nodeName !== 'A') data.keepAttr = false;
    if (data.attrName === 'class' && !SAFE_CLASS.test(data.attrValue)) data.keepAttr = false;
  });
  // Links open outside the app and never leak the referrer.
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  });
  return p;
}

const SANITIZE = {
  // Markdown's own output (plus a few harmless inline tags a model may write). No img, svg, math,
  // media, embeds, forms, style or link elements.
  ALLOWED_TAGS: [
    'p',
    'br',
    'hr',
    'strong',
    'b',
    'em',
    'i',
    'del',
    's',
    'code',
    'pre',
    'blockquote',
    'ul',
    'ol',
    'li',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'a',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'sup',
    'sub',
    'kbd',
    'span',
    'div',
  ],
  // An allow-list, so a URL-bearing attribute (background, src, srcset, poster, cite, action,
  // formaction, longdesc, ping, xlink:href, ...) cannot slip through, including one a browser adds
  // later: `href` is the only URL here. No style (CSS url()), no event handlers, no id or name
  // (they could clobber the page's globals), no data-* or aria-*.
  ALLOWED_ATTR: ['href', 'title', 'align', 'start', 'colspan', 'rowspan', 'lang', 'class'],
  // DOMPurify checks every allowed attribute not on this list against ALLOWED_URI_REGEXP; these
  // carry no URL, and must not be dropped for not looking like one (align="left", start="3").
  ADD_URI_SAFE_ATTR: ['align', 'start', 'colspan', 'rowspan', 'lang'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOWED_URI_REGEXP: SAFE_HREF,
};

/** Markdown to safe HTML. `win` lets tests pass a jsdom window. */
export function renderMarkdown(text: string, win?: WindowLike): string {
  const html = marked.parse(text) as string;
  return getPurifier(win).sanitize(html, SANITIZE) as string;
}

/** The text's top-level blocks as marked reads them (their `raw` texts add up to the text). */
export function lexBlocks(text: string): Token[] {
  return marked.lexer(text);
}

/** Some of those blocks to safe HTML, as renderMarkdown does for a whole text (markdown-stream.ts). */
export function renderBlocks(tokens: Token[], win?: WindowLike): string {
  const html = marked.parser(tokens) as string;
  return getPurifier(win).sanitize(html, SANITIZE) as string;
}
