// What TeaFarm compares: the method with every reply-time part on, no memory at all, and each
// reply-time switch off in turn. Switches that act while memorising (relation-aware linking) would
// need the memories made again, so they are not conditions here (docs/METHOD.md §1.8).
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from '../settings';

export type ConditionId = 'full' | 'no-memory' | 'no-refinement' | 'plain-topk' | 'no-requery' | 'no-persona-bank';

export interface Condition {
  id: ConditionId;
  label: string;
  /** One line on what differs from full memory. */
  description: string;
}

export const CONDITIONS: readonly Condition[] = [
  { id: 'full', label: 'Full memory', description: 'Timelines, refinement, re-query and persona banks all on.' },
  { id: 'no-memory', label: 'Memory off', description: 'Nothing retrieved: the reply sees only the new conversation.' },
  { id: 'no-refinement', label: 'Without timeline refinement', description: 'Raw timelines go into the prompt.' },
  { id: 'plain-topk', label: 'Plain top-k retrieval', description: 'The retrieved memories alone, no timelines.' },
  { id: 'no-requery', label: 'Without self-reflection re-query', description: 'What was found is not judged, and no second search runs.' },
  { id: 'no-persona-bank', label: 'Without persona banks', description: 'Current traits are not added to every prompt.' },
];

export const CONDITION_IDS: readonly ConditionId[] = CONDITIONS.map((c) => c.id);

export function isConditionId(x: unknown): x is ConditionId {
  return typeof x === 'string' && (CONDITION_IDS as readonly string[]).includes(x);
}

export function conditionLabel(id: ConditionId): string {
  return CONDITIONS.find((c) => c.id === id)?.label ?? id;
}

/** The settings a condition replies with, from the user's (or benchmark's) settings. */
export function conditionSettings(id: ConditionId, base: MemorySettings): MemorySettings {
  // Full memory turns every reply-time part on, so each ablation differs from it in one switch.
  const full: MemorySettings = {
    ...base,
    refinement: true,
    retrievalMode: 'timelines',
    reflectiveRequery: true,
    // The call before every reply, also in the continuing pretend conversation: the app makes it
    // only on a chat's first message when unsure (a wait the person feels), an evaluation can wait.
    refineWhenUnsure: false,
    personaBankShare: base.personaBankShare > 0 ? base.personaBankShare : DEFAULT_MEMORY_SETTINGS.personaBankShare,
  };
  switch (id) {
    case 'full':
      return full;
    case 'no-memory':
      // A zero budget: prepareTurn searches nothing; no bank, no re-query.
      return { ...full, contextBudgetWords: 0, personaBankShare: 0, reflectiveRequery: false };
    case 'no-refinement':
      return { ...full, refinement: false };
    case 'plain-topk':
      return { ...full, retrievalMode: 'plain-topk' };
    case 'no-requery':
      return { ...full, reflectiveRequery: false };
    case 'no-persona-bank':
      return { ...full, personaBankShare: 0 };
  }
}
