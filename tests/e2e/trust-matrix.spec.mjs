// A fault-injection matrix in the real browser. Each user action
// (rows) is taken at each point of a running memorise job (columns); then the page is reloaded
// (for "close the tab": the browser is closed and the profile reopened) and these must hold:
//   1. the app starts (no [data-testid=fatal]) and the chat view works (a message gets a reply);
//   2. no record points at a missing one (edges, supersededBy, vectors and vector packs, turns,
//      segments, jobs), checked on the live store before the reload, after it, and once the job
//      has finished; a start-up repair (the repair log) also counts as a broken store;
//   3. after "Delete all my data": no record in any data store, also a few seconds after the job
//      would have written, and again once models are loaded;
//   4. the action's own effect holds after the reload and after the job has finished (deleted
//      stays deleted, an edit is not overwritten, an edge stays as the user left it, an imported
//      backup is all there), and the job finishes (or was cancelled with its session) rather than
//      stopping half way.
// The job's step is read from IndexedDB. The scripted model reads its delay per call, so each case
// keeps the calls before the targeted one short and makes only the targeted one slow (row.slowMs,
// which grows with how long the row's actions take, so a loaded machine still acts in time):
// the action is taken while that call is in flight. The embed and segment steps make no model
// call and last a few milliseconds, so "embed" means: the summary is committed and the first
// labelling call is in flight, nothing linked yet; "late" means: the last labelling call is in
// flight, and its commit, the segment step and done run right after the action.
// Every case prints `[matrix] <action> @ <step>: ok|FAIL <why>`; the last test prints the table.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, PATIENCE_MS, startServer, tempProfile } from './harness.mjs';
import {
  deleteOpenMemory,
  editOpenMemory,
  lastReply,
  loadTestEmbedder,
  openMemory,
  send,
  setEdgeRelation,
  setScript,
  TEST_MODEL,
} from './flows.mjs';

// The labelling or summarising call the action lands in lasts row.slowMs: at least MIN_SLOW_MS,
// and about twice as long as this row's actions have taken (a loaded machine acts slower).
const MIN_SLOW_MS = 1_000;
const MAX_SLOW_MS = 8_000;
// Calls before it last row.shortMs: long enough to be seen by polling, short enough to be cheap.
const MIN_SHORT_MS = 250;
const FAST = { delayMs: 1, jsonDelayMs: 5 };
const STEPS = ['summarise', 'embed', 'link', 'late'];
const STEP_TEXT = {
  summarise: 'summarise (summary call in flight)',
  embed: 'embed (summary committed, 0/3 linked)',
  link: 'link (1/3 linked, labelling call in flight)',
  late: 'late (2/3 linked, last call in flight; segment+done follow)',
};
const DATA_STORES = ['sessions', 'turns', 'memories', 'edges', 'segments', 'vectors', 'vectorPacks', 'jobs'];

let server;
const backups = [];
const results = [];
const scratch = join(tmpdir(), 'tealeaf-e2e', `matrix-${process.pid}`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Reading the store

/** Every store that can hold a reference, read in one transaction (vectors and packs by id only). */
async function readAll(page, names = [...DATA_STORES, 'settings']) {
  return page.evaluate(
    (names) =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const have = names.filter((n) => db.objectStoreNames.contains(n));
          const out = Object.fromEntries(names.map((n) => [n, []]));
          if (have.length === 0) {
            db.close();
            resolve(out);
            return;
          }
          const tx = db.transaction(have, 'readonly');
          for (const n of have) {
            const r = tx.objectStore(n).getAll();
            r.onsuccess = () => {
              if (n === 'vectors') out[n] = r.result.map((v) => ({ unitId: v.unitId, modelId: v.modelId }));
              else if (n === 'vectorPacks') out[n] = r.result.map((p) => ({ modelId: p.modelId, pack: p.pack, unitIds: p.unitIds }));
              else if (n === 'settings') out[n] = r.result.filter((s) => s.key === 'repairLog');
              else out[n] = r.result;
            };
          }
          tx.oncomplete = () => {
            db.close();
            resolve(out);
          };
          tx.onerror = () => {
            db.close();
            reject(tx.error);
          };
        };
      }),
    names,
  );
}

/** Invariant 2: every reference names a record that exists. */
function danglingRefs(db) {
  const memories = new Set(db.memories.map((m) => m.id));
  const sessions = new Set(db.sessions.map((s) => s.id));
  const units = new Set([...memories, ...db.segments.map((s) => s.id)]);
  const out = [];
  for (const e of db.edges) {
    if (!memories.has(e.from)) out.push(`edge ${e.id} from missing memory`);
    if (!memories.has(e.to)) out.push(`edge ${e.id} to missing memory`);
  }
  for (const m of db.memories)
    if (m.supersededBy !== undefined && !memories.has(m.supersededBy)) out.push(`memory ${m.id} supersededBy missing ${m.supersededBy}`);
  for (const v of db.vectors) if (!units.has(v.unitId)) out.push(`vector of missing unit ${v.unitId} (${v.modelId})`);
  for (const p of db.vectorPacks)
    for (const id of p.unitIds) if (!units.has(id)) out.push(`vector pack ${p.modelId}/${p.pack} holds missing unit ${id}`);
  for (const t of db.turns) if (!sessions.has(t.sessionId)) out.push(`turn ${t.id} of missing session ${t.sessionId}`);
  for (const s of db.segments) if (!sessions.has(s.sessionId)) out.push(`segment ${s.id} of missing session ${s.sessionId}`);
  for (const j of db.jobs)
    if (j.sessionId !== undefined && !sessions.has(j.sessionId))
      out.push(`job ${j.id} (${j.step}/${j.status}) of missing session ${j.sessionId}`);
  return out;
}

const repairsSince = (db, t) => (db.settings.find((s) => s.key === 'repairLog')?.value ?? []).filter((r) => r.at >= t);
const nonEmpty = (db) =>
  DATA_STORES.filter((n) => db[n].length > 0).map(
    (n) => `${n}=${db[n].length}${n === 'jobs' || n === 'edges' ? ` ${JSON.stringify(db[n].map((r) => r.id))}` : ''}`,
  );
const jobsText = (db) => JSON.stringify(db.jobs.map((j) => [j.sessionId?.slice(-6), j.step, j.status, j.state?.linked, j.lastError]));

/** Reads the page's stores until `predicate` holds (`timeout`: a safety net unless a caller means it). */
async function pollUntil(page, predicate, { timeout = PATIENCE_MS, what, stores }) {
  const end = Date.now() + timeout;
  for (;;) {
    // Polling reads only the stores the predicate needs (`stores`), then everything once: a read
    // of every store each few ms holds them all and slows the app's own writes. Every 50 ms: the
    // shortest call a case waits to see lasts 250 ms, and at 15 ms the polling alone kept a
    // third of a core busy while a case waited.
    const db = await readAll(page, stores);
    if (predicate(db)) return stores ? readAll(page) : db;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; jobs ${jobsText(db)}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// The browser of one row

/** Prints toasts to the console, where the test collects them (they do not survive a reload). */
const WATCH_TOASTS = () => {
  const seen = new WeakSet();
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('[data-testid^="toast-"]')) {
      if (seen.has(el)) continue;
      seen.add(el);
      console.log(`[${el.getAttribute('data-testid')}] ${el.textContent.trim()}`);
    }
  }).observe(document, { subtree: true, childList: true });
};

class Row {
  constructor(opts) {
    this.opts = opts; // { embedder: boolean }
    this.h = undefined;
    this.profile = undefined;
    this.toasts = [];
    this.answers = []; // answers to the next native dialogs (true = OK); OK when empty
    this.n = 0;
    this.actMs = 700; // how long this row's actions take (updated after each)
  }

  get slowMs() {
    return Math.min(MAX_SLOW_MS, Math.max(MIN_SLOW_MS, Math.round(2 * this.actMs + 300)));
  }

  get shortMs() {
    return Math.min(1_500, Math.max(MIN_SHORT_MS, Math.round(this.actMs / 2)));
  }

  async open(profile = this.profile ?? tempProfile()) {
    this.profile = profile;
    this.h = await launch({ profile, init: WATCH_TOASTS });
    const page = this.h.page;
    page.on('console', (m) => {
      const t = m.text();
      if (t.startsWith('[toast-')) this.toasts.push(t);
    });
    page.on('dialog', (d) => void (this.answers.length === 0 || this.answers.shift() ? d.accept() : d.dismiss()));
    await page.goto(`${server.url}/#/chat`);
    return page;
  }

  get page() {
    return this.h.page;
  }

  async dispose() {
    await this.h?.dispose().catch(() => undefined);
    this.h = undefined;
    this.profile = undefined;
  }

  /** Waits for the app to start or fail; returns the fatal text, if any. */
  async started() {
    const page = this.page;
    const fatal = page.getByTestId('fatal');
    // The shell paints first; views render once the store is open, the model list once the
    // services have started.
    await page.getByTestId('nav-models').click();
    await fatal
      .or(page.getByTestId(`load-${TEST_MODEL}`))
      .or(page.getByText('Unload'))
      .first()
      .waitFor();
    if (await fatal.count()) return (await fatal.textContent()).replace(/\s+/g, ' ').trim();
    return undefined;
  }

  /** Loads the scripted model (and the test embedder, for rows that use it). */
  async models({ embedder = this.opts.embedder } = {}) {
    const page = this.page;
    await setScript(page, FAST);
    await page.getByTestId('nav-models').click();
    const load = page.getByTestId(`load-${TEST_MODEL}`);
    await load.or(page.getByText('Unload')).first().waitFor();
    if (await load.count()) await load.click();
    await page
      .getByTestId('model-status')
      .filter({ hasText: /scripted/i })
      .waitFor();
    if (embedder === true) await loadTestEmbedder(page);
    else if (embedder === 'start') {
      // Started, not waited for (the next case waits for it before its job).
      const state = page.getByTestId('embedder-state');
      const button = page.getByTestId('load-embedder');
      if (!/Ready|Loading/.test(await state.textContent()) && (await button.count()) > 0) await button.click();
    }
  }

  /** Chats `lines` in the current (or a new) session and returns the session's id. */
  async chat(lines) {
    const page = this.page;
    await page.getByTestId('nav-chat').click();
    for (const text of lines) {
      await send(page, text);
      // The scripted reply repeats the message: wait for *its* reply (a new session may have begun).
      await page.getByTestId('turn-assistant').last().filter({ hasText: text }).waitFor();
      await lastReply(page);
    }
    const db = await readAll(page);
    return db.sessions.filter((s) => s.status === 'open').sort((a, b) => b.lastActivityAt - a.lastActivityAt)[0]?.id;
  }

  /** Ends the current session; resolves with the id of the job it queued. */
  async end(sessionId) {
    await this.page.getByTestId('end-session').click();
    const db = await pollUntil(this.page, (d) => d.jobs.some((j) => j.sessionId === sessionId), {
      what: 'the job to be queued',
      stores: ['jobs'],
    });
    return db.jobs.find((j) => j.sessionId === sessionId).id;
  }

  /** A whole quick session, memorised: the older memories (and links) a case's job links to. */
  async quickSession(lines) {
    const t0 = Date.now();
    await setScript(this.page, FAST);
    const sid = await this.chat(lines);
    const t1 = Date.now();
    const jobId = await this.end(sid);
    const t2 = Date.now();
    await pollUntil(this.page, (d) => d.jobs.find((j) => j.id === jobId)?.status === 'done', {
      what: 'a quick session to be memorised',
      stores: ['jobs'],
    });
    if (process.env.MATRIX_VERBOSE)
      console.log(`[matrix:time] quick session: chat ${t1 - t0} ms, end ${t2 - t1} ms, job ${Date.now() - t2} ms`);
    return sid;
  }

  /** Fresh browser with models loaded and a memorised session with links. */
  async setup() {
    const t0 = Date.now();
    await this.open();
    await this.models({ embedder: this.opts.embedder ? 'start' : false });
    const t = `s${++this.n}`;
    await this.quickSession([
      `My sister loves the garden ${t}a`,
      `We planted a tree in the garden ${t}b`,
      `The tree in the garden grew tall ${t}c`,
    ]);
    if (process.env.MATRIX_VERBOSE) console.log(`[matrix:time] row setup ${((Date.now() - t0) / 1000).toFixed(2)} s`);
  }
}

// ---------------------------------------------------------------------------------------------
// Driving the job to a step

function caseJob(db, jobId) {
  return db.jobs.find((j) => j.id === jobId);
}

/** Whether the job is at `step` (see STEP_TEXT), with the targeted call in flight. */
function atStep(step, job, db, sessionId) {
  if (!job) return false;
  const mine = db.memories.filter((m) => m.sessionId === sessionId).length;
  switch (step) {
    case 'summarise':
      return job.step === 'summarise' && mine === 0;
    case 'embed':
      return mine > 0 && (job.step === 'embed' || (job.step === 'link' && (job.state?.linked ?? 0) === 0));
    case 'link':
      return job.step === 'link' && job.state?.linked === 1;
    case 'late':
      return job.step === 'link' && job.state?.linked === 2;
    default:
      return false;
  }
}

/** Where the job is, in words (to report where an action really landed). */
function whereIs(job, db, sessionId) {
  if (!job) return 'job gone';
  const mine = db.memories.filter((m) => m.sessionId === sessionId).length;
  return `${job.step}${job.step === 'link' ? ` ${job.state?.linked ?? 0}/${job.state?.memoryIds?.length}` : ''}/${job.status}${job.step === 'summarise' ? ` (${mine} memories)` : ''}`;
}

/**
 * Chats a 3-line session, ends it, and returns once its job is at `step` with the slow call in
 * flight. Only the targeted call is slow: the script is switched while the call before it runs.
 */
async function driveTo(row, step, tag) {
  const page = row.page;
  await setScript(page, FAST);
  const lines = [
    `I visited the lake with my cousin ${tag}a`,
    `My cousin swims in the lake every summer ${tag}b`,
    `We cooked fish by the lake after the swim ${tag}c`,
  ];
  const sessionId = await row.chat(lines);
  // The call before the targeted one is short; the targeted one slow.
  const switchAt = { summarise: null, embed: 'summarise', link: 'link0', late: 'link1' }[step];
  await setScript(page, { delayMs: 1, jsonDelayMs: switchAt === null ? row.slowMs : row.shortMs });
  const jobId = await row.end(sessionId);
  if (switchAt) {
    await pollUntil(
      page,
      (db) => {
        const j = caseJob(db, jobId);
        if (!j) return false;
        if (switchAt === 'summarise') return j.step === 'summarise';
        const linked = j.state?.linked ?? 0;
        return j.step === 'link' && linked === Number(switchAt.slice(4));
      },
      { what: `the call before ${step}`, stores: ['jobs'] },
    );
    await sleep(80); // that call has read its (short) delay by now
    await setScript(page, { delayMs: 1, jsonDelayMs: row.slowMs });
  }
  const db = await pollUntil(page, (d) => atStep(step, caseJob(d, jobId), d, sessionId), {
    what: `step ${step}`,
    stores: ['jobs', 'memories'],
  });
  return { sessionId, jobId, db, lines };
}

// ---------------------------------------------------------------------------------------------
// Actions: each takes the row, the case and the store as it was at the step; it acts through the
// UI and returns what its effect must be.

const ofSession = (db, sid) => db.memories.filter((m) => m.sessionId === sid).sort((a, b) => a.id.localeCompare(b.id));
const older = (db, sid) => db.memories.filter((m) => m.sessionId !== sid).sort((a, b) => a.time - b.time || a.createdAt - b.createdAt);

/** The memory a memory action targets at each step (see the file header). */
function targetMemory(step, db, sid) {
  const mine = ofSession(db, sid);
  if (step === 'summarise') return older(db, sid).at(-1); // a candidate for the new memories
  if (step === 'embed') return mine[0]; // the memory being labelled
  if (step === 'link') return mine[0]; // linked, and a candidate of the call in flight
  return mine[1]; // late: linked, and a candidate of the last call
}

/** The edge an edge action targets: the newest link of the target memory, else the newest link. */
function targetEdge(step, db, sid) {
  const m = targetMemory(step, db, sid);
  const touching = db.edges.filter((e) => e.to === m?.id || e.from === m?.id).sort((a, b) => b.createdAt - a.createdAt);
  return touching[0] ?? [...db.edges].sort((a, b) => b.createdAt - a.createdAt)[0];
}

const textOf = (db, id) => db.memories.find((m) => m.id === id)?.text;
/** A fragment of a memory's text that is unique (the tag at its end). */
const handle = (text) => text.split(' ').at(-1);

async function importBackupUi(page, file, mode) {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('import-mode').selectOption(mode);
  await page.getByTestId('import-file').setInputFiles(file);
  await page.getByTestId('import-run').click();
  await confirmInPage(page, /replace|import|yes|ok|continue/i);
  const done = page.getByTestId('import-done');
  const err = page.getByTestId('import-error');
  await done.or(err).first().waitFor();
  if (await err.count()) throw new Error(`import refused: ${await err.textContent()}`);
}

/** A confirmation shown in the page (should native confirm() give way to real dialogs). */
async function confirmInPage(page, yes, { keep = false, wait = 300 } = {}) {
  const dialog = page.locator('dialog[open], [role="alertdialog"], [role="dialog"]').filter({ has: page.locator('button') });
  try {
    await dialog.first().waitFor({ timeout: wait });
  } catch {
    return false;
  }
  const d = dialog.first();
  const buttons = d.locator('button');
  const texts = await buttons.allTextContents();
  let i = keep ? texts.findIndex((t) => /keep/i.test(t)) : -1;
  if (i < 0) i = texts.findIndex((t) => yes.test(t) && !/cancel|keep|^no\b/i.test(t));
  if (i >= 0) await buttons.nth(i).click();
  return i >= 0;
}

const ACTIONS = {
  'delete a memory': {
    needs: 'memory',
    async act(row, c) {
      const m = targetMemory(c.step, c.at, c.sessionId);
      await openMemory(row.page, handle(m.text));
      await deleteOpenMemory(row.page);
      await row.page.getByTestId('undo-bar').waitFor();
      return { id: m.id, text: m.text };
    },
    effect(db, e) {
      const out = [];
      if (db.memories.some((m) => m.id === e.id)) out.push(`deleted memory ${e.id} is back`);
      if (db.memories.some((m) => m.text === e.text)) out.push(`a memory with the deleted text is back`);
      const edges = db.edges.filter((x) => x.from === e.id || x.to === e.id);
      if (edges.length) out.push(`edges to the deleted memory: ${edges.map((x) => x.id).join(', ')}`);
      return out;
    },
  },
  'delete a memory, then Undo': {
    needs: 'memory',
    async act(row, c) {
      const m = targetMemory(c.step, c.at, c.sessionId);
      const edgesBefore = c.at.edges.filter((x) => x.from === m.id || x.to === m.id).map((x) => x.id);
      await openMemory(row.page, handle(m.text));
      await deleteOpenMemory(row.page);
      await row.page.getByTestId('undo-bar').waitFor();
      await row.page.getByTestId('undo').click();
      await row.page.getByTestId('undo-bar').waitFor({ state: 'detached' });
      // Feedback: the memory is shown again (selected), or an error toast says why not.
      await row.page
        .locator('aside[aria-label="Memory details"] h3')
        .filter({ hasText: handle(m.text) })
        .first()
        .or(row.page.getByTestId('toast-error'))
        .first()
        .waitFor();
      return { id: m.id, text: m.text, edgesBefore };
    },
    effect(db, e) {
      const out = [];
      if (!db.memories.some((m) => m.id === e.id && m.text === e.text)) out.push(`the memory is not back after Undo (${e.id})`);
      const missing = e.edgesBefore.filter((id) => !db.edges.some((x) => x.id === id));
      if (missing.length) out.push(`links not restored by Undo: ${missing.join(', ')}`);
      return out;
    },
  },
  'edit a memory': {
    needs: 'memory',
    async act(row, c) {
      const m = targetMemory(c.step, c.at, c.sessionId);
      const text = `Edited by hand during ${c.step} ${c.tag}x`;
      await openMemory(row.page, handle(m.text));
      await editOpenMemory(row.page, text);
      return { id: m.id, text };
    },
    effect(db, e) {
      const m = db.memories.find((x) => x.id === e.id);
      if (!m) return [`edited memory ${e.id} is gone`];
      const out = [];
      if (m.text !== e.text) out.push(`text is "${m.text}", not the edit`);
      if (m.edited !== true) out.push('edited flag lost');
      return out;
    },
  },
  "change an edge's relation": {
    needs: 'edge',
    async act(row, c) {
      const e = targetEdge(c.step, c.at, c.sessionId);
      const relation = e.relation === 'Cause' ? 'Reason' : 'Cause';
      await openMemory(row.page, handle(textOf(c.at, e.to)));
      await setEdgeRelation(row.page, e.id, relation);
      await pollUntil(row.page, (d) => d.edges.some((x) => x.id === e.id && x.relation === relation), {
        what: 'the relation to be saved',
      });
      return { id: e.id, relation };
    },
    effect(db, e) {
      const x = db.edges.find((y) => y.id === e.id);
      if (!x) return [`changed edge ${e.id} is gone`];
      const out = [];
      if (x.relation !== e.relation) out.push(`relation is ${x.relation}, not ${e.relation}`);
      if (x.origin !== 'user') out.push(`origin is ${x.origin}, not user`);
      return out;
    },
  },
  'delete an edge': {
    needs: 'edge',
    async act(row, c) {
      const e = targetEdge(c.step, c.at, c.sessionId);
      await openMemory(row.page, handle(textOf(c.at, e.to)));
      await setEdgeRelation(row.page, e.id, null);
      return { id: e.id, from: e.from, to: e.to };
    },
    effect(db, e) {
      return db.edges.some((x) => (x.from === e.from && x.to === e.to) || (x.from === e.to && x.to === e.from))
        ? [`deleted edge ${e.id} is back`]
        : [];
    },
  },
  'merge-import a backup': {
    exclusive: true,
    async act(row, c) {
      const b = backups[c.index % backups.length];
      await importBackupUi(row.page, b.file, 'merge');
      return { backup: b, before: c.at };
    },
    effect(db, e, phase) {
      const out = [];
      for (const store of ['sessions', 'turns', 'memories', 'edges', 'segments']) {
        const have = new Set(db[store].map((r) => r.id));
        const lost = e.backup.data[store].filter((r) => !have.has(r.id));
        if (lost.length) out.push(`${lost.length} ${store} of the backup missing (${phase})`);
        const gone = e.before[store].filter((r) => !have.has(r.id));
        if (gone.length)
          out.push(
            `${gone.length} ${store} that were here before the merge are gone (${phase}): ${gone
              .slice(0, 3)
              .map((r) => r.id)
              .join(', ')}`,
          );
      }
      return out;
    },
  },
  'replace-import a backup': {
    exclusive: true,
    async act(row, c) {
      const b = backups[c.index % backups.length];
      await importBackupUi(row.page, b.file, 'replace');
      return { backup: b };
    },
    effect(db, e, phase) {
      // Once the chat check has run, its session is here too: only the import's result is compared.
      if (phase === 'after the chat check') return [];
      const out = [];
      for (const store of ['sessions', 'turns', 'memories', 'edges', 'segments']) {
        const want = new Set(e.backup.data[store].map((r) => r.id));
        const have = new Set(db[store].map((r) => r.id));
        const extra = [...have].filter((id) => !want.has(id));
        const lost = [...want].filter((id) => !have.has(id));
        if (extra.length) out.push(`${extra.length} ${store} not from the backup (${phase}): ${extra.slice(0, 3).join(', ')}`);
        if (lost.length) out.push(`${lost.length} ${store} of the backup missing (${phase})`);
      }
      const jobs = db.jobs.filter((j) => !e.backup.data.sessions.some((s) => s.id === j.sessionId));
      if (jobs.length) out.push(`jobs not from the backup (${phase}): ${jobsText({ jobs })}`);
      return out;
    },
  },
  'Delete all my data': {
    wipes: true,
    async act(row) {
      const page = row.page;
      await page.getByTestId('nav-settings').click();
      const loaded = page.waitForEvent('load');
      await page.getByTestId('delete-all').click();
      // The in-page dialog: models kept (box unticked), Delete everything.
      if (await confirmInPage(page, /delete|ok|yes|continue/i, { keep: true })) await confirmInPage(page, /delete|ok|yes|continue/i);
      await loaded;
      return {};
    },
    effect(db, _e, phase) {
      if (phase === 'after the chat check') return [];
      const left = nonEmpty(db);
      return left.length ? [`records left ${phase}: ${left.join('; ')}`] : [];
    },
  },
  'Delete all my data (in a second tab)': {
    // The job keeps running in the first tab (it holds the job lock) while the second one wipes.
    wipes: true,
    otherTab: true,
    async act(row) {
      const other = await row.h.context.newPage();
      try {
        await other.goto(`${server.url}/#/settings`);
        const loaded = other.waitForEvent('load');
        await other.getByTestId('delete-all').click();
        if (await confirmInPage(other, /delete|ok|yes|continue/i, { keep: true })) await confirmInPage(other, /delete|ok|yes|continue/i);
        await loaded;
        await other.getByTestId('nav-chat').waitFor();
      } finally {
        await other.close();
      }
      return {};
    },
    effect: (...args) => ACTIONS['Delete all my data'].effect(...args),
  },
  'switch the embedding model': {
    async act(row, c) {
      const page = row.page;
      await page.getByTestId('nav-models').click();
      const select = page.getByTestId('embedder-choice');
      // The list fills in once the catalog has loaded.
      await select.locator('option').first().waitFor({ state: 'attached' });
      const options = await select.locator('option').evaluateAll((os) => os.map((o) => o.value));
      const to = options[c.index % options.length];
      await select.selectOption(to);
      await page.getByTestId('embedder-state').filter({ hasText: 'Ready' }).waitFor();
      return { to, modelId: (await page.getByTestId('embedder-state').textContent()).replace(/^.*Ready:\s*/, '').trim() };
    },
    async settle(page, e, db) {
      // Re-embedding runs in the background after the job: give it a moment before judging.
      return pollUntil(page, (d) => this.effect(d, e, 'after the job').length === 0, { timeout: 5_000, what: 'vectors' }).catch(() => db);
    },
    effect(db, e, phase) {
      if (phase !== 'after the job') return [];
      // Everything searchable has a vector of the model in use once the background work is done.
      const have = new Set(db.vectors.filter((v) => v.modelId === e.modelId).map((v) => v.unitId));
      const missing = [...db.memories.map((m) => m.id), ...db.segments.map((s) => s.id)].filter((id) => !have.has(id));
      return missing.length ? [`${missing.length} memories/segments without a ${e.modelId} vector`] : [];
    },
  },
  'close the tab': {
    closes: true,
    async act(row) {
      await row.h.close();
      return {};
    },
    effect() {
      return [];
    },
  },
};

// ---------------------------------------------------------------------------------------------
// One case

/** Runs one case; a step that throws is reported with the phase it was in. */
async function runCase(row, action, step, index) {
  let retried;
  for (let attempt = 0; ; attempt++) {
    const st = { phase: 'setting up', checked: false };
    try {
      const r = await caseBody(row, action, step, index, st);
      if (retried) r.notes.push(`retried once: ${retried}`);
      return r;
    } catch (e) {
      const msg = `${String(e?.message ?? e).split('\n')[0]} (while ${st.phase})`;
      // Missing the step (polling outrun on a loaded machine) is not the app's fault: nothing was
      // done yet, so let that job finish and try once more with a new session.
      if (attempt === 0 && !st.checked && st.phase.startsWith('driving')) {
        retried = msg;
        try {
          await setScript(row.page, FAST);
          await pollUntil(row.page, (d) => d.jobs.every((j) => j.status === 'done'), { what: 'the abandoned job', stores: ['jobs'] });
          row.actMs *= 1.5;
          continue;
        } catch {
          /* report the first failure */
        }
      }
      // What the page showed when it failed, for whoever reads the log (and a screenshot on request).
      const shotFile = join(tmpdir(), 'tealeaf-e2e', `matrix-fail-${action.replace(/\W+/g, '-')}-${step}.png`);
      if (process.env.MATRIX_SHOTS) await row.page?.screenshot({ path: shotFile }).catch(() => undefined);
      const seen = await row.page
        ?.evaluate(() => {
          const open = [...document.querySelectorAll('dialog[open], [role="dialog"], [role="alertdialog"], [data-testid="fatal"]')];
          const text = (el) => (el?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 160);
          return `page ${location.hash || '/'}; ${document.readyState}; open: ${open.map(text).join(' | ') || 'none'}; main: ${text(document.querySelector('main'))}`;
        })
        .catch((e) => `page unreadable: ${String(e?.message ?? e).split('\n')[0]}`);
      return { problems: [`${msg} [${seen}]`], notes: retried ? [`retried once: ${retried}`] : [], checked: st.checked, broken: true };
    }
  }
}

async function caseBody(row, action, step, index, st) {
  const A = ACTIONS[action];
  const tag = `q${Math.random().toString(36).slice(2, 7)}`;
  const problems = [];
  const notes = [];
  const started = Date.now();
  let page = row.page;
  const phase = (p) => {
    if (process.env.MATRIX_VERBOSE)
      console.log(`[matrix:time] ${action} @ ${step}: ${((Date.now() - started) / 1000).toFixed(2)} s ${st.phase} -> ${p}`);
    st.phase = p;
  };
  const toastsFrom = row.toasts.length;

  // The embedder loads in the background after each reload: the job needs it from its embed step.
  if (row.opts.embedder) {
    phase('waiting for the embedding model');
    await page.getByTestId('nav-models').click();
    await loadTestEmbedder(page);
  }
  phase(`driving the job to ${step}`);
  const { sessionId, jobId, db: at } = await driveTo(row, step, tag);
  const c = { step, tag, index, sessionId, jobId, at };
  if (A.needs === 'edge' && !targetEdge(step, at, sessionId)) throw new Error('no edge to act on at this step');
  if (A.needs === 'memory' && !targetMemory(step, at, sessionId)) throw new Error('no memory to act on at this step');

  // The action, while the slow call is in flight.
  phase('acting');
  let expect;
  let now;
  const actedAt = Date.now();
  const slowMs = row.slowMs;
  if (A.closes || A.wipes || A.exclusive) {
    // Where the job was when the user acted: nothing can be read after closing or wiping, and an
    // import first waits for the job's step in flight to finish (by design).
    now = await readAll(page);
    expect = await A.act(row, c);
  } else {
    expect = await A.act(row, c);
    now = await readAll(page);
  }
  // An import waits for the call in flight by design: only direct actions tell how slow the page is.
  if (!A.closes && !A.wipes && !A.exclusive) row.actMs = Math.max(0.5 * row.actMs, Date.now() - actedAt);
  const landed = whereIs(caseJob(now, jobId), now, sessionId);
  const landedOk = atStep(step, caseJob(now, jobId), now, sessionId);
  st.checked = true;
  phase('waiting for the job after the action');
  if (!landedOk) notes.push(`landed at ${landed}`);
  if (!A.closes && !A.wipes) await setScript(page, FAST);

  // Let the job write what it would write after the action (or stop), then check the live store.
  if (A.wipes) {
    await row.started();
    // Well past the point where the job's call in flight would have ended and its step written.
    await sleep(Math.max(0, actedAt + slowMs + 1_500 - Date.now()));
    const db = await readAll(page);
    const left = nonEmpty(db);
    if (left.length) problems.push(`after delete-all, ${Date.now() - actedAt} ms after the click: ${left.join('; ')}`);
  } else if (!A.closes) {
    let db;
    try {
      // Done, failed or gone, and in any case past the end of the call that was in flight (a
      // job whose record went away may still be about to write).
      const callOver = actedAt + slowMs + 300;
      db = await pollUntil(
        page,
        (d) => {
          const j = caseJob(d, jobId);
          return Date.now() >= callOver && (!j || j.status === 'done' || j.status === 'failed');
        },
        { timeout: slowMs + 6_000, what: 'the job to finish or stop', stores: ['jobs'] },
      );
    } catch (e) {
      db = await readAll(page);
      notes.push(`job still ${whereIs(caseJob(db, jobId), db, sessionId)} before the reload`);
    }
    const live = danglingRefs(db);
    if (live.length) problems.push(`live store before reload: ${live.slice(0, 4).join('; ')}`);
    problems.push(...A.effect(db, expect, 'before reload'));
  }

  // Reload (or reopen the profile).
  phase('reloading');
  if (A.closes) {
    page = await row.open(row.profile);
  } else if (!A.wipes || A.otherTab) {
    await page.reload();
  }
  const fatal = await row.started();
  if (fatal) {
    problems.push(`the app does not start: ${fatal}`);
    return { problems, notes, checked: st.checked, ms: Date.now() - started, broken: true };
  }
  let db = await readAll(page);
  const afterReload = danglingRefs(db);
  if (afterReload.length) problems.push(`after reload: ${afterReload.slice(0, 4).join('; ')}`);
  const repaired = repairsSince(db, started);
  if (repaired.length) problems.push(`start-up had to repair the store: ${repaired.flatMap((r) => r.notes).join(' ')}`);
  problems.push(...A.effect(db, expect, 'after reload'));

  // The job resumes (models back) and finishes, or is gone with its session.
  phase('loading the models after the reload');
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('composer').waitFor();
  // The embedder (re)loads by itself where it was loaded before (not after a wipe or a replace):
  // started here, not waited for.
  await row.models({ embedder: row.opts.embedder ? 'start' : false });
  try {
    db = await pollUntil(page, (d) => d.jobs.every((j) => j.status === 'done'), { what: 'every job to finish', stores: ['jobs'] });
  } catch (e) {
    db = await readAll(page);
    problems.push(`a job did not finish: ${jobsText(db)}`);
  }
  const job = caseJob(db, jobId);
  const session = db.sessions.find((s) => s.id === sessionId);
  if (session && session.status !== 'memorised')
    problems.push(`case session is ${session.status}, not memorised (job ${job ? whereIs(job, db, sessionId) : 'gone'})`);
  if (!session && job) problems.push('job left for a session that is gone');
  if (A.wipes) {
    // Models loaded again: nothing comes back.
    await sleep(500);
    db = await readAll(page);
  }
  if (A.settle) db = await A.settle(page, expect, db);
  const afterJob = danglingRefs(db);
  if (afterJob.length) problems.push(`after the job: ${afterJob.slice(0, 4).join('; ')}`);
  problems.push(...A.effect(db, expect, 'after the job'));

  // The chat works: a message gets its reply; that session is memorised too.
  phase('checking the chat');
  await row.quickSession([`Checking the chat after ${action} at ${step} ${tag}z`]);
  db = await readAll(page);
  const last = danglingRefs(db);
  if (last.length) problems.push(`after the chat check: ${last.slice(0, 4).join('; ')}`);
  problems.push(...A.effect(db, expect, 'after the chat check'));

  const errors = row.toasts.slice(toastsFrom).filter((t) => t.startsWith('[toast-error]'));
  if (errors.length) problems.push(`error shown: ${errors.join(' | ')}`);
  const pageErrors = row.h.errors.splice(0);
  if (pageErrors.length) problems.push(`page errors: ${pageErrors.join(' | ')}`);
  phase('done');
  return { problems: [...new Set(problems)], notes, checked: st.checked, ms: Date.now() - started };
}

// ---------------------------------------------------------------------------------------------

// MATRIX_ONLY=<substring> runs only the rows whose action contains it (while working on one).
const ROWS = [
  { action: 'delete a memory' },
  { action: 'delete a memory, then Undo' },
  { action: 'edit a memory' },
  { action: "change an edge's relation" },
  { action: 'delete an edge' },
  { action: 'merge-import a backup' },
  { action: 'replace-import a backup' },
  { action: 'Delete all my data' },
  { action: 'Delete all my data (in a second tab)' },
  { action: 'switch the embedding model' },
  { action: 'close the tab' },
].filter(({ action }) => !process.env.MATRIX_ONLY || action.includes(process.env.MATRIX_ONLY));

before(async () => {
  server = await startServer();
  mkdirSync(scratch, { recursive: true });
  // Backups of another profile (without vectors): 1, 2, ... sessions, each export cumulative.
  const row = new Row({ embedder: false });
  await row.open();
  try {
    await row.models();
    for (let i = 1; i <= 2; i++) {
      await row.quickSession([`My uncle keeps bees in backup ${i} b${i}k`, `The bees of my uncle made honey b${i}h`]);
      const page = row.page;
      await page.getByTestId('nav-settings').click();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
      const file = join(scratch, `backup-${i}.json`);
      await download.saveAs(file);
      const backup = JSON.parse(readFileSync(file, 'utf8'));
      backups.push({ file, data: backup.data });
    }
  } finally {
    await row.dispose();
  }
});

after(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

for (const { action } of ROWS) {
  test(`matrix row: ${action}`, { timeout: 900_000 }, async () => {
    const row = new Row({ embedder: true });
    const failures = [];
    try {
      await row.setup();
      for (const [index, step] of STEPS.entries()) {
        const r = await runCase(row, action, step, index);
        const ok = r.problems.length === 0;
        const line = `[matrix] ${action} @ ${step}: ${ok ? 'ok' : `FAIL ${r.problems.join('; ')}`}${r.notes.length ? ` [${r.notes.join('; ')}]` : ''}${r.checked ? '' : ' (not checked: the case did not get to its action)'}`;
        console.log(line);
        results.push({ action, step, ok, checked: r.checked, why: r.problems.join('; '), notes: r.notes, ms: r.ms });
        if (!ok) failures.push(line);
        // A failed case may leave the profile broken: the next case starts from a fresh one.
        if (!ok || r.broken) {
          await row.dispose();
          if (index < STEPS.length - 1) await row.setup();
        }
      }
    } finally {
      await row.dispose();
    }
    assert.deepEqual(failures, []);
  });
}

test('matrix summary', () => {
  const checked = results.filter((r) => r.checked);
  const cell = (a, s) => {
    const r = results.find((x) => x.action === a && x.step === s);
    return !r ? 'not run' : r.ok ? 'ok' : 'FAIL';
  };
  for (const s of STEPS) console.log(`[matrix] ${s}: ${STEP_TEXT[s]}`);
  console.log(`[matrix] ${['action', ...STEPS].join(' | ')}`);
  for (const { action } of ROWS) console.log(`[matrix] ${[action, ...STEPS.map((s) => cell(action, s))].join(' | ')}`);
  console.log(`[matrix] cases checked: ${checked.length}`);
  const failed = results.filter((r) => !r.ok).map((r) => `${r.action} @ ${r.step}: ${r.why}`);
  assert.deepEqual(failed, [], 'every case passes');
  // Rows this run selected (all, or those a rerun of failing tests names): each ran every step.
  const ran = new Set(results.map((r) => r.action));
  assert.ok(ran.size > 0, 'some row ran');
  assert.equal(checked.length, ran.size * STEPS.length, 'every case of every row that ran was checked');
});
