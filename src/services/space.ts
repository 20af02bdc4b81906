// Which memory this tab shows: the user's own, or the demo (a database of its own, so demo chats
// and memories never reach a real reply). Kept per tab in sessionStorage: a reload stays in the
// demo, a new tab or a new browser session opens the user's own memory.
import type { ChangeSet, Repository } from '../ports';
import { DEMO_PREFIX, demoSessionId } from './demo/ids';
import { DEFAULT_SETTINGS, type AppSettings } from './settings';

export type Space = 'own' | 'demo';
const KEY = 'tealeaf-space';

export function currentSpace(): Space {
  try {
    return globalThis.sessionStorage?.getItem(KEY) === 'demo' ? 'demo' : 'own';
  } catch {
    return 'own';
  }
}

export function setSpace(space: Space): void {
  try {
    if (space === 'demo') globalThis.sessionStorage?.setItem(KEY, 'demo');
    else globalThis.sessionStorage?.removeItem(KEY);
  } catch {
    // No session storage (a locked-down browser): the demo cannot be entered, nothing breaks.
  }
}

/** Demo records an earlier version loaded into the user's own memory (every id starts "demo:"). */
export interface LegacyDemo {
  sessions: number;
  memories: number;
  change: ChangeSet;
}

export async function findLegacyDemo(repo: Repository): Promise<LegacyDemo | undefined> {
  const isDemo = (id: string) => id.startsWith(DEMO_PREFIX);
  const [sessions, memories, edges] = await Promise.all([repo.listSessions(), repo.listMemories(), repo.listEdges()]);
  const demoSessions = sessions.filter((s) => isDemo(s.id));
  const demoMemories = memories.filter((m) => isDemo(m.id));
  if (demoSessions.length === 0 && demoMemories.length === 0) return undefined;
  const turns = (await Promise.all(demoSessions.map((s) => repo.listTurns(s.id)))).flat();
  const segments = (await Promise.all(demoSessions.map((s) => repo.listSegmentsBySession(s.id)))).flat();
  const jobs = (await repo.listJobs()).filter((j) => j.sessionId !== undefined && isDemo(j.sessionId));
  return {
    sessions: demoSessions.length,
    memories: demoMemories.length,
    // Memories take their edges and vectors along (src/store/integrity.ts); the rest is named.
    change: {
      deleteSessions: demoSessions.map((s) => s.id),
      deleteTurns: turns.map((t) => t.id),
      deleteMemories: demoMemories.map((m) => m.id),
      deleteEdges: edges.filter((e) => isDemo(e.id) || isDemo(e.from) || isDemo(e.to)).map((e) => e.id),
      deleteSegments: segments.map((s) => s.id),
      deleteJobs: jobs.map((j) => j.id),
    },
  };
}

export { demoSessionId };

/**
 * What of the user's settings the demo gets: only which models to load, so the demo chats with the
 * same model, and what the model self-test found of them. Not the persona, the switches or anything else the user set for their own memory
 * (an export of the demo must hold the demo only).
 */
export function demoSettings(own: AppSettings): AppSettings {
  const pick = <K extends keyof AppSettings>(k: K) => (own[k] === undefined ? {} : { [k]: own[k] });
  return {
    ...structuredClone(DEFAULT_SETTINGS),
    ...pick('chatModelId'),
    ...pick('embeddingModelId'),
    ...pick('serverModel'),
    autoLoadModel: own.autoLoadModel,
    memorySearchModel: own.memorySearchModel,
    modelMirror: own.modelMirror,
    serverUrl: own.serverUrl,
    // The same models: what their self-test found (and the structured mode it chose) comes along.
    modelChecks: structuredClone(own.modelChecks),
  };
}
