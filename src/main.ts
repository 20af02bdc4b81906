import { mount } from 'svelte';
import './app/app.css';
import App from './app/App.svelte';
import { applyTheme } from './app/theme';

applyTheme();

const target = document.getElementById('app')!;
target.replaceChildren(); // drop the static boot shell
const app = mount(App, { target });

// Offline after the first visit: register the service worker once the page is up, off the
// critical path of first paint.
if ('serviceWorker' in navigator && import.meta.env.PROD) {
  const register = () => navigator.serviceWorker.register('/sw.js').catch((e: unknown) => console.warn('Service worker not registered', e));
  // An entry that loads this module late (the e2e entry) may run after 'load' has fired.
  if (document.readyState === 'complete') void register();
  else window.addEventListener('load', () => void register());
}

export default app;
