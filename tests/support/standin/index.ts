// The stand-in for Node (unit tests, benchmarks): tokenizers read from node_modules. The e2e page
// uses enforce.ts with its own loader instead (tests/support/scripted-model.ts).
import type { LanguageModel } from '../../../src/ports';
import { enforceWith, type EnforcedModel, type EnforceOptions } from './enforce';
import { engineProfile, type EngineProfile } from './profiles';
import { nodeTokenizers } from './tokenizer-node';

export { cutAt, EnforcedModel, type CallRecord, type EnforceOptions } from './enforce';
export { CACHE_RULES, commonPrefix, extendsExactly, holdAfter, readRequest, type CacheRule, type KvRead, type KvState } from './kv-cache';
export { FAULT_NAMES, FAULTS, FaultInjector, seeded, type FaultConfig, type FaultName } from './faults';
export { countPrompt, DEFAULT_PROFILE, engineProfile, PROFILES, templatePieces, type EngineProfile } from './profiles';
export { loadTokenizer, type Tok, type TokenizerFamily } from './tokenizer';
export { nodeTokenizers } from './tokenizer-node';

/**
 * `model` under a real engine's limits: `window` set from the profile (a profile or its name, see
 * engineProfile), prompts over it refused with ContextOverflowError, outputs cut at the cap and the
 * window, every call logged in `.calls`, faults injected where `options.faults` says.
 */
export function enforce(model: LanguageModel, profile: EngineProfile | string = engineProfile(), options?: EnforceOptions): EnforcedModel {
  return enforceWith(model, typeof profile === 'string' ? engineProfile(profile) : profile, nodeTokenizers, options);
}
