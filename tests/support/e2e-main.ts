// The e2e build's entry point (vite.config.ts swaps it in for src/main.ts in mode "e2e"): it
// registers the scripted test double as a chat model, then starts the app as usual. The production
// build never sees this file.
import { registerChatModel } from '../../src/services/models/models';
import { buildOptions } from '../../src/services/models/model-env';
import { SCRIPTED_MODEL_ID, ScriptedModel } from './scripted-model';
import { installFakePromptApi } from './fake-prompt-api';
import { discoveryOptions, type KnownServer } from '../../src/services/models/local-servers';

// The browser's Prompt API, only where a test asks for it (localStorage 'tealeaf-test-builtin').
installFakePromptApi();

// The memory search model comes along with the first chat model only where a test asks for it
// (localStorage 'tealeaf-test-search-model' = 'with-chat'): most tests expect recall by words only.
buildOptions.searchModelWithChat = localStorage.getItem('tealeaf-test-search-model') === 'with-chat';

// The model self-test only where a test asks for it (localStorage 'tealeaf-test-self-test' = 'on'):
// its calls would add to every other test's count of model calls.
buildOptions.selfTest = localStorage.getItem('tealeaf-test-self-test') === 'on';

// Where to look for a model server on this computer: the usual ports unless a test names others
// (localStorage 'tealeaf-test-local-servers', a JSON list of { name, url }: its fake server on a free port).
const servers = localStorage.getItem('tealeaf-test-local-servers');
if (servers) discoveryOptions.servers = JSON.parse(servers) as KnownServer[];

registerChatModel({
  choice: {
    id: SCRIPTED_MODEL_ID,
    label: 'Scripted test model',
    description: 'Test double for automated tests (e2e builds only).',
    sizeMB: 0,
    needsGpu: false,
  },
  create: () => new ScriptedModel(),
});

await import('../../src/main');
