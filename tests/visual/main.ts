// Harness entry: ?big=5000x10000 loads the large synthetic graph; ?tab, ?select, ?highlight pick a state.
import { mount } from 'svelte';
import '../../src/app/app.css';
import Harness from './Harness.svelte';
import { demoGraph, largeGraph } from './demo';
import type { ExplorerTab, RenderInfo } from '../../src/app/explorer/format';

declare global {
  interface Window {
    __renders: (RenderInfo & { at: number })[];
    __mountStart: number;
  }
}

const params = new URLSearchParams(location.search);
const big = params.get('big');
const data = big ? largeGraph(Number(big.split('x')[0]), Number(big.split('x')[1])) : demoGraph();
window.__renders = [];
window.__mountStart = performance.now();
mount(Harness, {
  target: document.getElementById('app')!,
  props: {
    data,
    tab: (params.get('tab') as ExplorerTab | null) ?? 'timeline',
    select: params.get('select'),
    useHighlight: params.has('highlight'),
    onRender: (info: RenderInfo) => window.__renders.push({ ...info, at: performance.now() }),
  },
});
