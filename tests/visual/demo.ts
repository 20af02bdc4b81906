// Synthetic data for the explorer harness: a small hand-written story (three threads, a superseded
// trait, every relation) and a large generated graph for the render benchmark.

import type { Edge, Memory, MemoryKind, Relation } from '../../src/memory/types';
import { RELATIONS } from '../../src/memory/types';
import type { ExplorerSession, TurnExcerpt } from '../../src/app/explorer/format';

const DAY = 86_400_000;
const START = Date.UTC(2025, 0, 6, 19, 0);

export interface DemoData {
  memories: Memory[];
  edges: Edge[];
  sessions: ExplorerSession[];
  turns: TurnExcerpt[];
}

export function demoGraph(): DemoData {
  const sessionDays = [0, 5, 12, 20, 33, 41, 55, 62, 78, 90, 104, 118];
  const titles = [
    'Long shift at the hospital',
    'Thinking about a change',
    'Cruise invitation',
    'First design course',
    'Meeting Miso',
    'Train trip plans',
    'Portfolio worries',
    'Dinner with Ana',
    'Vet visit',
    'The Oslo trip',
    'First freelance client',
    'Looking back',
  ];
  const sessions: ExplorerSession[] = sessionDays.map((d, i) => ({ id: `s${i}`, startedAt: START + d * DAY, title: titles[i] }));
  const memories: Memory[] = [];
  const turns: TurnExcerpt[] = [];
  const add = (id: string, s: number, kind: MemoryKind, text: string, extra: Partial<Memory> = {}): void => {
    const time = START + sessionDays[s] * DAY + memories.length * 60_000;
    const turnId = `t-${id}`;
    turns.push({
      id: turnId,
      sessionId: `s${s}`,
      role: kind === 'assistant-trait' ? 'assistant' : 'user',
      text: `(${titles[s]}) ${text.replace(/^User /, 'I ')}`,
      time,
    });
    memories.push({
      id,
      kind,
      text,
      time,
      sourceTurnIds: [turnId],
      sessionId: `s${s}`,
      edited: false,
      createdAt: time,
      subject: kind === 'assistant-trait' ? 'assistant' : 'user',
      ...extra,
    });
  };
  // Thread 1: work and a career change.
  add('w1', 0, 'event', 'User worked a double night shift in the ICU');
  add('w2', 0, 'user-trait', 'User is a nurse at a city hospital');
  add('w3', 1, 'event', 'User felt exhausted and close to burnout');
  add('w4', 1, 'event', 'User wants to move into UX design');
  add('w5', 3, 'event', 'User started an evening UX design course');
  add('w6', 3, 'assistant-trait', 'Tealeaf offered to review course assignments');
  add('w7', 6, 'event', 'User is anxious that the portfolio looks too thin');
  add('w8', 6, 'note', 'When the user asks for feedback, they want blunt, concrete points', {
    context: 'Said the soft feedback on the portfolio was not useful',
  });
  add('w9', 10, 'event', 'User landed a first freelance client, a bakery website');
  add('w10', 10, 'user-trait', 'User now works part-time as a designer');
  add('w11', 11, 'event', 'User reduced hospital shifts to two a week');
  add('w12', 11, 'event', 'User feels proud and less tired than in winter');
  add('w13', 1, 'event', 'User talked with their manager about fewer night shifts');
  add('w14', 7, 'event', 'User is saving money in case freelancing is slow');
  // Thread 2: travel and the fear of cruise ships.
  add('t1', 2, 'user-trait', 'User is afraid of cruise ships');
  add('t2', 2, 'event', 'User declined a cousin’s cruise invitation');
  add('t3', 2, 'event', 'User felt guilty about letting the cousin down');
  add('t4', 5, 'event', 'User plans to visit Oslo by overnight train instead');
  add('t5', 5, 'assistant-trait', 'Tealeaf suggested the Bergen line for the views');
  add('t6', 5, 'event', 'User wants to book a sleeper cabin');
  add('t7', 9, 'event', 'User took the train to Oslo with the cousin');
  add('t8', 9, 'event', 'User enjoyed the fjord views from the train');
  add('t9', 9, 'event', 'The ferry leg was cancelled by a storm');
  add('t10', 11, 'user-trait', 'User would consider a short ferry, not a cruise');
  add('t11', 7, 'note', 'Avoid suggesting boat trips without asking first', { context: 'User reacted badly to a cruise suggestion' });
  // Thread 3: the dog, and food.
  add('d1', 4, 'event', 'User adopted a rescue dog named Miso');
  add('d2', 4, 'event', 'User feels calmer walking Miso every morning');
  add('d3', 8, 'event', 'Miso needed a vet visit for a sore paw');
  add('d4', 8, 'event', 'User worries about vet costs on a smaller income');
  add('d5', 8, 'assistant-trait', 'Tealeaf keeps a reminder of Miso’s medicine schedule');
  add('f1', 0, 'user-trait', 'User is vegetarian', { supersededBy: 'f3' });
  add('f2', 7, 'event', 'User tried grilled fish at dinner with Ana');
  add('f3', 7, 'user-trait', 'User now eats fish but no meat');
  add('f4', 7, 'event', 'User wants to learn to cook salmon');
  add('d6', 11, 'event', 'Miso’s paw healed and the walks are longer again');
  // Unlinked memories.
  add('u1', 3, 'user-trait', 'User prefers short answers in the morning');
  add('u2', 6, 'assistant-trait', 'Tealeaf calls the user by their nickname, Jo');
  add('u3', 10, 'event', 'User mentioned a sister living in Lisbon');
  add('u4', 9, 'note', 'Dates in replies should use day-month order');

  const links: [string, string, Relation][] = [
    ['w1', 'w3', 'Cause'],
    ['w2', 'w1', 'SameTopic'],
    ['w3', 'w4', 'Want'],
    ['w3', 'w13', 'Cause'],
    ['w4', 'w5', 'Cause'],
    ['w5', 'w6', 'SameTopic'],
    ['w5', 'w7', 'React'],
    ['w7', 'w8', 'Reason'],
    ['w7', 'w9', 'HinderedBy'],
    ['w13', 'w11', 'Cause'],
    ['w9', 'w10', 'Changed'],
    ['w2', 'w10', 'Changed'],
    ['w10', 'w11', 'Cause'],
    ['w11', 'w12', 'React'],
    ['w9', 'w14', 'Want'],
    ['t1', 't2', 'Cause'],
    ['t2', 't3', 'React'],
    ['t2', 't4', 'Want'],
    ['t4', 't5', 'SameTopic'],
    ['t4', 't6', 'Want'],
    ['t3', 't11', 'Reason'],
    ['t6', 't7', 'Cause'],
    ['t7', 't8', 'React'],
    ['t7', 't9', 'HinderedBy'],
    ['t1', 't10', 'Changed'],
    ['t8', 't10', 'Cause'],
    ['d1', 'd2', 'React'],
    ['d1', 'd3', 'SameTopic'],
    ['d3', 'd4', 'React'],
    ['d3', 'd5', 'Want'],
    ['d3', 'd6', 'Changed'],
    ['f1', 'f2', 'HinderedBy'],
    ['f1', 'f3', 'Changed'],
    ['f2', 'f3', 'Cause'],
    ['f3', 'f4', 'Want'],
    ['d2', 'f2', 'SameTopic'],
  ];
  const byId = new Map(memories.map((m) => [m.id, m]));
  const edges: Edge[] = links.map(([from, to, relation], i) => {
    // Keep the domain rule (from is older) even where the story lists a pair out of order.
    const [a, b] = byId.get(from)!.time <= byId.get(to)!.time ? [from, to] : [to, from];
    return { id: `e${i}`, from: a, to: b, relation, origin: i % 9 === 4 ? 'user' : 'model', createdAt: 0 };
  });
  return { memories, edges, sessions, turns };
}

/** A large synthetic graph: `n` memories over two years, `e` edges in threads of ~40. */
export function largeGraph(n: number, e: number, seed = 1): DemoData {
  let s = seed >>> 0 || 1;
  const rand = (): number => (s = (Math.imul(1664525, s) + 1013904223) >>> 0) / 4294967296;
  const span = 730 * DAY;
  const kinds: MemoryKind[] = ['event', 'event', 'event', 'user-trait', 'assistant-trait', 'note'];
  const sessions: ExplorerSession[] = Array.from({ length: Math.ceil(n / 8) }, (_, i) => ({
    id: `s${i}`,
    startedAt: START + (i / Math.ceil(n / 8)) * span,
    title: `Session ${i + 1}`,
  }));
  const memories: Memory[] = Array.from({ length: n }, (_, i) => {
    const si = Math.min(sessions.length - 1, Math.floor(i / 8));
    const time = sessions[si].startedAt + (i % 8) * 60_000;
    return {
      id: `m${i}`,
      kind: kinds[Math.floor(rand() * kinds.length)],
      text: `Synthetic memory ${i} about topic ${i % 97}`,
      time,
      sourceTurnIds: [],
      sessionId: `s${si}`,
      edited: false,
      createdAt: time,
    };
  });
  const threads = Math.max(1, Math.round(n / 40));
  const edges: Edge[] = [];
  for (let i = 0; i < e; i++) {
    const t = Math.floor(rand() * threads);
    const a = t + threads * Math.floor(rand() * (n / threads));
    const b = t + threads * Math.floor(rand() * (n / threads));
    if (a === b || a >= n || b >= n) continue;
    const [from, to] = a < b ? [a, b] : [b, a];
    edges.push({
      id: `e${i}`,
      from: `m${from}`,
      to: `m${to}`,
      relation: RELATIONS[Math.floor(rand() * RELATIONS.length)],
      origin: 'model',
      createdAt: 0,
    });
  }
  return { memories, edges, sessions, turns: [] };
}
