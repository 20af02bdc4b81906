// Model text is untrusted: render markdown with marked, then sanitise with DOMPurify so that no
// script, event handler, javascript: URL, iframe or form can come out of a reply.
import { Marked } from 'marked';
import DOMPurify, { type WindowLike } from 'dompurify';

const marked = new Marked({ gfm: true, breaks: true, async: false });

type Purifier = ReturnType<typeof DOMPurify>;
let purifier: Purifier | undefined;

function getPurifier(win?: WindowLike): Purifier {
  if (win) return configure(DOMPurify(win));
  purifier ??= configure(DOMPurify(window as unknown as WindowLike));
  return purifier;
}

/** Link targets a reply may carry: the web, mail, and anchors within the reply. */
const SAFE_HREF = /^(?:https?:|mailto:|#)/i;

function configure(p: Purifier): Purifier {
  // Links open outside the app and never leak the referrer. No other element may carry a URL:
  // an attribute allow-list (below) keeps every URL-bearing attribute out (background, src,
  // poster, cite, action, xlink:href, ...) and a new one cannot slip through; `href` survives
  // only on <a>, and only with a safe scheme (DOMPurify checks it against SAFE_HREF).
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    } else if (node.hasAttribute('href')) {
      node.removeAttribute('href');
    }
  });
  return p;
}

const SANITIZE = {
  // Markdown's own output (plus a few harmless inline tags a model may write).
  ALLOWED_TAGS: [
    'p', 'br', 'hr', 'strong', 'b', 'em', 'i', 'del', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li',
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'sup', 'sub', 'kbd', 'span', 'div',
  ],
  // No URL-bearing attribute but <a href>; no style (CSS url()); no event handlers, no ids or names
  // that could clobber the page's globals.
  ALLOWED_ATTR: ['href', 'title', 'align', 'start', 'colspan', 'rowspan', 'lang', 'class'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOWED_URI_REGEXP: SAFE_HREF,
};

/** Markdown to safe HTML. `win` lets tests pass a jsdom window. */
export function renderMarkdown(text: string, win?: WindowLike): string {
  const html = marked.parse(text) as string;
  return getPurifier(win).sanitize(html, SANITIZE) as string;
}
