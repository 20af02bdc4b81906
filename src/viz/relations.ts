// Visual vocabulary of the memory graph: one style per relation and per memory kind.
// Colour is never the only cue (WCAG 1.4.1): relations also differ by dash, kinds by shape.
// Every colour keeps >= 3:1 contrast on white (WCAG 1.4.11, graphical objects); a test checks it.

import { RELATIONS, type MemoryKind, type Relation } from '../memory/types';

export interface RelationStyle {
  relation: Relation;
  colour: string;
  /** SVG stroke-dasharray; '' = solid. Also used with canvas setLineDash. */
  dash: string;
  width: number;
  label: string;
  /** Plain-language meaning, older memory A to newer memory B (docs/METHOD.md, section 1.1). */
  description: string;
  /** Verb used in text lists: "A <verb> B". */
  verb: string;
}

const RELATION_STYLES: Record<Relation, RelationStyle> = {
  Cause: {
    relation: 'Cause',
    colour: '#b42318',
    dash: '',
    width: 1.75,
    label: 'Cause',
    description: 'the earlier memory caused the later one',
    verb: 'caused',
  },
  Reason: {
    relation: 'Reason',
    colour: '#b54708',
    dash: '7 4',
    width: 1.75,
    label: 'Reason',
    description: 'the later memory explains the earlier one',
    verb: 'is explained by',
  },
  Want: {
    relation: 'Want',
    colour: '#175cd3',
    dash: '',
    width: 1.75,
    label: 'Want',
    description: 'because of the earlier memory, they want the later one',
    verb: 'led to wanting',
  },
  React: {
    relation: 'React',
    colour: '#7a2e98',
    dash: '2 3',
    width: 2,
    label: 'React',
    description: 'because of the earlier memory, they feel the later one',
    verb: 'made them feel',
  },
  HinderedBy: {
    relation: 'HinderedBy',
    colour: '#344054',
    dash: '8 3 2 3',
    width: 1.75,
    label: 'Hindered by',
    description: 'one can hinder the other',
    verb: 'can hinder',
  },
  Changed: {
    relation: 'Changed',
    colour: '#0e7a55',
    dash: '5 3',
    width: 2.25,
    label: 'Changed',
    description: 'what the earlier memory said changed into the later one',
    verb: 'changed into',
  },
  SameTopic: {
    relation: 'SameTopic',
    colour: '#667085',
    dash: '1 4',
    width: 1.75,
    label: 'Same topic',
    description: 'not causal, but the same specific topic',
    verb: 'is on the same topic as',
  },
};

export function relationStyle(relation: Relation): RelationStyle {
  return RELATION_STYLES[relation];
}

/** In the legend's order (the domain order of RELATIONS). */
export function relationStyles(): RelationStyle[] {
  return RELATIONS.map((r) => RELATION_STYLES[r]);
}

export type KindShape = 'circle' | 'diamond' | 'square' | 'triangle' | 'triangle-down';

export interface KindStyle {
  kind: MemoryKind;
  shape: KindShape;
  fill: string;
  stroke: string;
  label: string;
}

const KIND_STYLES: Record<MemoryKind, KindStyle> = {
  event: { kind: 'event', shape: 'circle', fill: '#1f4d3a', stroke: '#1f4d3a', label: 'Event' },
  'user-trait': { kind: 'user-trait', shape: 'diamond', fill: '#9a6700', stroke: '#7a5200', label: 'About you' },
  'assistant-trait': { kind: 'assistant-trait', shape: 'square', fill: '#5b4bb7', stroke: '#47399a', label: 'About Tealeaf' },
  note: { kind: 'note', shape: 'triangle', fill: '#0b6e99', stroke: '#085a7d', label: 'Note' },
  instruction: { kind: 'instruction', shape: 'triangle-down', fill: '#b3261e', stroke: '#8c1d18', label: 'Instruction' },
};

export const MEMORY_KINDS: readonly MemoryKind[] = ['event', 'user-trait', 'assistant-trait', 'note', 'instruction'];

export function kindStyle(kind: MemoryKind): KindStyle {
  // A kind from a later version (synced, or stored before a downgrade) is drawn as a note.
  return KIND_STYLES[kind] ?? KIND_STYLES.note;
}

export function kindStyles(): KindStyle[] {
  return MEMORY_KINDS.map((k) => KIND_STYLES[k]);
}

/** SVG path for a kind's marker centred on (0, 0) with radius r; shapes have similar visual area. */
export function shapePath(shape: KindShape, r: number): string {
  switch (shape) {
    case 'circle':
      return `M${-r},0A${r},${r} 0 1,0 ${r},0A${r},${r} 0 1,0 ${-r},0Z`;
    case 'diamond': {
      const d = r * 1.3;
      return `M0,${-d}L${d},0L0,${d}L${-d},0Z`;
    }
    case 'square': {
      const s = r * 0.9;
      return `M${-s},${-s}H${s}V${s}H${-s}Z`;
    }
    case 'triangle': {
      const t = r * 1.25;
      return `M0,${-t}L${t * 0.95},${t * 0.7}L${-t * 0.95},${t * 0.7}Z`;
    }
    case 'triangle-down': {
      const t = r * 1.25;
      return `M0,${t}L${t * 0.95},${-t * 0.7}L${-t * 0.95},${-t * 0.7}Z`;
    }
  }
}

/** WCAG relative luminance of a #rrggbb colour. */
export function luminance(hex: string): number {
  const m = /^#([0-9a-f]{6})$/i.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  const n = parseInt(m[1], 16);
  const channel = (c: number): number => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
}

export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
