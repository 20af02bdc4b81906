// Hostile input: script payloads in model replies, in memory texts (the scripted summary
// turns the user's words into memories), in refined notes, in session titles (the first user
// message), and in an imported backup file. And the same payloads, plus markup whose URL-bearing
// attributes would fetch from another site, on every surface of the Memory view (timeline, its
// tooltips and search, list, detail panel, focus banner, persona, graph and its tooltips). None may
// execute: the page flag stays unset, no dialog opens, no element carries an event handler, a
// javascript:/data: URL or a URL-bearing attribute pointing off-site, nothing leaves 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, collectDialogs, exportBackup, loadTestModel, newChat, readDb, say, setScript, startImport } from './flows.mjs';

const server = serveApp();

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
  // No script, but each would make the browser fetch from another site if its attribute survived:
  // the DOM audit and the off-host request guard both watch for them.
  '<table background="https://evil.example/bg.png"><tr><td>table background</td></tr></table>',
  '<div style="background-image:url(https://evil.example/css.png)">css url</div>',
  '<img srcset="https://evil.example/srcset.png 1x" alt="srcset">',
  '<video poster="https://evil.example/poster.png"></video>',
  '<blockquote cite="https://evil.example/cite">cite</blockquote>',
];
const payload = (i) => {
  const js = `top.__pwned=(top.__pwned||[]).concat(${i})`;
  return TEMPLATES[i].replaceAll('{JS}', js).replaceAll('{B64}', Buffer.from(js).toString('base64'));
};
const PAYLOADS = TEMPLATES.map((_, i) => payload(i));

// Attributes that make a browser fetch or navigate (HTML, legacy HTML, SVG, microdata).
const URL_ATTRS = [
  'href',
  'src',
  'srcset',
  'imagesrcset',
  'background',
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
  'icon',
  'archive',
  'classid',
  'itemtype',
  'datasrc',
  'xml:base',
];

/** Everything a payload could have left behind, read from the live page. */
async function audit(page) {
  return page.evaluate((URL_ATTRS) => {
    const bad = [];
    // An absolute or protocol-relative URL to any host but this one.
    const offSite = (v) =>
      [...v.matchAll(/(?:^|[\s,('"])(?:[a-z][a-z0-9+.-]*:)?\/\/([^/\s'"),]+)/gi)].some((m) => m[1].replace(/:\d+$/, '') !== '127.0.0.1');
    for (const el of document.querySelectorAll('body *')) {
      const tag = el.tagName.toLowerCase();
      if (['script', 'iframe', 'object', 'embed', 'base', 'meta'].includes(tag) && !el.closest('head')) bad.push(`<${tag}>`);
      for (const a of el.attributes) {
        const name = a.name.toLowerCase();
        const at = `${tag}[${name}=${a.value.slice(0, 40)}]`;
        if (/^on/.test(name)) bad.push(`${tag}[${name}]`);
        if (!URL_ATTRS.includes(name) && !/url\(/i.test(a.value)) continue;
        if (/^\s*(javascript|data|vbscript):|url\(\s*['"]?\s*(javascript|data|vbscript):/i.test(a.value)) bad.push(at);
        // A sanitised reply may link to the web (user clicks only); nothing else may point off-site.
        const link = tag === 'a' && name === 'href' && /^(https?|mailto):/i.test(a.value);
        if (!link && offSite(a.value)) bad.push(at);
      }
    }
    return { pwned: window.__pwned, bad };
  }, URL_ATTRS);
}

function expectClean(result, where) {
  assert.equal(result.pwned, undefined, `a payload ran (${where}): ${JSON.stringify(result.pwned)}`);
  assert.deepEqual(result.bad, [], `dangerous markup in the DOM (${where})`);
}

/** Sessions, memory texts and unfinished jobs in the user's database. */
async function readCounts(page) {
  const db = await readDb(page, ['sessions', 'memories', 'jobs'], { db: 'tealeaf' });
  return {
    sessions: db.sessions.length,
    memories: db.memories.map((m) => m.text),
    pending: db.jobs.filter((j) => j.status !== 'done').length,
  };
}

/**
 * The user imports `file` from Settings; fails if the import is refused (the error is read only
 * when there is one: textContent would wait 30 s).
 */
async function importAndCheck(page, file) {
  await page.goto(`${server.url}/#/settings`);
  await startImport(page, file);
  await page.getByTestId('import-done').or(page.getByTestId('import-error')).waitFor();
  const error = page.getByTestId('import-error');
  if (await error.count()) assert.fail(`import refused: ${await error.textContent()}`);
  await page.getByTestId('import-done').waitFor();
}

let backupFile;

test(`${PAYLOADS.length} payloads in replies, memory texts, notes and session titles stay inert`, async () => {
  assert.ok(PAYLOADS.length >= 30);
  const h = await launch();
  const dialogs = collectDialogs(h.page);
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await setScript(page, {
      delayMs: 0,
      replies: PAYLOADS.map((p, i) => ({ when: `#${i}#`, say: `Reply #${i}: ${p} and **bold** ${p}` })),
      note: `Refined: ${PAYLOADS.join(' ')}`,
    });
    await loadTestModel(page, server.url);
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
    for (const p of PAYLOADS.slice(0, 5))
      assert.ok(
        counts.memories.some((t) => t.includes(p.trim().slice(0, 20))),
        `memory with ${p}`,
      );
    expectClean(await audit(page), 'chat, after all sessions');

    // A later reply that remembers: the chip's detail lists memory texts and the refined note.
    await newChat(page);
    await say(page, 'The user said script img svg iframe onerror javascript: what do you remember?');
    const chip = page.getByTestId('remembered').last();
    await chip.waitFor();
    await chip.click();
    const detail = page.getByTestId('remembered-detail').last();
    await detail.waitFor();
    await detail
      .locator('details summary')
      .click()
      .catch(() => undefined);
    const shown = await detail.textContent();
    assert.match(shown, /You said: </, 'memory texts with markup are shown as text (in the second person, as the user reads them)');
    await shot(page, 'trust-xss-remembered');
    expectClean(await audit(page), 'remembered detail');

    // Session titles in the list, every past session opened.
    const items = page.getByTestId('session-item');
    assert.ok((await items.count()) >= PAYLOADS.length);
    for (let i = 0; i < 6; i++) await items.nth(i).click();
    expectClean(await audit(page), 'session list');

    // The Memory view renders every memory text.
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('explorer').waitFor();
    await page.waitForTimeout(1000);
    await page.mouse.move(400, 400);
    await shot(page, 'trust-xss-memory-view');
    expectClean(await audit(page), 'memory view');

    // Keep a backup of all this for the import test.
    backupFile = await exportBackup(page, join(tmpdir(), `tealeaf-xss-backup-${process.pid}.json`));

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
  const dialogs = collectDialogs(h.page);
  try {
    const { page } = h;
    await importAndCheck(page, file);
    expectClean(await audit(page), 'after import');

    await page.getByTestId('nav-chat').click();
    const items = page.getByTestId('session-item');
    await items.first().waitFor();
    assert.ok((await items.count()) >= PAYLOADS.length);
    for (let i = 0; i < 6; i++) await items.nth(i).click();
    await page.getByTestId('turn-assistant').first().waitFor();
    expectClean(await audit(page), 'imported sessions');

    await page.getByTestId('nav-memory').click();
    await page.getByTestId('explorer').waitFor();
    await page.waitForTimeout(1000);
    await shot(page, 'trust-xss-imported-memory-view');
    expectClean(await audit(page), 'imported memory view');
    assert.deepEqual(dialogs, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

/**
 * A backup whose every explorer-visible string starts with a payload, tagged with a marker (~m3~:
 * memory 3's text) so the test can tell which record a surface shows: per payload, a session
 * (title), two turns (source quotes), an event or note memory (text, subject, "why", links) and a
 * trait (persona; half of them superseded by a later trait through a Changed link: "now: ...").
 */
function explorerBackup() {
  const day = 86_400_000;
  const t0 = Date.UTC(2025, 0, 6);
  const n = PAYLOADS.length;
  const sessions = [];
  const turns = [];
  const memories = [];
  const edges = [];
  const relations = ['Cause', 'Reason', 'React', 'Want', 'SameTopic', 'HinderedBy'];
  PAYLOADS.forEach((p, i) => {
    const t = t0 + i * day;
    const s = `xs${i}`;
    sessions.push({
      id: s,
      title: `${p} ~t${i}~`,
      startedAt: t,
      lastActivityAt: t + 60_000,
      endedAt: t + 60_000,
      status: 'memorised',
      endReason: 'import',
    });
    turns.push({ id: `xu${i}`, sessionId: s, index: 0, role: 'user', text: `${p} ~u${i}~`, time: t, status: 'complete' });
    turns.push({ id: `xa${i}`, sessionId: s, index: 1, role: 'assistant', text: `${p} ~a${i}~`, time: t + 1000, status: 'complete' });
    memories.push({
      id: `xm${i}`,
      kind: i % 4 === 3 ? 'note' : 'event',
      text: `${p} ~m${i}~`,
      subject: `${p} ~s${i}~`,
      time: t + 1000,
      sourceTurnIds: [`xu${i}`, `xa${i}`],
      sessionId: s,
      edited: false,
      createdAt: t + 2000,
      context: `${p} ~w${i}~`,
    });
    const superseded = i + 2 < n && i % 4 < 2;
    memories.push({
      id: `xr${i}`,
      kind: i % 2 ? 'assistant-trait' : 'user-trait',
      text: `${p} ~r${i}~`,
      subject: i % 2 ? 'assistant' : 'user',
      time: t + 1000,
      sourceTurnIds: [`xu${i}`],
      sessionId: s,
      edited: false,
      createdAt: t + 2000,
      ...(superseded ? { supersededBy: `xr${i + 2}` } : {}),
    });
    if (i > 0)
      edges.push({
        id: `xe${i}`,
        from: `xm${i - 1}`,
        to: `xm${i}`,
        relation: relations[i % relations.length],
        origin: 'model',
        createdAt: t + 3000,
      });
    if (superseded)
      edges.push({ id: `xc${i}`, from: `xr${i}`, to: `xr${i + 2}`, relation: 'Changed', origin: 'model', createdAt: t + 3000 });
  });
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: t0 + n * day,
    data: { sessions, turns, memories, edges, segments: [], settings: [] },
  };
}

/** The marker numbers (~m3~ -> 3) of one kind found in `text`. */
const markers = (text, kind) => new Set([...text.matchAll(new RegExp(`~${kind}(\\d+)~`, 'g'))].map((m) => Number(m[1])));

test(`${PAYLOADS.length} payloads on every surface of the Memory view stay inert`, async () => {
  const n = PAYLOADS.length;
  const file = join(tmpdir(), `tealeaf-xss-explorer-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(explorerBackup()));
  const h = await launch();
  const dialogs = collectDialogs(h.page);
  const surfaces = new Set();
  const clean = async (where) => {
    expectClean(await audit(h.page), where);
    surfaces.add(where.split(':')[0]);
  };
  try {
    const { page } = h;
    await importAndCheck(page, file);

    await page.getByTestId('nav-memory').click();
    await page
      .getByTestId('memory-count')
      .filter({ hasText: `${2 * n} memories` })
      .waitFor();
    const explorer = page.getByTestId('explorer');

    // Timeline: labels and session ticks (titles) render hostile text as text.
    const timeline = page.getByTestId('timeline-view');
    await timeline.locator('text.label').first().waitFor();
    const ticks = (await page.locator('svg.axis title').allTextContents()).join('\n');
    assert.equal(markers(ticks, 't').size, n, 'every session title is on the timeline axis');
    assert.ok(
      (await timeline.locator('text.label').allTextContents()).some((t) => t.includes('<')),
      'labels show markup as text',
    );
    await clean('timeline');

    // Timeline tooltips: hover every drawn node.
    const nodes = await timeline.evaluate((el) =>
      [...el.querySelectorAll('svg.viz-layer g > g[transform] > path')].map((p) => {
        const r = p.getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2];
      }),
    );
    assert.ok(nodes.length >= n, `timeline nodes drawn: ${nodes.length}`);
    const tip = timeline.locator('.tip');
    const tipped = new Set();
    for (const [x, y] of nodes) {
      await page.mouse.move(x, y);
      const text = await tip.textContent({ timeout: 2_000 }).catch(() => '');
      for (const k of ['m', 'r']) for (const i of markers(text, k)) tipped.add(`${k}${i}`);
    }
    assert.ok(tipped.size >= n, `timeline tooltips seen for ${tipped.size} memories`);
    await clean('timeline tooltips');
    await page.mouse.move(5, 5);

    // Search: queries made of payload fragments; each match is stepped to (selects and opens it).
    const search = page.getByPlaceholder('Search memories');
    const queries = ['onerror', 'javascript', 'evil.example', '<svg', '</script>', 'background'];
    for (const q of queries) {
      await search.fill(q);
      const count = await page.locator('.tv .count').textContent();
      assert.match(count, /^[1-9]\d* whole-word match/, `search "${q}" finds the payloads: ${count}`);
      for (let k = 0; k < 3; k++) await search.press('Enter');
      await page.locator('aside[aria-label="Memory details"] h3').waitFor();
      await clean(`search: ${q}`);
    }
    await search.fill('');

    // List and detail panel: every memory selected in turn; the panel shows its text, subject,
    // why, session title, source quotes, links and timelines.
    await page.getByRole('tab', { name: /list/i }).click();
    // Every thread, each in full.
    const more = explorer.getByRole('button', { name: /^Show more threads|^Show all/ });
    for (let k = 0; k < 20 && (await more.count()); k++) await more.first().click();
    const listed = (await explorer.locator('.tl button.item .text').allTextContents()).join('\n');
    assert.equal(markers(listed, 'm').size + markers(listed, 'r').size, 2 * n, 'the list shows every memory');
    await clean('list');
    const detail = page.locator('aside[aria-label="Memory details"]');
    const detailed = new Set();
    for (const [kind, prefix] of [
      ['m', 'xm'],
      ['r', 'xr'],
    ]) {
      for (let i = 0; i < n; i++) {
        await explorer
          .locator('.scroll.list .tl button.item')
          .filter({ hasText: `~${kind}${i}~` })
          .first()
          .click();
        await detail
          .locator('h3')
          .filter({ hasText: `~${kind}${i}~` })
          .waitFor();
        // Source quotes arrive from the store a moment later.
        await detail
          .locator('ul.sources .quote')
          .filter({ hasText: `~u${i}~` })
          .waitFor();
        const shown = await detail.textContent();
        assert.ok(shown.includes(`~t${i}~`), `${prefix}${i}: the session title`);
        if (kind === 'm') for (const k of ['s', 'w']) assert.ok(shown.includes(`~${k}${i}~`), `${prefix}${i}: ${k}`);
        expectClean(await audit(page), `detail of ${prefix}${i}`);
        detailed.add(`${prefix}${i}`);
      }
    }
    assert.equal(detailed.size, 2 * n);
    surfaces.add('detail');

    // The focus banner quotes the selected memory.
    await detail.getByText('Focus on its timelines').click();
    await explorer.locator('.banner').filter({ hasText: 'Showing only the timelines through' }).waitFor();
    await clean('focus banner');
    await detail.getByText('Focus on its timelines').click();

    // Persona: traits and their "now:" replacements. The lists are virtual (rows render near the
    // viewport), so every scroller in the panel is stepped from top to bottom.
    await page.getByRole('tab', { name: /persona/i }).click();
    await explorer.locator('.trait').first().waitFor();
    const traits = new Set();
    const scrollStep = (k, fromTop) =>
      page.evaluate(
        async ([k, fromTop]) => {
          const all = [...document.querySelectorAll('#explorer-panel, #explorer-panel *')].filter(
            (el) => el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(el).overflowY),
          );
          const el = all[k];
          if (!el) return { scrollers: all.length, end: true };
          const end = !fromTop && el.scrollTop + el.clientHeight >= el.scrollHeight - 1;
          el.scrollTop = fromTop ? 0 : el.scrollTop + el.clientHeight * 0.7;
          await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
          return { scrollers: all.length, end };
        },
        [k, fromTop],
      );
    let scrollers = 1;
    for (let k = 0; k < scrollers; k++) {
      for (let step = 0, end = false; !end && step < 80; step++) {
        ({ scrollers, end } = await scrollStep(k, step === 0));
        await page.waitForTimeout(30);
        for (const t of await explorer.locator('.trait').allTextContents()) for (const i of markers(t, 'r')) traits.add(i);
        expectClean(await audit(page), 'persona');
      }
    }
    assert.equal(traits.size, n, `persona shows every trait (${traits.size}; ${scrollers} scrollers)`);
    surfaces.add('persona');

    // Graph and its tooltips: sweep the pointer over the canvas, outwards from the centre.
    await page.getByRole('tab', { name: /graph/i }).click();
    const canvas = explorer.locator('.gv canvas');
    await canvas.waitFor();
    await page.waitForTimeout(500);
    const box = await canvas.boundingBox();
    const points = [];
    for (let y = box.y + 8; y < box.y + box.height - 8; y += 12)
      for (let x = box.x + 8; x < box.x + box.width - 8; x += 12) points.push([x, y]);
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    points.sort((a, b) => Math.hypot(a[0] - cx, a[1] - cy) - Math.hypot(b[0] - cx, b[1] - cy));
    const graphTips = new Set();
    const gtip = explorer.locator('.gv .tip');
    for (const [x, y] of points) {
      await page.mouse.move(x, y);
      if (await gtip.count()) for (const k of ['m', 'r']) for (const i of markers(await gtip.textContent(), k)) graphTips.add(`${k}${i}`);
      if (graphTips.size >= 10) break;
    }
    assert.ok(graphTips.size >= 10, `graph tooltips seen for ${graphTips.size} memories`);
    await clean('graph tooltips');

    await shot(page, 'trust-xss-explorer-surfaces');
    assert.deepEqual([...surfaces].sort(), [
      'detail',
      'focus banner',
      'graph tooltips',
      'list',
      'persona',
      'search',
      'timeline',
      'timeline tooltips',
    ]);
    assert.deepEqual(dialogs, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
    rmSync(file, { force: true });
  }
});
