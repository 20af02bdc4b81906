// Pairing by QR code: two Chromium profiles, the relay on 127.0.0.1 as in sync.spec. A
// shows a code and a QR code; the QR image as the page draws it (a screenshot of the element, in
// light and dark) is decoded with jsqr to the pairing link; B opens it: the form is filled in, the
// address bar drops the code at once, nothing reaches the relay before Pair, and A's memory arrives
// in B's IndexedDB after B names itself and presses Pair once. Links with a malformed code or a
// relay this page may not use say so and fill in nothing wrong. Axe at 1280 and 375 px, light and dark.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsQR from 'jsqr';
import { startRelay } from '../../relay/relay.mjs';
import { audit } from './axe.mjs';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, pollDb, readDb, say, startChat } from './flows.mjs';

const server = serveApp();
const relayDir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-'));
after(() => rmSync(relayDir, { recursive: true, force: true }));

const LOOKS = [
  [1280, 'light'],
  [1280, 'dark'],
  [375, 'light'],
  [375, 'dark'],
];

async function look(page, width, scheme) {
  await page.setViewportSize({ width, height: 800 });
  await page.emulateMedia({ colorScheme: scheme });
}

/** The QR code as the page shows it: the element's screenshot, its pixels read back, decoded by jsqr. */
async function decodeShownQr(page) {
  const qr = page.getByTestId('sync-qr');
  await qr.scrollIntoViewIfNeeded();
  const png = await qr.screenshot();
  const { width, height, pixels } = await page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    return { width: bitmap.width, height: bitmap.height, pixels: Array.from(ctx.getImageData(0, 0, bitmap.width, bitmap.height).data) };
  }, png.toString('base64'));
  // Dark modules on light only: a phone's camera app may not read an inverted code.
  return jsQR(Uint8ClampedArray.from(pixels), width, height, { inversionAttempts: 'dontInvert' })?.data;
}

const form = async (page) => ({
  relay: await page.getByTestId('sync-relay-url').inputValue(),
  code: await page.getByTestId('sync-code-input').inputValue(),
  focused: await page.evaluate(() => document.activeElement?.getAttribute('data-testid')),
  url: page.url(),
});

test('pair by QR code: B opens the link the QR holds, filled in and nothing sent before Pair; A memory arrives on B', async () => {
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir });
  const A = await launch();
  const profB = tempProfile();
  let B = await launch({ profile: profB });
  // Every request B makes to the relay, to show nothing is sent before Pair.
  const toRelay = [];
  const watch = (ctx) => ctx.on('request', (r) => r.url().startsWith(relay.url) && toRelay.push(r.url()));
  watch(B.context);
  const problems = [];
  try {
    // A: a chat, ended and memorised; sync on; a code shown.
    await startChat(A.page, server.url, { delayMs: 2 });
    await say(A.page, 'My cat is called Mirabel and she likes the window');
    await say(A.page, 'I moved to Lisbon last spring');
    await endAndRemember(A.page);
    const a0 = await pollDb(A.page, (db) => db.memories.length > 0, { what: 'memories on A' });
    await A.page.goto(`${server.url}/#/settings`);
    await A.page.getByTestId('sync-relay-url').fill(relay.url);
    await A.page.getByTestId('sync-device-name').fill('Laptop');
    await A.page.getByTestId('sync-turn-on').click();
    await A.page.locator('[data-testid="sync-status"][data-phase="synced"]').waitFor();
    await A.page.getByTestId('sync-show-code').click();
    const code = (await A.page.getByTestId('sync-code').textContent()).trim();
    assert.match(code, /^[0-9A-Z]{4}(-[0-9A-Z]{4}){5}$/);

    // The QR code holds the link, readable as drawn in every look; the words say a phone cannot use it here.
    const expected = `${server.url}/#/settings?pair=${code}&relay=${encodeURIComponent(relay.url)}`;
    for (const [width, scheme] of LOOKS) {
      await look(A.page, width, scheme);
      assert.equal(await decodeShownQr(A.page), expected, `the QR at ${width} px ${scheme}`);
      await shot(A.page, `sync-qr-${width}-${scheme}`);
      problems.push(...(await audit(A.page)).map((p) => `A ${width} ${scheme}: ${p}`));
    }
    assert.equal(await A.page.getByTestId('sync-qr-reach').getAttribute('data-reach'), 'both-local');
    assert.match(
      await A.page.getByTestId('sync-qr-reach').textContent(),
      /^A phone scanning this reaches its own 127\.0\.0\.1, not this computer: use a relay address both devices can reach, or type the code\./,
    );
    await look(A.page, 1280, 'light');

    // B opens a link with a cut code and a relay this build may not use: both said, neither filled in.
    const refused = 'https://relay.example.org/r?room=a&key=b=c';
    await B.page.goto(`${server.url}/#/settings?pair=${code.slice(0, -5)}&relay=${encodeURIComponent(refused)}`);
    const note = B.page.getByTestId('sync-pair-link');
    await note.waitFor();
    assert.equal(await note.getAttribute('data-state'), 'bad');
    assert.match(
      await note.textContent(),
      /code \([0-9A-Z-]+\) is not a pairing code.*relay \(https:\/\/relay\.example\.org\/r\?room=a&key=b=c\) cannot be used here\. This build of Tealeaf may not connect/,
    );
    assert.deepEqual(await form(B.page), {
      relay: 'http://127.0.0.1:8787',
      code: '',
      focused: 'sync-device-name',
      url: `${server.url}/#/settings`,
    });
    for (const [width, scheme] of [LOOKS[0], LOOKS[3]]) {
      await look(B.page, width, scheme);
      await note.scrollIntoViewIfNeeded();
      await shot(B.page, `sync-qr-bad-link-${width}-${scheme}`);
      problems.push(...(await audit(B.page)).map((p) => `B bad link ${width} ${scheme}: ${p}`));
    }
    await look(B.page, 1280, 'light');

    // The same tab, a link pasted in (a hash change): its good code is filled in, its refused relay not.
    await B.page.goto(`${server.url}/#/settings?pair=${code}&relay=${encodeURIComponent(refused)}`);
    await B.page.waitForFunction(() => !location.hash.includes('pair='));
    assert.match(await note.textContent(), /cannot be used here.*Its code is filled in\./);
    assert.equal((await form(B.page)).code, code);
    assert.equal((await form(B.page)).relay, 'http://127.0.0.1:8787');

    // B opens the link decoded from A's QR code, as a phone's camera would (a fresh page).
    await B.page.goto('about:blank');
    await B.page.goto(expected);
    await B.page.getByTestId('settings-sync').waitFor();
    await B.page.waitForFunction((c) => document.querySelector('[data-testid="sync-code-input"]')?.value === c, code);
    assert.deepEqual(await form(B.page), { relay: relay.url, code, focused: 'sync-device-name', url: `${server.url}/#/settings` });
    assert.equal(await note.getAttribute('data-state'), 'filled');
    assert.equal(
      (await note.textContent()).trim(),
      'Filled in from a code shown on another device: check the relay address, name this device, then Pair.',
    );
    assert.equal(await B.page.getByTestId('sync-device-name').getAttribute('aria-describedby'), 'sync-pair-link');
    // Joining, not starting: "Turn sync on (first device)" is not between the name and Pair.
    assert.equal(await B.page.getByTestId('sync-turn-on').count(), 0);
    assert.equal(await B.page.getByLabel('The code another device shows').inputValue(), code);
    await B.page.keyboard.press('Tab');
    assert.equal(await B.page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'sync-code-input');
    await B.page.getByTestId('sync-device-name').evaluate((el) => (el.focus(), el.select()));
    for (const [width, scheme] of LOOKS) {
      await look(B.page, width, scheme);
      await B.page.getByTestId('sync-device-name').scrollIntoViewIfNeeded();
      await shot(B.page, `sync-qr-opened-${width}-${scheme}`);
      problems.push(...(await audit(B.page)).map((p) => `B ${width} ${scheme}: ${p}`));
    }
    await look(B.page, 1280, 'light');
    assert.deepEqual(problems, []);
    assert.deepEqual(toRelay, [], 'B sent nothing to the relay before Pair');

    // A code typed wrong: said in words after one read of the relay; B stays unpaired, no Cancel left behind.
    const codeInput = B.page.getByTestId('sync-code-input');
    await codeInput.fill(code.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')));
    await B.page.getByTestId('sync-join').click();
    const wrong = B.page.getByTestId('sync-error');
    await wrong.waitFor();
    assert.match(await wrong.textContent(), /^No device is showing this code on this relay\. Check the code/);
    assert.equal(await B.page.getByTestId('sync-status').getAttribute('data-phase'), 'off');
    assert.equal(await B.page.getByTestId('sync-join-cancel').count(), 0);
    assert.equal(await B.page.getByTestId('sync-join').isEnabled(), true);
    for (const width of [375, 1280]) {
      await look(B.page, width, 'light');
      await wrong.scrollIntoViewIfNeeded();
      await shot(B.page, `sync-pair-wrong-code-${width}`);
      problems.push(...(await audit(B.page)).map((p) => `B wrong code ${width}: ${p}`));
    }
    // While B waits on the relay (its read of the mailbox held here), Cancel is there with the focus: Enter cancels, nothing is paired.
    let holding;
    const held = new Promise((ok) => (holding = ok));
    const mailbox = (url) => url.href.includes('/v1/rooms/pair-');
    const hold = (route) => holding(route);
    await B.context.route(mailbox, hold);
    await codeInput.fill(code);
    await B.page.getByTestId('sync-join').click();
    const route = await held;
    await B.page.getByTestId('sync-join-waiting').waitFor();
    assert.equal(await B.page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'sync-join-cancel');
    await shot(B.page, 'sync-pair-waiting-1280');
    await B.page.keyboard.press('Enter');
    const cancelled = B.page.getByTestId('sync-join-note');
    await cancelled.waitFor();
    assert.equal((await cancelled.textContent()).trim(), 'Pairing cancelled: nothing changed on either device.');
    await route.abort().catch(() => undefined);
    await B.context.unroute(mailbox, hold);
    assert.equal(await B.page.getByTestId('sync-status').getAttribute('data-phase'), 'off');
    assert.deepEqual(problems, []);
    await B.page.getByTestId('sync-device-name').evaluate((el) => (el.focus(), el.select()));

    // B names itself (the name field has the focus and its text selected) and pairs with one click.
    await B.page.keyboard.type('Phone');
    await B.page.getByTestId('sync-join').click();
    await B.page.locator('[data-testid="sync-status"][data-phase="synced"]').waitFor();
    assert.ok(toRelay.length > 0, 'Pair reached the relay');
    const b0 = await pollDb(B.page, (db) => db.memories.length === a0.memories.length, { what: "A's memories on B" });
    assert.deepEqual(b0.memories.map((m) => m.text).sort(), a0.memories.map((m) => m.text).sort());
    await B.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Laptop/ })
      .waitFor();
    await A.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Phone/ })
      .waitFor();
    assert.equal(await note.count(), 0, 'the note goes once paired');

    // After a restart B is still paired, with A's memory, and the link is not back.
    await B.close();
    B = await launch({ profile: profB });
    await B.page.goto(`${server.url}/#/settings`);
    await B.page.locator('[data-testid="sync-status"][data-phase="synced"]').waitFor();
    await B.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Laptop/ })
      .waitFor();
    assert.equal(await B.page.getByTestId('sync-pair-link').count(), 0);
    const bR = await readDb(B.page, ['memories']);
    assert.deepEqual(bR.memories.map((m) => m.text).sort(), a0.memories.map((m) => m.text).sort());
    await B.page.goto(`${server.url}/#/chat`);
    await B.page
      .getByTestId('session-item')
      .filter({ hasText: /cat|Lisbon/ })
      .first()
      .waitFor();
    assertNoOffHost(A);
    assertNoOffHost(B);
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close();
  }
});
