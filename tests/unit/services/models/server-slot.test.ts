// Connecting a model server at a new address switches to it, at once; the
// address listed is never taken for the one in use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryRepository } from '../../../support/in-memory-repository';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../../support/fake-openai-server.mjs';
import { SettingsService } from '../../../../src/services/settings';
import { ModelService } from '../../../../src/services/models/models';
import { buildOptions } from '../../../../src/services/models/model-env';
import type { LanguageModel } from '../../../../src/ports';

let a: FakeOpenAiServer;
let b: FakeOpenAiServer;
beforeAll(async () => {
  a = await startFakeOpenAiServer({ models: ['llama3', 'qwen'], replies: [{ when: '', say: 'from A' }] });
  b = await startFakeOpenAiServer({ models: ['qwen', 'phi'], replies: [{ when: '', say: 'from B' }] });
});
afterAll(async () => {
  await a.close();
  await b.close();
});
buildOptions.searchModelWithChat = false;

async function service() {
  const settings = new SettingsService(new InMemoryRepository());
  await settings.load();
  const models = new ModelService(settings);
  const chats: Array<LanguageModel | undefined> = [];
  models.on('llm', (llm) => chats.push(llm));
  return { models, settings, chats };
}

describe('the model server in use', () => {
  it('connecting another address while one is in use switches to it at once, with the same model where it has it', async () => {
    const { models, settings, chats } = await service();
    await models.connectServer(a.url);
    await models.useServerModel('qwen');
    expect(models.snapshot.server).toMatchObject({ model: 'qwen', modelUrl: a.url, url: a.url });
    expect(await chats.at(-1)!.chat([{ role: 'user', content: 'hi' }])).toBe('from A');

    await models.connectServer(b.url);
    expect(models.snapshot.server).toMatchObject({ model: 'qwen', modelUrl: b.url, url: b.url, state: 'listed' });
    expect(settings.value).toMatchObject({ serverUrl: b.url, serverModel: 'qwen' });
    // Chats go to the new address from now on.
    expect(await models.languageModel!.chat([{ role: 'user', content: 'hi' }])).toBe('from B');
  });

  it('an address whose models differ: its first model, and an address that does not answer changes nothing in use', async () => {
    const { models } = await service();
    await models.connectServer(b.url);
    await models.useServerModel('phi');
    await models.connectServer(a.url);
    expect(models.snapshot.server).toMatchObject({ model: 'llama3', modelUrl: a.url });
    await models.connectServer('http://127.0.0.1:9');
    expect(models.snapshot.server).toMatchObject({ model: 'llama3', modelUrl: a.url, url: 'http://127.0.0.1:9', state: 'error' });
    expect(await models.languageModel!.chat([{ role: 'user', content: 'hi' }])).toBe('from A');
  });

  it('listing an address with no server in use only lists it', async () => {
    const { models } = await service();
    await models.connectServer(a.url);
    expect(models.snapshot.server).toMatchObject({ url: a.url, state: 'listed', models: ['llama3', 'qwen'] });
    expect(models.snapshot.server.modelUrl).toBeUndefined();
    expect(models.languageModel).toBeUndefined();
  });
});
