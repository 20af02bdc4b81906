import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, SettingsService } from '../../../src/services/settings';
import { InMemoryRepository } from '../../support/in-memory-repository';

describe('SettingsService', () => {
  it('falls back field by field when the stored record is broken', async () => {
    const repo = new InMemoryRepository();
    await repo.putSetting('app', { idleGapMinutes: -5, autoLoadModel: 'yes', modelMirror: 7, memory: { k: 'three', refinement: false }, extra: 1 });
    const s = await new SettingsService(repo).load();
    expect(s.idleGapMinutes).toBe(DEFAULT_SETTINGS.idleGapMinutes);
    expect(s.autoLoadModel).toBe(true);
    expect(s.modelMirror).toBe('');
    expect(s.memory.k).toBe(DEFAULT_SETTINGS.memory.k);
    expect(s.memory.refinement).toBe(false);
    expect(s).not.toHaveProperty('extra');
  });

  it('persists updates, merging memory switches', async () => {
    const repo = new InMemoryRepository();
    const a = new SettingsService(repo);
    await a.load();
    await a.update({ idleGapMinutes: 30, memory: { retrievalMode: 'plain-topk' } });
    await a.update({ memory: { refinement: false } });
    const b = await new SettingsService(repo).load();
    expect(b.idleGapMinutes).toBe(30);
    expect(b.memory.retrievalMode).toBe('plain-topk');
    expect(b.memory.refinement).toBe(false);
    expect(new SettingsService(repo).idleGapMs).toBe(DEFAULT_SETTINGS.idleGapMinutes * 60_000);
  });
});
