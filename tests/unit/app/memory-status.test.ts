import { describe, expect, it } from 'vitest';
import {
  headerJob,
  learnedFrom,
  memoriesBySession,
  sentence,
  sessionState,
  type SessionState,
  type SessionStateInput,
} from '../../../src/app/chat/memory-status';
import type { JobSnapshot } from '../../../src/services/memory/jobs';
import type { Memory, Session } from '../../../src/memory/types';

const session = (status: Session['status'], id = 's1') => ({ id, status });
const job = (step: string, extra: Partial<JobSnapshot> = {}): JobSnapshot => ({
  id: 'j1',
  sessionId: 's1',
  status: 'pending',
  step,
  progress: '',
  label: '',
  ...extra,
});
const mem = (id: string, sessionId: string, extra: Partial<Memory> = {}): Memory => ({
  id,
  kind: 'user-trait',
  text: id,
  time: 1,
  sourceTurnIds: [],
  sessionId,
  edited: false,
  createdAt: 1,
  ...extra,
});

/** Creation on, a model ready: each row changes only what makes its state. */
const base = (over: Partial<SessionStateInput>): SessionStateInput => ({
  session: session('ended'),
  creationOn: true,
  engine: 'ready',
  memories: 0,
  ...over,
});

type Row = [name: string, input: SessionStateInput, want: Partial<SessionState>];

// Every state, with the words each place shows. Rows that a shortcut would get wrong are marked.
const ROWS: Row[] = [
  ['open', base({ session: session('open'), job: job('summarise') }), { kind: 'open', label: 'open', tone: 'open', detail: undefined }],
  [
    'waiting for a model (none loaded)',
    base({ job: job('summarise'), engine: 'none' }),
    {
      kind: 'waiting-model',
      label: 'waiting for a model',
      detail: 'Waiting to memorise this chat: memorising needs a loaded model. Load one in Models.',
      ended: ' and will be remembered once a model is loaded',
      tone: 'wait',
    },
  ],
  [
    // Shortcut trap: the record says "running" (a tab closed mid-job) but nothing runs it here.
    'waiting for a model: a closed tab left the record "running"',
    base({ job: job('link', { status: 'running', progress: '2/5' }), engine: 'none' }),
    { kind: 'waiting-model', label: 'waiting for a model' },
  ],
  [
    'waiting for the model to load',
    base({ job: job('summarise'), engine: 'loading' }),
    {
      kind: 'waiting-model',
      label: 'waiting for the model',
      detail: 'Waiting to memorise this chat until the model has loaded.',
      ended: ' and will be remembered once the model has loaded',
    },
  ],
  [
    'waiting for the model server',
    base({ job: job('embed', { status: 'running' }), engine: 'unreachable' }),
    {
      kind: 'waiting-model',
      label: 'waiting for the model server',
      detail: 'Waiting to memorise this chat until the model server answers again.',
      ended: ' and will be remembered once the model server answers again',
    },
  ],
  [
    'waiting: memory creation off (a job is queued)',
    base({ job: job('summarise'), creationOn: false }),
    {
      kind: 'waiting-off',
      label: 'waiting: memory off',
      detail: 'Waiting to memorise this chat: making new memories is switched off in Settings. It is memorised once you switch it on.',
      ended: ' and waits to be remembered: making new memories is switched off',
      tone: 'wait',
    },
  ],
  [
    // Shortcut trap: creation off wins over a job still marked active (it is being stopped).
    'waiting: memory off, though the job was just running',
    base({ job: job('link', { status: 'running', active: true }), creationOn: false }),
    { kind: 'waiting-off' },
  ],
  [
    'queued behind other chats',
    base({ job: job('summarise') }),
    {
      kind: 'queued',
      label: 'queued to memorise',
      detail: 'Queued to memorise: Tealeaf memorises one chat at a time, oldest first.',
      ended: ' and will be remembered',
      tone: 'wait',
    },
  ],
  [
    'memorising step 1 of 4',
    base({ job: job('summarise', { status: 'running', active: true }) }),
    {
      kind: 'memorising',
      label: 'memorising 1/4',
      detail: 'Memorising this chat: step 1 of 4, summarising the chat.',
      ended: ' and is being remembered',
      tone: 'busy',
      step: { n: 1, of: 4 },
    },
  ],
  [
    'memorising, its call held until the chat pauses (a reply under way)',
    base({ job: job('summarise', { status: 'running', active: true }), hold: { waiting: 1 } }),
    {
      kind: 'waiting-chat',
      label: 'waiting for a pause in the chat',
      detail:
        'Memorising this chat (step 1 of 4) waits until you pause: on this model, work between two replies would make the next reply read the whole chat again. It goes on 2 minutes after the reply under way ends, if no other reply comes first.',
      ended: ' and will be remembered once you pause chatting',
      tone: 'wait',
      step: { n: 1, of: 4 },
    },
  ],
  [
    'memorising step 3, held after a reply',
    base({ job: job('link', { status: 'running', active: true, progress: '2/5' }), hold: { waiting: 1, until: 5 } }),
    {
      kind: 'waiting-chat',
      detail:
        'Memorising this chat (step 3 of 4) waits until you pause: on this model, work between two replies would make the next reply read the whole chat again. It goes on 2 minutes after the last reply, if no other reply comes first.',
      step: { n: 3, of: 4, part: { n: 2, of: 5 } },
    },
  ],
  [
    // Shortcut: a held call is the running job's; a queued job is not held by it.
    'queued while another job is held: still queued',
    base({ job: job('summarise'), hold: { waiting: 1 } }),
    { kind: 'queued' },
  ],
  [
    'memorising with nothing held',
    base({ job: job('summarise', { status: 'running', active: true }), hold: { waiting: 0 } }),
    { kind: 'memorising' },
  ],
  [
    'memorising step 3 of 4, 2 of 5 within it',
    base({ job: job('link', { status: 'running', active: true, progress: '2/5' }) }),
    {
      kind: 'memorising',
      label: 'memorising 3/4',
      detail: 'Memorising this chat: step 3 of 4, linking them to what it knew (2 of 5).',
      step: { n: 3, of: 4, part: { n: 2, of: 5 } },
    },
  ],
  [
    'memorising, finishing (the last moment of step 4)',
    base({ job: job('done', { status: 'running', active: true, progress: '0/1' }) }),
    { kind: 'memorising', label: 'memorising 4/4', detail: 'Memorising this chat: step 4 of 4, finishing.', step: { n: 4, of: 4 } },
  ],
  [
    // Active in this tab even while the model went away: the run goes on with the model it has.
    'memorising in this tab while no model is loaded any more',
    base({ job: job('segment', { status: 'running', active: true }), engine: 'none' }),
    { kind: 'memorising', label: 'memorising 4/4' },
  ],
  [
    'failed, with its reason (a question keeps its mark) and a retry',
    base({ job: job('summarise', { id: 'job-7', status: 'failed', lastError: 'Is the model server running?' }) }),
    {
      kind: 'failed',
      label: 'memorising failed',
      detail: 'Memorising this chat failed: Is the model server running?',
      ended: '; memorising it failed',
      tone: 'failed',
      retryJobId: 'job-7',
    },
  ],
  [
    'failed without a model or with creation off: still failed (a retry then waits, and says so)',
    base({ job: job('link', { status: 'failed', lastError: 'scripted JSON failure' }), engine: 'none', creationOn: false }),
    { kind: 'failed', detail: 'Memorising this chat failed: scripted JSON failure.', retryJobId: 'j1' },
  ],
  [
    'not remembered: ended while memory creation was off (no job)',
    base({ creationOn: true }),
    {
      kind: 'not-remembered',
      label: 'not remembered',
      detail: 'This chat ended while making new memories was switched off, so Tealeaf did not remember it.',
      ended: ' and is not remembered: making new memories was switched off when it ended',
      tone: 'off',
    },
  ],
  [
    'remembered, with its memories',
    base({ session: session('memorised'), memories: 2 }),
    {
      kind: 'remembered',
      label: 'remembered',
      detail: 'Tealeaf learned 2 new memories from this chat.',
      ended: ' and is remembered',
      tone: 'done',
    },
  ],
  [
    'remembered, one memory',
    base({ session: session('memorised'), memories: 1 }),
    { detail: 'Tealeaf learned 1 new memory from this chat.' },
  ],
  [
    // Shortcut trap: "memorised" is not "remembered" when nothing was worth keeping.
    'memorised, nothing worth remembering',
    base({ session: session('memorised'), memories: 0 }),
    {
      kind: 'nothing',
      label: 'nothing to remember',
      detail: 'Nothing from this chat needed remembering.',
      ended: ' and was memorised: nothing in it needed remembering',
      tone: 'done',
    },
  ],
  [
    'memorised, memories not read yet',
    base({ session: session('memorised'), memories: undefined }),
    { kind: 'memorised', label: 'memorised', ended: ' and is memorised', detail: undefined },
  ],
];

describe('sessionState: one state per session, its words in every place', () => {
  it.each(ROWS)('%s', (_name, input, want) => {
    const got = sessionState(input);
    expect(got).toMatchObject(Object.fromEntries(Object.entries(want).filter(([, v]) => v !== undefined)));
    for (const key of Object.keys(want) as Array<keyof SessionState>) if (want[key] === undefined) expect(got[key]).toBeUndefined();
  });

  it('covers every state kind', () => {
    const kinds = new Set(ROWS.map(([, input]) => sessionState(input).kind));
    expect([...kinds].sort()).toEqual(
      [
        'failed',
        'memorised',
        'memorising',
        'not-remembered',
        'nothing',
        'open',
        'queued',
        'remembered',
        'waiting-chat',
        'waiting-model',
        'waiting-off',
      ].sort(),
    );
  });

  it('says "will be remembered" only when a job is queued and creation is on', () => {
    for (const [name, input] of ROWS) {
      const ended = sessionState(input).ended ?? '';
      if (/will be remembered/.test(ended)) expect(!!input.job && input.job.status !== 'failed' && input.creationOn, name).toBe(true);
      if (ended === ' and will be remembered') expect(input.creationOn && input.engine === 'ready', name).toBe(true);
    }
  });

  it('never ends a sentence with a doubled mark ("?.")', () => {
    for (const [, input] of ROWS) expect(sessionState(input).detail ?? '').not.toMatch(/[?!.]\.$/);
    expect(sentence('Is it running?')).toBe('Is it running?');
    expect(sentence('It broke')).toBe('It broke.');
    expect(sentence('Said "stop."')).toBe('Said "stop."');
  });
});

describe('headerJob', () => {
  const states: Record<string, SessionState> = {
    a: sessionState(base({ session: session('ended', 'a'), job: job('summarise', { sessionId: 'a' }), engine: 'none' })),
    b: sessionState(base({ session: session('ended', 'b'), job: job('link', { sessionId: 'b', status: 'failed', lastError: 'x' }) })),
  };
  const stateOf = (id: string) => states[id];

  it("speaks in the job's chat state: no 'memorising…' while it waits for a model", () => {
    expect(headerJob([job('summarise', { sessionId: 'a' })], stateOf)).toMatchObject({ label: 'waiting for a model', sessionId: 'a' });
  });

  it('prefers the job under way, then a failed one, then one that waits', () => {
    const running = job('embed', { id: 'r', sessionId: 'r', status: 'running', active: true });
    const runningState = sessionState(base({ session: session('ended', 'r'), job: running }));
    const of = (id: string) => (id === 'r' ? runningState : stateOf(id));
    const pending = job('summarise', { id: 'ja', sessionId: 'a' });
    const failed = job('link', { id: 'jb', sessionId: 'b', status: 'failed' });
    expect(headerJob([pending, failed, running], of)?.label).toBe('memorising 2/4');
    expect(headerJob([pending, failed], of)).toMatchObject({ label: 'memorising failed', tone: 'failed', sessionId: 'b' });
    expect(headerJob([], of)).toBeUndefined();
  });

  it('indexing belongs to no chat', () => {
    const reembed: JobSnapshot = { id: 'reembed', status: 'running', step: 'embed', progress: '32/90', label: 'Indexing memories' };
    const badge = headerJob([reembed], stateOf);
    expect(badge).toMatchObject({ label: 'indexing memories…', detail: 'Indexing memories 32/90' });
    expect(badge?.sessionId).toBeUndefined();
  });
});

describe('memoriesBySession', () => {
  it('counts the memories of each session', () => {
    const counts = memoriesBySession([mem('a', 's1'), mem('b', 's1'), mem('c', 's2')]);
    expect([...counts]).toEqual([
      ['s1', 2],
      ['s2', 1],
    ]);
  });
});

describe('learnedFrom', () => {
  it("lists the session's memories and the traits it changed", () => {
    const memories = [
      mem('tea', 's0', { supersededBy: 'coffee', time: 0 }),
      mem('coffee', 's1', { time: 5 }),
      mem('walk', 's1', { kind: 'event', time: 3 }),
      mem('other', 's2'),
    ];
    const l = learnedFrom('s1', memories);
    expect(l.memories.map((m) => m.id)).toEqual(['walk', 'coffee']);
    expect(l.changed.map((c) => [c.before.id, c.after.id])).toEqual([['tea', 'coffee']]);
    expect(learnedFrom('nope', memories)).toEqual({ memories: [], changed: [] });
  });
});
