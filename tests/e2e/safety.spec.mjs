// Model text is untrusted: script and HTML injected into replies must render inert.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, collectDialogs, say, startChat } from './flows.mjs';

const server = serveApp();

const PAYLOADS = [
  '<script>window.__pwned = 1</script>',
  '<img src=x onerror="window.__pwned = 2">',
  '<svg onload="window.__pwned = 3"></svg>',
  '[click me](javascript:window.__pwned=4)',
  '<iframe srcdoc="<script>parent.__pwned=5</script>"></iframe>',
  '<a href="javascript:window.__pwned=6" id="evil">link</a>',
  '<details open ontoggle="window.__pwned=7">x</details>',
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned=8">',
  '<form action="javascript:window.__pwned=9"><button id="fbtn">go</button></form>',
  '<div style="background:url(javascript:window.__pwned=10)">styled</div>',
  '``<img src=x onerror="window.__pwned=11">``',
  '<object data="javascript:window.__pwned=12"></object>',
];

test('script/HTML injection in model replies renders inert', async () => {
  const h = await launch();
  try {
    const { page } = h;
    const dialogs = collectDialogs(page);
    await startChat(page, server.url, { delayMs: 1, replies: PAYLOADS.map((p, i) => ({ when: `payload ${i}:`, say: `Here: ${p} done` })) });
    for (let i = 0; i < PAYLOADS.length; i++) {
      await say(page, `payload ${i}: go`);
    }
    // Click every link the replies contain: none may run script.
    for (const a of await page.locator('[data-testid="reply-body"] a').all()) {
      const href = await a.getAttribute('href');
      assert.ok(!href || /^(https?:|mailto:|#)/.test(href), `unsafe href ${href}`);
    }
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    // Inert means: no script-capable element and no handler or script URL on any element
    // (payload text shown escaped inside <code> is fine).
    const live = await page.evaluate(() =>
      [...document.querySelectorAll('[data-testid="conversation"] *')]
        .filter(
          (el) =>
            /^(SCRIPT|IFRAME|OBJECT|EMBED|FORM|STYLE|SVG|MATH|IMG)$/i.test(el.tagName) ||
            [...el.attributes].some((a) => /^on/i.test(a.name) || /javascript:|data:text/i.test(a.value) || a.name === 'style'),
        )
        .map((el) => el.outerHTML.slice(0, 120)),
    );
    assert.deepEqual(live, []);
    assert.deepEqual(dialogs, []);
    await shot(page, 'chat-injection-inert');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
