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

function configure(p: Purifier): Purifier {
  // Links open outside the app and never leak the referrer; images are not fetched (privacy:
  // a model-written <img src=http://...> would make an off-device request).
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  });
  return p;
}

const SANITIZE = {
  FORBID_TAGS: ['style', 'img', 'svg', 'math', 'iframe', 'form', 'input', 'button', 'textarea', 'select', 'video', 'audio', 'source', 'object', 'embed', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'srcset', 'formaction'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
};

/** Markdown to safe HTML. `win` lets tests pass a jsdom window. */
export function renderMarkdown(text: string, win?: WindowLike): string {
  const html = marked.parse(text) as string;
  return getPurifier(win).sanitize(html, SANITIZE) as string;
}
