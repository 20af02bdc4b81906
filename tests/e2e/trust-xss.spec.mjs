// Issue 6, hostile input: script payloads in model replies, in memory texts (the scripted summary
// turns the user's words into memories), in refined notes, in session titles (the first user
// message), and in an imported backup file. None may execute: the page flag stays unset, no
// dialog opens, no element carries an event handler or a javascript: URL, nothing leaves 127.0.0.1.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, shot, startServer } from './harness.mjs';
import { assertNoOffHost, lastReply, send, setScript, TEST_MODEL } from './flows.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.close(); });

// {JS} marks the code each payload tries to run; it sets a flag the test reads back.
const TEMPLATES = [
  '<script>{JS}</script>',
  '<img src=x onerror="{JS}">',
  '<svg onload="{JS}"></svg>',
  '<svg><script>{JS}</script></svg>',
  '<iframe srcdoc="<script>{JS}</script>"></iframe>',
  '<iframe src="javascript:{JS}"></iframe>',
  '<a href="javascript:{JS}">click</a>',
  '[markdown link](javascript:{JS})',
  '![markdown image](x" onerror="{JS})',
  '<details open ontoggle="{JS}">x</details>',
  '<body onload="{JS}">',
  '<input autofocus onfocus="{JS}">',
  '<video><source onerror="{JS}"></video>',
  '<audio src=x onerror="{JS}">',
  '<object data="javascript:{JS}"></object>',
  '<embed src="javascript:{JS}">',
  '<form><button formaction="javascript:{JS}">go</button></form>',
  '<math><mtext><table><mglyph><style><img src=x onerror="{JS}">',
  '<marquee onstart="{JS}">x</marquee>',
  '<div onmouseover="{JS}" style="position:fixed;inset:0">cover</div>',
  '<select autofocus onfocus="{JS}"></select>',
  '<textarea autofocus onfocus="{JS}"></textarea>',
  '<meta http-equiv="refresh" content="0;url=javascript:{JS}">',
  '<base href="javascript:{JS}//">',
  '"><script>{JS}</script>',
  "'><img src=x onerror={JS}>",
  '<scr<script>ipt>{JS}</scr</script>ipt>',
  '<a href="jav&#x61;script:{JS}">entity</a>',
  '<a href="  javascript:{JS}">spaced</a>',
  '<svg><animate onbegin="{JS}" attributeName=x dur=1s></svg>',
  '<noscript><p title="</noscript><img src=x onerror={JS}>">',
  '<img src=x onerror=eval(atob("{B64}"))>',
  '{{constructor.constructor("{JS}")()}}',
  '<a href="data:text/html,<script>{JS}</script>">data url</a>',
  '<svg><a xlink:href="javascript:{JS}"><text y=20>svg link</text></a></svg>',
  '<style>*{background:url("javascript:{JS}")}</style>',
];
const payload = (i) => {
  const js = `top.__pwned=(top.__pwned||[]).concat(${i})`;
  return TEMPLATES[i].replaceAll('{JS}', js).replaceAll('{B64}', Buffer.from(js).toString('base64'));
};
const PAYLOADS = TEMPLATES.map((_, i) => payload(i));

/** Everything a payload could have left behind, read from the live page. */
async function audit(page) {
  return page.evaluate(() => {
    const bad = [];
    for (const el of document.querySelectorAll('body *')) {
      const tag = el.tagName.toLowerCase();
      if (['script', 'iframe', 'object', 'embed', 'base', 'meta'].includes(tag) && !el.closest('head')) bad.push(`<${tag}>`);
      for (const a of el.attributes) {
        if (/^on/i.test(a.name)) bad.push(`${tag}[${a.name}]`);
        if (/^\s*(javascript|data|vbscript):/i.test(a.value) && /href|src|action|data/i.test(a.name)) bad.push(`${tag}[${a.name}=${a.value.slice(0, 30)}]`);
      }
    }
    return { pwned: window.__pwned, bad };
  });
}

function expectClean(result, where) {
  assert.equal(result.pwned, undefined, `a payload ran (${where}): ${JSON.stringify(result.pwned)}`);
  assert.deepEqual(result.bad, [], `dangerous markup in the DOM (${where})`);
}

async function loadModel(page) {
  await page.goto(`${server.url}/#/models`);
  await page.getByTestId(`load-${TEST_MODEL}`).click();
  await page.getByTestId('model-status').filter({ hasText: /scripted/i }).waitFor({ timeout: 15_000 });
}

async function newChat(page) {
  await page.getByTestId('new-chat').click();
  await page.getByTestId('turn-assistant').first().waitFor({ state: 'detached' });
}

async function say(page, text) {
  const before = await page.getByTestId('turn-assistant').count();
  await send(page, text);
  await page.getByTestId('turn-assistant').nth(before).waitFor();
  return lastReply(page);
}

async function readCounts(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const req = indexedDB.open('tealeaf');
        req.onsuccess = () => {
          const db = req.result;
          const tx = db.transaction(['sessions', 'memories', 'jobs'], 'readonly');
          const out = {};
          tx.objectStore('sessions').count().onsuccess = (e) => { out.sessions = e.target.result; };
          tx.objectStore('memories').getAll().onsuccess = (e) => { out.memories = e.target.result.map((m) => m.text); };
          tx.objectStore('jobs').getAll().onsuccess = (e) => { out.pending = e.target.result.filter((j) => j.status !== 'done').length; };
          tx.oncomplete = () => { db.close(); resolve(out); };
        };
      }),
  );
}

let backupFile;

test(`${PAYLOADS.length} payloads in replies, memory texts, notes and session titles stay inert`, async () => {
  assert.ok(PAYLOADS.length >= 30);
  const h = await launch();
  const dialogs = [];
  h.page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await setScript(page, {
      delayMs: 0,
      replies: PAYLOADS.map((p, i) => ({ when: `#${i}#`, say: `Reply #${i}: ${p} and **bold** ${p}` })),
      note: `Refined: ${PAYLOADS.join(' ')}`,
    });
    await loadModel(page);
    await page.goto(`${server.url}/#/chat`);
    // One session per payload: the payload is the first message (the title), is echoed by the
    // model, and becomes a memory text when the next "new chat" ends the session.
    for (let i = 0; i < PAYLOADS.length; i++) {
      if (i > 0) await newChat(page);
      await say(page, `${PAYLOADS[i]} #${i}#`);
      expectClean(await audit(page), `reply and title of payload ${i}`);
    }
    await page.getByTestId('end-session').click();
    const end = Date.now() + 60_000;
    let counts;
    do {
      counts = await readCounts(page);
      if (counts.pending === 0 && counts.memories.length >= PAYLOADS.length) break;
      await page.waitForTimeout(100);
    } while (Date.now() < end);
    assert.equal(counts.sessions, PAYLOADS.length);
    assert.ok(counts.memories.length >= PAYLOADS.length, `memories: ${counts.memories.length}`);
    // The payloads really are in the memory texts (stored verbatim, rendered inert).
    for (const p of PAYLOADS.slice(0, 5)) assert.ok(counts.memories.some((t) => t.includes(p.trim().slice(0, 20))), `memory with ${p}`);
    expectClean(await audit(page), 'chat, after all sessions');

    // A later reply that remembers: the chip's detail lists memory texts and the refined note.
    await newChat(page);
    await say(page, 'The user said script img svg iframe onerror javascript: what do you remember?');
    const chip = page.getByTestId('remembered').last();
    await chip.waitFor({ timeout: 15_000 });
    await chip.click();
    const detail = page.getByTestId('remembered-detail').last();
    await detail.waitFor();
    await detail.locator('details summary').click().catch(() => undefined);
    const shown = await detail.textContent();
    assert.match(shown, /The user said: </, 'memory texts with markup are shown as text');
    await shot(page, 'trust-xss-remembered');
    expectClean(await audit(page), 'remembered detail');

    // Session titles in the list, every past session opened.
    const items = page.getByTestId('session-item');
    assert.ok((await items.count()) >= PAYLOADS.length);
    for (let i = 0; i < 6; i++) await items.nth(i).click();
    expectClean(await audit(page), 'session list');

    // The Memory view renders every memory text.
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('explorer').waitFor({ timeout: 15_000 });
    await page.waitForTimeout(1000);
    await page.mouse.move(400, 400);
    await shot(page, 'trust-xss-memory-view');
    expectClean(await audit(page), 'memory view');

    // Keep a backup of all this for the import test.
    await page.getByTestId('nav-settings').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
    backupFile = join(tmpdir(), `tealeaf-xss-backup-${process.pid}.json`);
    await download.saveAs(backupFile);

    await page.waitForTimeout(300);
    expectClean(await audit(page), 'settings');
    assert.deepEqual(dialogs, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('the same payloads in an imported backup file stay inert', async () => {
  assert.ok(backupFile, 'the first test exports the backup');
  // Payloads also where the export had none: every session title and every memory's subject.
  const backup = JSON.parse(readFileSync(backupFile, 'utf8'));
  let placed = 0;
  const walk = (v, key) => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object') {
      const out = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, k);
      return out;
    }
    if (typeof v === 'string' && (key === 'title' || key === 'subject')) return `${PAYLOADS[placed++ % PAYLOADS.length]} ${v}`;
    return v;
  };
  const hostile = walk(backup);
  assert.ok(placed >= PAYLOADS.length, `payloads placed in titles/subjects: ${placed}`);
  const file = join(tmpdir(), `tealeaf-xss-hostile-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(hostile));

  const h = await launch();
  const dialogs = [];
  h.page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('import-file').setInputFiles(file);
    await page.getByTestId('import-run').click();
    await page.getByTestId('import-done').or(page.getByTestId('import-error')).waitFor({ timeout: 20_000 });
    const error = await page.getByTestId('import-error').textContent().catch(() => null);
    assert.equal(await page.getByTestId('import-error').count(), 0, `import refused: ${error}`);
    expectClean(await audit(page), 'after import');

    await page.getByTestId('nav-chat').click();
    const items = page.getByTestId('session-item');
    await items.first().waitFor();
    assert.ok((await items.count()) >= PAYLOADS.length);
    for (let i = 0; i < 6; i++) await items.nth(i).click();
    await page.getByTestId('turn-assistant').first().waitFor();
    expectClean(await audit(page), 'imported sessions');

    await page.getByTestId('nav-memory').click();
    await page.getByTestId('explorer').waitFor({ timeout: 15_000 });
    await page.waitForTimeout(1000);
    await shot(page, 'trust-xss-imported-memory-view');
    expectClean(await audit(page), 'imported memory view');
    assert.deepEqual(dialogs, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
