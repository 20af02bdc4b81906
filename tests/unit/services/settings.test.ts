import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, MAX_SYSTEM_PROMPT, SettingsService, TEMPERATURE_RANGE } from '../../../src/services/settings';
import { MemoryService } from '../../../src/services/memory/memory';
import { InMemoryRepository } from '../../support/in-memory-repository';

describe('SettingsService', () => {
  it('falls back field by field when the stored record is broken', async () => {
    const repo = new InMemoryRepository();
    await repo.putSetting('app', {
      idleGapMinutes: -5,
      autoLoadModel: 'yes',
      modelMirror: 7,
      memory: { k: 'three', refinement: false },
      extra: 1,
    });
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

  it('keeps a persona and a temperature, and refuses values out of range', async () => {
    const repo = new InMemoryRepository();
    const a = new SettingsService(repo);
    await a.load();
    expect(a.value.systemPrompt).toBe('');
    expect(a.value.temperature).toBe(TEMPERATURE_RANGE.default);
    await a.update({ systemPrompt: 'You are Mabel, a gardener.', temperature: 1.2 });
    const b = await new SettingsService(repo).load();
    expect(b.systemPrompt).toBe('You are Mabel, a gardener.');
    expect(b.temperature).toBe(1.2);
    await repo.putSetting('app', { systemPrompt: 'x'.repeat(MAX_SYSTEM_PROMPT + 10), temperature: 9 });
    const c = await new SettingsService(repo).load();
    expect(c.systemPrompt.length).toBe(MAX_SYSTEM_PROMPT);
    expect(c.temperature).toBe(TEMPERATURE_RANGE.default);
  });

  it('the persona opens the system prompt of the real reply path', async () => {
    const repo = new InMemoryRepository();
    const settings = new SettingsService(repo);
    await settings.load();
    await settings.update({ systemPrompt: 'You are Mabel, a gardener.' });
    const memory = new MemoryService(
      repo,
      settings,
      () => undefined,
      () => undefined,
    );
    await memory.load();
    const llm = { modelId: 'x', chat: async () => '', json: async () => '{}' };
    const p = await memory.prepare({
      session: { id: 's', title: '', startedAt: 0, lastActivityAt: 0, status: 'open' },
      history: [],
      now: Date.UTC(2025, 0, 1),
      llm,
      signal: new AbortController().signal,
    });
    expect(p.messages[0].content.startsWith('You are Mabel, a gardener.')).toBe(true);
    expect(p.messages[0].content).toMatch(/Today is/);
  });
});

describe('SettingsService.update', () => {
  it('two updates started together both stay', async () => {
    const repo = new InMemoryRepository();
    const a = new SettingsService(repo);
    await a.load();
    await Promise.all([a.update({ systemPrompt: 'Be brief.' }), a.update({ temperature: 0.3 })]);
    const b = await new SettingsService(repo).load();
    expect([b.systemPrompt, b.temperature]).toEqual(['Be brief.', 0.3]);
  });
});
