// The built-in demo: a short life in six chats between the user and Tealeaf over four months,
// with the memories and links the method would form, so a new user can explore a rich graph at
// once. Written by hand for this project. Four threads: training for a half-marathon (a knee
// injury hinders it; running gives way to swimming, a Changed trait), a sister's wedding speech,
// learning Portuguese for a trip to Lisbon, and tea giving way to coffee (a superseded trait).
// Every id starts with "demo:" and depends only on the script, so loading it twice adds nothing.
import type { Edge, Id, Memory, MemoryKind, Millis, Relation, Role, Session, Turn } from '../../memory/types';
import { DEMO_PREFIX, demoSessionId } from './ids';

export { DEMO_PREFIX, demoSessionId };

export interface DemoData {
  sessions: Session[];
  turns: Turn[];
  memories: Memory[];
  edges: Edge[];
}

const MINUTE = 60_000;
const DAY = 86_400_000;

interface ScriptSession {
  title: string;
  daysAgo: number;
  /** [speaker, text]; 'u' the user, 'a' Tealeaf. */
  turns: Array<['u' | 'a', string]>;
}

const SCRIPT: ScriptSession[] = [
  {
    title: 'Signed up for a half-marathon',
    daysAgo: 122,
    turns: [
      ['u', 'I did it: I signed up for my first half-marathon, the Riverside Half!'],
      ['a', 'Congratulations, that is a big step! How much are you running at the moment?'],
      ['u', 'About 15 km a week. I love running early in the morning, before the city wakes up.'],
      ['a', 'Early runs are a great habit to build on. Many plans go up to four runs a week, with one long run that grows to about 18 km.'],
      ['u', 'That sounds right. I want to follow a 16-week plan and run four times a week.'],
      ['a', 'Deal. I will keep it encouraging, and I will remind you that rest days count as training too.'],
      ['u', 'Ha, good. Also, my sister Ana is getting married and I am giving the speech. Terrifying.'],
      ['a', 'Two big projects at once! We can work on the speech whenever you like.'],
      ['u', 'Thanks. Off to make a pot of tea now. I am a tea person, always have been.'],
    ],
  },
  {
    title: 'Knee trouble',
    daysAgo: 97,
    turns: [
      ['u', "Bad news. I felt a sharp pain in my left knee on Sunday's long run, around kilometre 14."],
      ['a', 'I am sorry to hear that. Did you stop running straight away?'],
      ['u', "I limped home. The physio says it is runner's knee: no running for six weeks."],
      ['a', 'That is frustrating, with the race coming up. How are you feeling about it?'],
      ['u', 'Honestly, gutted. I had been so consistent.'],
      ['a', 'That makes sense. Six weeks is a pause, not the end. Did the physio suggest anything you can do meanwhile?'],
      ['u', 'Swimming or cycling, to keep my fitness without loading the knee.'],
      ['a', 'Swimming could suit you. Would you like to try it this week?'],
      ['u', "Maybe. Please don't let me talk myself into running early. I know I will try."],
      ['a', 'I will hold you to the six weeks, kindly but firmly.'],
    ],
  },
  {
    title: 'Swimming, and a trip to Lisbon',
    daysAgo: 72,
    turns: [
      ['u', 'Update: I have been swimming three mornings a week at the community pool, and I love it.'],
      ['a', 'That is wonderful! How is the knee?'],
      ['u', 'Much better, no pain at all in the water. To be honest, I think I prefer swimming to running now. It is calmer.'],
      ['a', 'Quite a change from the early-morning runner I met! Why do you think the injury hit you so hard?'],
      ['u', 'Running was how I dealt with stress at work. Losing it felt like losing my pressure valve. Swimming does that job now.'],
      ['a', 'That makes a lot of sense. It is good that you found another valve.'],
      ['u', 'Other news: Miguel and I booked a trip to Lisbon! I want to learn some Portuguese before we go.'],
      ['a', 'Lisbon sounds lovely. Do you want to practise a little with me as well?'],
      [
        'u',
        'Yes! I am using an app ten minutes a day. Funny thing: I have switched to coffee, a small espresso after swimming. Tea just does not do it any more.',
      ],
      ['a', 'A coffee convert! Then your first phrases: "bom dia" is good morning, and "um café, por favor" is a coffee, please.'],
    ],
  },
  {
    title: 'The wedding speech',
    daysAgo: 47,
    turns: [
      ['u', "Ana's wedding is in two weeks and my speech is still a mess."],
      ['a', 'Let us fix it. What do you want people to feel when you finish?'],
      ['u', 'That she is brave. She moved to Porto alone at nineteen, without a word of Portuguese, and built a life there.'],
      ['a', 'That is the heart of it. Open with one story from that move, then end on the toast.'],
      ['u', 'I will tell the one about her first week: she called me in tears, then went out and found a job the same afternoon.'],
      ['a', 'That story shows exactly the bravery you mean. Keep the whole speech under three minutes.'],
      [
        'u',
        "Will do. Running update: I have decided to postpone the half-marathon to next year. The knee feels fine, but I don't want to rush it.",
      ],
      ['a', 'A wise call. You can build back up without a deadline.'],
    ],
  },
  {
    title: 'After the wedding',
    daysAgo: 21,
    turns: [
      ['u', 'The wedding was beautiful. I gave the speech and Ana cried, in a good way!'],
      ['a', 'That is wonderful! How did you feel afterwards?'],
      ['u', 'So proud, and so relieved. People came up to me all evening.'],
      ['a', 'You earned it. The story about her first week clearly landed.'],
      ['u', 'Ana and her husband are spending their honeymoon in Lisbon too, so we are swapping tips for the trip.'],
      ['a', 'What a coincidence. How is the Portuguese going?'],
      ['u', 'A 30-day streak on the app! But I freeze whenever I try to actually speak.'],
      ['a', 'Completely normal. Shall we practise ordering at a café? I will be the waiter.'],
      ['u', 'Okay... "Um café, por favor."'],
      ['a', 'Perfeito! Next, ask for the bill: "a conta, por favor".'],
    ],
  },
  {
    title: 'Running again',
    daysAgo: 4,
    turns: [
      ['u', 'The physio cleared me to run again, slowly: two easy 5 km runs a week.'],
      ['a', 'Great news! How did the first run feel?'],
      ['u', 'A bit stiff, but no pain. Swimming stays my main exercise, though.'],
      ['a', 'A good balance. Do you want to aim for a race again?'],
      ['u', 'Yes: I want to run the Lisbon half-marathon during our trip!'],
      ['a', 'That ties your two goals together. We will build up slowly, to protect the knee.'],
      ['u', 'And afterwards I can order my coffee in Portuguese.'],
      ['a', '"Um café, por favor." You are ready.'],
    ],
  },
];

interface ScriptMemory {
  key: string;
  kind: MemoryKind;
  text: string;
  /** [session number from 1, turn index]. */
  from: Array<[number, number]>;
  context?: string;
}

const MEMORIES: ScriptMemory[] = [
  // Session 1
  { key: 'signup', kind: 'event', text: 'The user signed up for their first half-marathon, the Riverside Half.', from: [[1, 0]] },
  { key: 'runner', kind: 'user-trait', text: 'The user loves running early in the morning.', from: [[1, 2]] },
  {
    key: 'plan',
    kind: 'event',
    text: 'The user wants to follow a 16-week training plan, running four times a week.',
    from: [
      [1, 3],
      [1, 4],
    ],
  },
  {
    key: 'coach',
    kind: 'assistant-trait',
    text: "Tealeaf keeps the user's training encouraging and reminds them that rest days count.",
    from: [[1, 5]],
  },
  { key: 'wedding', kind: 'event', text: "The user's sister Ana is getting married, and the user is giving the speech.", from: [[1, 6]] },
  { key: 'tea', kind: 'user-trait', text: 'The user is a tea person.', from: [[1, 8]] },
  // Session 2
  { key: 'knee', kind: 'event', text: 'The user hurt their left knee on a long run, around kilometre 14.', from: [[2, 0]] },
  {
    key: 'physio',
    kind: 'event',
    text: "A physiotherapist diagnosed runner's knee and told the user not to run for six weeks.",
    from: [[2, 2]],
  },
  { key: 'gutted', kind: 'event', text: 'The user felt gutted about having to stop training.', from: [[2, 4]] },
  {
    key: 'no-early-run',
    kind: 'note',
    text: "If the user wants to run before the six weeks are over, remind them of the physiotherapist's advice.",
    context: 'The user knows they will be tempted to start running again too soon.',
    from: [[2, 8]],
  },
  {
    key: 'firm',
    kind: 'assistant-trait',
    text: 'Tealeaf agreed to hold the user to the six-week break, kindly but firmly.',
    from: [[2, 9]],
  },
  // Session 3
  { key: 'swim', kind: 'event', text: 'The user started swimming three mornings a week at the community pool.', from: [[3, 0]] },
  { key: 'swimmer', kind: 'user-trait', text: 'The user prefers swimming to running; it feels calmer.', from: [[3, 2]] },
  {
    key: 'stress',
    kind: 'event',
    text: 'Running was how the user dealt with stress at work, which is why the injury hit them so hard.',
    from: [
      [3, 3],
      [3, 4],
    ],
  },
  { key: 'lisbon', kind: 'event', text: 'The user and Miguel booked a trip to Lisbon.', from: [[3, 6]] },
  {
    key: 'portuguese',
    kind: 'event',
    text: 'The user wants to learn Portuguese before the Lisbon trip and uses an app ten minutes a day.',
    from: [
      [3, 6],
      [3, 8],
    ],
  },
  { key: 'coffee', kind: 'user-trait', text: 'The user now drinks coffee: a small espresso after swimming.', from: [[3, 8]] },
  // Session 4
  {
    key: 'speech',
    kind: 'event',
    text: "The user's wedding speech tells how Ana moved to Porto alone at nineteen and found a job in her first week.",
    from: [
      [4, 2],
      [4, 4],
    ],
  },
  { key: 'postpone', kind: 'event', text: 'The user postponed the half-marathon to next year so as not to rush the knee.', from: [[4, 6]] },
  // Session 5
  { key: 'gave-speech', kind: 'event', text: "The user gave the speech at Ana's wedding, and Ana cried in a good way.", from: [[5, 0]] },
  { key: 'proud', kind: 'event', text: 'The user felt proud and relieved after the speech.', from: [[5, 2]] },
  { key: 'honeymoon', kind: 'event', text: 'Ana and her husband are spending their honeymoon in Lisbon.', from: [[5, 4]] },
  {
    key: 'streak',
    kind: 'event',
    text: 'The user has a 30-day streak in the Portuguese app but freezes when trying to speak.',
    from: [[5, 6]],
  },
  {
    key: 'cafe',
    kind: 'event',
    text: 'The user practised ordering a coffee in Portuguese with Tealeaf.',
    from: [
      [5, 7],
      [5, 8],
    ],
  },
  // Session 6
  { key: 'cleared', kind: 'event', text: 'The physiotherapist cleared the user to run again: two easy 5 km runs a week.', from: [[6, 0]] },
  { key: 'lisbon-half', kind: 'event', text: 'The user wants to run the Lisbon half-marathon during the trip.', from: [[6, 4]] },
  {
    key: 'slowly',
    kind: 'assistant-trait',
    text: 'Tealeaf will help the user build up their running slowly, to protect the knee.',
    from: [[6, 5]],
  },
];

/** Older -> newer, as the method stores them. */
const EDGES: Array<[string, Relation, string]> = [
  // Thread: running, the knee, swimming.
  ['signup', 'Want', 'plan'],
  ['signup', 'SameTopic', 'coach'],
  ['plan', 'HinderedBy', 'knee'],
  ['knee', 'Cause', 'physio'],
  ['physio', 'React', 'gutted'],
  ['physio', 'Cause', 'no-early-run'],
  ['no-early-run', 'SameTopic', 'firm'],
  ['physio', 'Cause', 'swim'],
  ['gutted', 'Reason', 'stress'],
  ['runner', 'Changed', 'swimmer'],
  ['swim', 'React', 'swimmer'],
  ['signup', 'Changed', 'postpone'],
  ['knee', 'Cause', 'postpone'],
  ['physio', 'Changed', 'cleared'],
  ['cleared', 'Want', 'lisbon-half'],
  ['lisbon-half', 'SameTopic', 'slowly'],
  // Thread: Ana's wedding.
  ['wedding', 'SameTopic', 'speech'],
  ['speech', 'Cause', 'gave-speech'],
  ['gave-speech', 'React', 'proud'],
  ['gave-speech', 'SameTopic', 'honeymoon'],
  // Thread: Portuguese for Lisbon.
  ['lisbon', 'Want', 'portuguese'],
  ['portuguese', 'Cause', 'streak'],
  ['streak', 'Want', 'cafe'],
  // Thread: tea, then coffee.
  ['tea', 'Changed', 'coffee'],
];

const turnId = (n: number, index: number): Id => `${DEMO_PREFIX}s${n}:t${index}`;
const memoryId = (key: string): Id => `${DEMO_PREFIX}m:${key}`;

/**
 * The demo, dated relative to `now` (sessions 122 to 4 days before it), so a fresh demo always
 * looks recent. Pure: the same `now` gives the same records.
 */
export function buildDemo(now: Millis): DemoData {
  const sessions: Session[] = [];
  const turns: Turn[] = [];
  const turnTime = new Map<Id, Millis>();
  const memorisedAt = new Map<Id, Millis>();
  SCRIPT.forEach((s, i) => {
    const n = i + 1;
    const id = demoSessionId(n);
    // Whole minutes, a turn every two minutes.
    const start = Math.floor((now - s.daysAgo * DAY) / MINUTE) * MINUTE;
    s.turns.forEach(([who, text], index) => {
      const role: Role = who === 'u' ? 'user' : 'assistant';
      const time = start + index * 2 * MINUTE;
      turns.push({ id: turnId(n, index), sessionId: id, index, role, text, time, status: 'complete' });
      turnTime.set(turnId(n, index), time);
    });
    const last = turnTime.get(turnId(n, s.turns.length - 1))!;
    sessions.push({
      id,
      title: s.title,
      startedAt: turnTime.get(turnId(n, 0))!,
      lastActivityAt: last,
      endedAt: last,
      status: 'memorised',
      endReason: 'button',
    });
    memorisedAt.set(id, last + MINUTE);
  });

  const byKey = new Map<string, Memory>();
  const memories: Memory[] = MEMORIES.map((m) => {
    const sourceTurnIds = m.from.map(([n, index]) => turnId(n, index));
    const sessionId = demoSessionId(m.from[m.from.length - 1][0]);
    const memory: Memory = {
      id: memoryId(m.key),
      kind: m.kind,
      text: m.text,
      subject: m.kind === 'assistant-trait' ? 'assistant' : 'user',
      // A memory forms at its latest source turn (as the summary parser dates them).
      time: Math.max(...sourceTurnIds.map((t) => turnTime.get(t)!)),
      sourceTurnIds,
      sessionId,
      edited: false,
      createdAt: memorisedAt.get(sessionId)!,
      ...(m.context ? { context: m.context } : {}),
    };
    byKey.set(m.key, memory);
    return memory;
  });

  const edges: Edge[] = EDGES.map(([from, relation, to]) => {
    const a = byKey.get(from)!;
    const b = byKey.get(to)!;
    // A Changed edge between two traits of one kind marks the older one superseded
    // (docs/METHOD.md, section 4).
    if (relation === 'Changed' && a.kind === b.kind && (a.kind === 'user-trait' || a.kind === 'assistant-trait')) a.supersededBy = b.id;
    return { id: `${DEMO_PREFIX}e:${from}->${to}`, from: a.id, to: b.id, relation, origin: 'model', createdAt: b.createdAt };
  });
  return { sessions, turns, memories, edges };
}
