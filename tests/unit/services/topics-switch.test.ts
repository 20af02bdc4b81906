// The topic-nouns switch when the tagger cannot load (a missing chunk offline): the user is told
// once, memories are still found without it, and later settings changes do not rebuild the index
// again and again (each rebuild would stop a running memorise job).
import { describe, expect, it, vi } from 'vitest';

vi.mock('../../../src/models/nouns', () => ({
  loadNounExtractor: vi.fn(() => Promise.reject(new Error('Failed to fetch dynamically imported module'))),
}));

const { MemoryService } = await import('../../../src/services/memory/memory');
const { SettingsService } = await import('../../../src/services/settings');
const { InMemoryRepository } = await import('../../support/in-memory-repository');

describe('the topic-nouns switch without its tagger', () => {
  it('says so once, builds without nouns, and is not retried by unrelated settings changes', async () => {
    const repo = new InMemoryRepository();
    const settings = new SettingsService(repo);
    const service = new MemoryService(
      repo,
      settings,
      () => undefined,
      () => undefined,
    );
    const errors: string[] = [];
    service.on('error', (e) => errors.push(e.message));
    await service.load();
    const load = vi.spyOn(service, 'load');

    await settings.update({ memory: { topicNouns: true } });
    await service.settingsChanged();
    expect(load).toHaveBeenCalledTimes(1);
    expect(service.topicsIndexed).toBe(false);
    expect(errors).toEqual([
      expect.stringMatching(/^Topic matching could not start \(.*Failed to fetch.*\); memories are found without it/),
    ]);

    await settings.update({ temperature: 1 });
    await service.settingsChanged();
    await settings.update({ memoryUse: false });
    await service.settingsChanged();
    expect(load).toHaveBeenCalledTimes(1);
    expect(errors).toHaveLength(1);

    // Flipping the switch off and on again does try again.
    await settings.update({ memory: { topicNouns: false } });
    await service.settingsChanged();
    await settings.update({ memory: { topicNouns: true } });
    await service.settingsChanged();
    expect(load).toHaveBeenCalledTimes(3);
    expect(errors).toHaveLength(2);
  });
});
