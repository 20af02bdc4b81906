// A chat belongs to the device it was started on (docs/SYNC.md, "Job ownership"): only that
// device ends it on the idle gap and memorises it; another device shows it read-only, and a
// message sent there starts a new chat. Two devices through the relay (IdbRepository on
// fake-indexeddb), the chat service on each; then the service alone over the in-memory store.
import 'fake-indexeddb/auto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { Session, Turn } from '../../../src/memory/types';
import type { LanguageModel } from '../../../src/ports';
import { ChatService } from '../../../src/services/chat/chat';
import { plainPreparer } from '../../../src/services/chat/reply-prompt';
import {
  type ChatDevices,
  type ChatPlace,
  NO_SYNC,
  chatPlace,
  isOurs,
  newChatNotice,
  placeWords,
  readChatDevices,
} from '../../../src/services/sync/chat-owner';
import { SyncService } from '../../../src/services/sync/sync-service';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { freshFactory } from '../store/helpers';
import { until } from './devices';

const H = 3600_000;
const T = 1_700_000_000_000;

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  while (closers.length) await closers.pop()!();
});

const model: LanguageModel = { modelId: 'echo', chat: async () => 'noted', json: async () => '{}' };

/** A device: its store, its sync loop and its chat service (with the device's own broadcast channels). */
async function device(name: string, clock: { t: number }) {
  const repo = new IdbRepository(await openTealeafDb({ factory: freshFactory() }));
  const Channel = globalThis.BroadcastChannel;
  vi.stubGlobal(
    'BroadcastChannel',
    class extends Channel {
      constructor(channel: string) {
        super(`${name}/${channel}`);
      }
    },
  );
  const sync = new SyncService(repo);
  const chats: ChatService[] = [];
  const chat = () => {
    const c = new ChatService({
      repo,
      preparer: plainPreparer,
      getModel: () => model,
      idleGapMs: () => H,
      now: () => clock.t,
      saveEveryMs: 0,
      devices: () => readChatDevices(repo.db),
    });
    chats.push(c);
    return c;
  };
  const first = chat();
  vi.unstubAllGlobals();
  closers.push(() => repo.close());
  closers.push(() => sync.turnOff());
  // Before the store closes: a late sync announcement must not make a chat read it.
  closers.push(() => chats.forEach((c) => (c as unknown as { channel?: BroadcastChannel }).channel?.close()));
  return { repo, sync, chat: first, restart: chat };
}

async function paired(clock: { t: number }, before?: (laptop: IdbRepository, phone: IdbRepository) => Promise<void>) {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-owner-')) });
  closers.push(() => relay.close());
  const laptop = await device('laptop', clock);
  const phone = await device('phone', clock);
  await before?.(laptop.repo, phone.repo);
  await laptop.sync.turnOn(relay.url, 'Laptop');
  await until('the upload', async () => laptop.sync.status.phase === 'synced' && !laptop.sync.status.pending);
  await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
  await until('both synced', async () => phone.sync.status.phase === 'synced' && (laptop.sync.status.devices?.length ?? 0) === 2);
  return { relay, laptop, phone };
}

describe('a chat is ended and memorised only on its own device', () => {
  it('the idle end at start-up leaves another device’s open chat alone; its own device ends and memorises it once', async () => {
    const clock = { t: T };
    const { laptop, phone } = await paired(clock);
    const laptopId = (await readChatDevices(laptop.repo.db)).self!;
    await laptop.chat.start();
    await laptop.chat.send('I am planning a trip to Porto');
    const [chat] = await laptop.repo.listSessions();
    expect(chat.deviceId).toBe(laptopId);
    await until('the chat on the phone', async () => (await phone.repo.listTurns(chat.id)).length === 2);
    // The phone shows it, and follows it: the laptop's next message appears there without a reopen.
    await phone.chat.open(chat.id);
    await laptop.chat.send('and then on to Lisbon');
    await until('the laptop’s next message shown on the phone', async () => phone.chat.turns.length === 4);
    expect(phone.chat.owner.place(phone.chat.current)).toEqual({ kind: 'elsewhere', device: 'Laptop' });

    // Two hours later the phone's app starts: the laptop's chat is past the idle gap.
    clock.t += 2 * H;
    const phoneChat = phone.restart();
    await phoneChat.start();
    expect((await phone.repo.getSession(chat.id))?.status).toBe('open');
    expect(await phone.repo.listJobs()).toEqual([]);
    expect(phoneChat.current).toBeUndefined(); // not resumed here either
    const place = chatPlace(await phone.repo.getSession(chat.id), await readChatDevices(phone.repo.db));
    expect(placeWords(place)).toBe('Open on Laptop: continue it there, or start a new chat.');

    // The laptop's own start ends it and queues its memorising; the end reaches the phone, and
    // the phone still queues nothing.
    await laptop.restart().start();
    expect((await laptop.repo.getSession(chat.id))?.status).toBe('ended');
    expect((await laptop.repo.listJobs()).map((j) => [j.kind, j.sessionId])).toEqual([['memorise', chat.id]]);
    await until('the end on the phone', async () => (await phone.repo.getSession(chat.id))?.status === 'ended');
    await phone.restart().start();
    expect(await phone.repo.listJobs()).toEqual([]);
  });

  it('turning sync on or joining adopts the device’s own open chats; the device that unpairs another takes its chats over', async () => {
    const clock = { t: T };
    const open = (id: string): Session => ({ id, title: id, startedAt: T, lastActivityAt: T, status: 'open' });
    const said = (sessionId: string): Turn => ({
      id: `${sessionId}/0`,
      sessionId,
      index: 0,
      role: 'user',
      text: 'hi',
      time: T,
      status: 'complete',
    });
    const { laptop, phone } = await paired(clock, async (l, p) => {
      // Chats open on each device before sync: no device named yet.
      await l.apply({ sessions: [open('on-laptop')], turns: [said('on-laptop')] });
      await p.apply({ sessions: [open('on-phone')], turns: [said('on-phone')] });
    });
    const [l, p] = [await readChatDevices(laptop.repo.db), await readChatDevices(phone.repo.db)];
    expect((await laptop.repo.getSession('on-laptop'))?.deviceId).toBe(l.self);
    expect((await phone.repo.getSession('on-phone'))?.deviceId).toBe(p.self);
    await until('each chat on the other device', async () => (await laptop.repo.getSession('on-phone'))?.deviceId === p.self);
    await until('the laptop’s on the phone', async () => (await phone.repo.getSession('on-laptop'))?.deviceId === l.self);
    expect(placeWords(chatPlace(await laptop.repo.getSession('on-phone'), l))).toBe(
      'Open on Phone: continue it there, or start a new chat.',
    );

    // The laptop unpairs the phone: the phone's open chat is the laptop's now, ended there at the gap.
    await until('both idle', () => [laptop, phone].every((d) => d.sync.status.phase === 'synced' && !d.sync.status.pending));
    await laptop.sync.unpair(p.self);
    expect((await laptop.repo.getSession('on-phone'))?.deviceId).toBe(l.self);
    clock.t += 2 * H;
    await laptop.restart().start();
    expect((await laptop.repo.getSession('on-phone'))?.status).toBe('ended');
    expect((await laptop.repo.listJobs()).map((j) => j.sessionId).sort()).toEqual(['on-laptop', 'on-phone']);
  });
});

describe('the chat service with a chat open on another device', () => {
  const devices: ChatDevices = {
    self: 'phone-id',
    devices: [
      { id: 'laptop-id', name: 'Laptop' },
      { id: 'phone-id', name: 'Phone' },
    ],
  };
  const theirs: Session = { id: 'theirs', title: 'on the laptop', startedAt: T, lastActivityAt: T, status: 'open', deviceId: 'laptop-id' };
  const turns: Turn[] = [
    { id: 'q', sessionId: 'theirs', index: 0, role: 'user', text: 'a question', time: T, status: 'complete' },
    { id: 'r', sessionId: 'theirs', index: 1, role: 'assistant', text: 'being written', time: T, status: 'streaming' },
  ];

  async function setup(d: ChatDevices = devices) {
    const clock = { t: T + 10 };
    const repo = new InMemoryRepository();
    await repo.apply({ sessions: [theirs], turns });
    const notices: string[] = [];
    const chat = new ChatService({
      repo,
      preparer: plainPreparer,
      getModel: () => model,
      idleGapMs: () => H,
      now: () => clock.t,
      saveEveryMs: 0,
      devices: async () => d,
    });
    chat.on('notice', ({ message }) => notices.push(message));
    return { repo, chat, notices, clock };
  }

  it('sending starts a new chat of this device; nothing is added to the other device’s chat, nothing of it ends', async () => {
    const { repo, chat, notices } = await setup();
    await chat.start();
    // Its reply may be streaming on the laptop right now: not marked interrupted here.
    expect((await repo.listTurns('theirs')).map((t) => t.status)).toEqual(['complete', 'streaming']);
    await chat.open('theirs');
    await chat.regenerate('r');
    await chat.editAndResend('q', 'changed here');
    expect(await repo.listTurns('theirs')).toEqual(turns);
    await chat.send('a new thought');
    expect(notices).toEqual(['A new chat started: the one shown is open on Laptop.']);
    const mine = (await repo.listSessions()).find((s) => s.id !== 'theirs')!;
    expect(mine).toMatchObject({ status: 'open', deviceId: 'phone-id' });
    expect((await repo.listTurns(mine.id)).map((t) => t.text)).toEqual(['a new thought', 'noted']);
    expect(await repo.getSession('theirs')).toEqual(theirs);
    expect(await repo.listJobs()).toEqual([]);
  });

  it('a new chat, End session and the idle check leave it open and queue nothing', async () => {
    const { repo, chat, clock } = await setup();
    await chat.open('theirs');
    await chat.endCurrent();
    clock.t += 2 * H;
    await chat.checkIdle();
    await chat.newChat();
    expect(await repo.getSession('theirs')).toEqual(theirs);
    expect(await repo.listJobs()).toEqual([]);
  });

  it('with sync off every chat is this device’s: the idle end at start-up ends it and queues its memorising', async () => {
    const { repo, chat, clock } = await setup(NO_SYNC);
    clock.t += 2 * H;
    await chat.start();
    expect((await repo.getSession('theirs'))?.status).toBe('ended');
    expect((await repo.listJobs()).map((j) => j.sessionId)).toEqual(['theirs']);
  });
});

describe('where a chat can be continued, in words (every case)', () => {
  const ring = [
    { id: 'L', name: 'Laptop' },
    { id: 'P', name: 'Phone' },
    { id: 'N', name: '  ' },
  ];
  const on: ChatDevices = { self: 'P', devices: ring };
  const first: ChatDevices = { self: 'L', devices: ring };
  const open = (deviceId?: string): Pick<Session, 'deviceId' | 'status'> => ({ status: 'open', ...(deviceId ? { deviceId } : {}) });
  const cases: Array<[string, Pick<Session, 'deviceId' | 'status'> | undefined, ChatDevices, ChatPlace, string | undefined]> = [
    ['no chat shown', undefined, on, { kind: 'none' }, undefined],
    ['sync off, a chat started on another device', open('L'), NO_SYNC, { kind: 'here' }, undefined],
    ['sync off, a chat with no device', open(), NO_SYNC, { kind: 'here' }, undefined],
    ['this device’s open chat', open('P'), on, { kind: 'here' }, undefined],
    [
      'open on a paired device',
      open('L'),
      on,
      { kind: 'elsewhere', device: 'Laptop' },
      'Open on Laptop: continue it there, or start a new chat.',
    ],
    [
      'open on a device with no name',
      open('N'),
      on,
      { kind: 'elsewhere', device: 'another device' },
      'Open on another device: continue it there, or start a new chat.',
    ],
    [
      'no device, this is not the first device',
      open(),
      on,
      { kind: 'elsewhere', device: 'Laptop' },
      'Open on Laptop: continue it there, or start a new chat.',
    ],
    ['no device, this is the first device', open(), first, { kind: 'here' }, undefined],
    [
      'its device was unpaired, this is not the first',
      open('gone'),
      on,
      { kind: 'elsewhere', device: 'Laptop' },
      'Open on Laptop: continue it there, or start a new chat.',
    ],
    ['its device was unpaired, this is the first', open('gone'), first, { kind: 'here' }, undefined],
    ['ended on another device', { status: 'ended', deviceId: 'L' }, on, { kind: 'ended' }, undefined],
    ['memorised', { status: 'memorised', deviceId: 'L' }, on, { kind: 'ended' }, undefined],
  ];
  it.each(cases)('%s', (_name, session, d, place, words) => {
    expect(chatPlace(session, d)).toEqual(place);
    expect(placeWords(place)).toBe(words);
    if (session?.status === 'open') expect(isOurs(session, d)).toBe(place.kind === 'here');
  });
  it('the notice when a message starts a new chat', () => {
    expect(newChatNotice({ kind: 'elsewhere', device: 'Laptop' })).toBe('A new chat started: the one shown is open on Laptop.');
    expect(newChatNotice({ kind: 'ended' })).toBe('A new chat started: the previous one had ended and is remembered separately.');
  });
});
