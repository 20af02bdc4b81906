// The one state of a session and of the engine, as the app shows them now: memory-status.ts and
// engine-status.ts (pure) fed from the app's state. Every view reads its status words through here.
import type { Id, Memory, Session } from '../../memory/types';
import type { AppState } from '../state.svelte';
import { engineStatus, type EngineStatus } from '../engine-status';
import { headerJob, jobOf, memoriesBySession, sessionState, type HeaderJob, type SessionState } from './memory-status';

// Counted once per version of the live memories (the app replaces the map on every change).
const counted = new WeakMap<Map<Id, Memory>, Map<Id, number>>();
function counts(memories: Map<Id, Memory>): Map<Id, number> {
  let c = counted.get(memories);
  if (!c) counted.set(memories, (c = memoriesBySession(memories.values())));
  return c;
}

export function engineOf(app: AppState): EngineStatus {
  return engineStatus(app.models);
}

export function stateOf(app: AppState, session: Pick<Session, 'id' | 'status'>): SessionState {
  return sessionState({
    session,
    job: jobOf(session.id, app.jobs),
    creationOn: app.settings?.memoryCreation ?? true,
    engine: engineOf(app).kind,
    memories: app.memoryLoaded ? (counts(app.memories).get(session.id) ?? 0) : undefined,
    hold: app.chatHold,
  });
}

/** The app header's job badge. */
export function headerJobOf(app: AppState): HeaderJob | undefined {
  return headerJob(app.jobs, (id) => {
    const session = app.sessions.find((s) => s.id === id);
    return session && stateOf(app, session);
  });
}
