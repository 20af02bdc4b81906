// Texts a token estimate built on English words would undercount, generated from a seed (the
// same seed, the same text): pasted blobs (base64, hex, random ids), long and spaced digits, code,
// symbol runs, CJK and other scripts, emoji (skin tones, ZWJ sequences, flags, keycaps), accented Latin, long
// URLs, whitespace layouts, and a mix of them with English. Used by the token bound's property
// test (tests/unit/memory/fit-bound.test.ts) and bench:fit's adversarial corpus.
import { seeded } from './standin/faults';

export const TEXT_KINDS = [
  'base64',
  'hex',
  'random-id',
  'digits',
  'spaced-digits',
  'code',
  'symbols',
  'cjk',
  'other-scripts',
  'emoji',
  'accented',
  'url',
  'whitespace',
  'mixed',
] as const;
export type TextKind = (typeof TEXT_KINDS)[number];

/** The stand-in's seeded generator (mulberry32): the same seed gives the same texts. */
export const rng = seeded;

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chars = (r: Rand, alphabet: string, n: number) => Array.from({ length: n }, () => pick(r, [...alphabet])).join('');
const cp = (r: Rand, lo: number, hi: number) => String.fromCodePoint(int(r, lo, hi));

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const ENGLISH = [
  'I moved to Bergen last spring and I work as a nurse there now.',
  'Can you remind me what we said about the trip?',
  "Here's the file you asked for, it should open in any browser.",
  'The meeting moved to Thursday at half past three.',
  'My sister sent this to me, what does it say?',
];
const WORDS_ACCENTED = [
  'élève',
  'café',
  'naïve',
  'Müller',
  'Straße',
  'über',
  'façade',
  'señor',
  'mañana',
  'São',
  'Kraków',
  'żółć',
  'Dvořák',
  'Ångström',
  'smørrebrød',
  'İstanbul',
  'Tiếng',
  'Việt',
  'crème',
  'brûlée',
];
const ACCENTS = 'àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿœšžčřęąłśźżğışĂđơưạảấầẩẫậ';
const COMBINING = ['\u0301', '\u0300', '\u0308', '\u0302', '\u0323', '\u0303'];

function base64(r: Rand, n: number): string {
  let s = chars(r, B64, n - (n % 4));
  if (r() < 0.3) s = s.slice(0, -2) + '==';
  // Pasted blobs are often wrapped at 76 characters.
  return r() < 0.3 ? (s.match(/.{1,76}/g) ?? []).join('\n') : s;
}

function randomId(r: Rand): string {
  const alphabets = [
    B64.slice(0, 62),
    'abcdefghijklmnopqrstuvwxyz',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    'abcdefghijklmnopqrstuvwxyz0123456789_-',
  ];
  return chars(r, pick(r, alphabets), int(r, 6, 40));
}

function digits(r: Rand, n: number): string {
  const out: string[] = [];
  while (out.join(' ').length < n) {
    const kind = int(r, 0, 3);
    if (kind === 0) out.push(chars(r, '0123456789', int(r, 10, 200)));
    else if (kind === 1) out.push(`+${int(r, 1, 99)} ${chars(r, '0123456789', 3)} ${chars(r, '0123456789', 4)}`);
    else if (kind === 2)
      out.push(
        `${int(r, 1, 31)}.${int(r, 1, 12)}.${int(r, 1900, 2100)} ${int(r, 0, 23)}:${chars(r, '012345', 1)}${chars(r, '0123456789', 1)}`,
      );
    else out.push(Array.from({ length: int(r, 2, 12) }, () => chars(r, '0123456789', int(r, 1, 6))).join(pick(r, [', ', ',', ';', ' | '])));
  }
  return out.join(pick(r, [' ', '\n']));
}

function spacedDigits(r: Rand, n: number): string {
  return Array.from({ length: Math.ceil(n / 2) }, () => chars(r, '0123456789', 1)).join(pick(r, [' ', ' ', ', ', '  ']));
}

function identifier(r: Rand): string {
  const parts = Array.from({ length: int(r, 1, 4) }, () =>
    r() < 0.6
      ? pick(r, ['user', 'count', 'item', 'get', 'set', 'value', 'node', 'tmp', 'idx', 'buf', 'parse', 'json'])
      : randomId(r).slice(0, int(r, 2, 8)),
  );
  const style = int(r, 0, 2);
  if (style === 0) return parts.map((p, i) => (i === 0 ? p : p[0]!.toUpperCase() + p.slice(1))).join('');
  if (style === 1) return parts.join('_');
  return parts.join('_').toUpperCase();
}

function code(r: Rand, n: number): string {
  const lines: string[] = [];
  let depth = 0;
  while (lines.join('\n').length < n) {
    const indent = pick(r, ['  ', '    ', '\t']).repeat(depth);
    const id = identifier(r);
    const kind = int(r, 0, 7);
    if (kind === 0) {
      lines.push(`${indent}function ${id}(${identifier(r)}, ${identifier(r)}) {`);
      depth = Math.min(depth + 1, 6);
    } else if (kind === 1 && depth > 0) {
      depth--;
      lines.push(`${pick(r, ['  ', '    ', '\t']).repeat(depth)}}`);
    } else if (kind === 2) lines.push(`${indent}const ${id} = ${identifier(r)}[${int(r, 0, 999)}] ?? ${JSON.stringify(randomId(r))};`);
    else if (kind === 3)
      lines.push(`${indent}if (${id} !== null && ${identifier(r)}.length >= ${int(r, 0, 99)}) return { ${id}, ok: true };`);
    else if (kind === 4) lines.push(`${indent}// ${pick(r, ENGLISH)}`);
    else if (kind === 5) lines.push(`${indent}def ${id}(self, *args, **kwargs): return [x ** 2 for x in args if x % ${int(r, 2, 9)} == 0]`);
    else if (kind === 6) lines.push(`${indent}${JSON.stringify({ [id]: [int(r, 0, 1e6), randomId(r), { k: r() < 0.5 }] })}`);
    else lines.push(`${indent}<${id} class="${identifier(r)}" data-x='${int(r, 0, 99)}'>&nbsp;${randomId(r)}</${id}>`);
  }
  return lines.join('\n');
}

const SYMBOLS = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

function symbols(r: Rand, n: number): string {
  const out: string[] = [];
  while (out.join('').length < n) {
    const k = int(r, 0, 4);
    if (k === 0) out.push(pick(r, [...SYMBOLS]).repeat(int(r, 2, 80)));
    // Nested JSON and comment runs: pairs that tokenizers merge, repeated.
    else if (k === 4) out.push(pick(r, ['}]', '[{', '"}', ']}', '/*', '*/', '=>', '--', '..', '__']).repeat(int(r, 2, 30)));
    else if (k === 1) out.push(chars(r, SYMBOLS, int(r, 2, 40)));
    else if (k === 2) out.push(`|${Array.from({ length: int(r, 2, 6) }, () => '-'.repeat(int(r, 3, 12))).join('|')}|`);
    else out.push(pick(r, ['¯\\_(ツ)_/¯', '(╯°□°)╯︵ ┻━┻', '<3 <3 <3', ':-) ;-) :-D', '>>> >>> >>>', '"""', '/* */', '<!-- -->']));
  }
  return out.join(pick(r, [' ', '\n', '']));
}

function cjk(r: Rand, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = int(r, 0, 9);
    if (k < 5) out.push(cp(r, 0x4e00, 0x9fff));
    else if (k === 5) out.push(cp(r, 0x3041, 0x3096));
    else if (k === 6) out.push(cp(r, 0x30a1, 0x30fa));
    else if (k === 7) out.push(cp(r, 0xac00, 0xd7a3));
    else if (k === 8) out.push(pick(r, ['，', '。', '、', '「', '」', '！', '？', '：']));
    else out.push(cp(r, 0x20000, 0x2a6df));
  }
  return out.join('');
}

function otherScripts(r: Rand, n: number): string {
  const ranges: Array<[number, number]> = [
    [0x0410, 0x044f], // Cyrillic
    [0x0391, 0x03c9], // Greek
    [0x0621, 0x064a], // Arabic
    [0x05d0, 0x05ea], // Hebrew
    [0x0905, 0x0939], // Devanagari
    [0x0e01, 0x0e2e], // Thai
    [0x10a0, 0x10ff], // Georgian
    [0x1200, 0x135a], // Ethiopic
  ];
  const [lo, hi] = pick(r, ranges);
  const out: string[] = [];
  while (out.join('').length < n) out.push(Array.from({ length: int(r, 1, 10) }, () => cp(r, lo, hi)).join(''));
  return out.join(pick(r, [' ', ' ', '']));
}

function emoji(r: Rand, n: number): string {
  const tones = ['\u{1F3FB}', '\u{1F3FC}', '\u{1F3FD}', '\u{1F3FE}', '\u{1F3FF}'];
  const out: string[] = [];
  while (out.join('').length < n) {
    const k = int(r, 0, 6);
    if (k === 0) out.push(cp(r, 0x1f300, 0x1f5ff));
    else if (k === 1) out.push(cp(r, 0x1f600, 0x1f64f) + (r() < 0.5 ? pick(r, tones) : ''));
    else if (k === 2)
      // ZWJ sequences: families, professions, rainbow flag.
      out.push(pick(r, ['👨‍👩‍👧‍👦', '👩🏽‍💻', '🏳️‍🌈', '🧑🏿‍🚀', '👩‍❤️‍💋‍👨', '🐻‍❄️', '❤️‍🔥', '🧔🏻‍♀️']));
    else if (k === 3) out.push(String.fromCodePoint(0x1f1e6 + int(r, 0, 25), 0x1f1e6 + int(r, 0, 25)));
    else if (k === 4) out.push(`${int(r, 0, 9)}\uFE0F\u20E3`);
    else if (k === 5) out.push(cp(r, 0x2600, 0x27bf) + '\uFE0F');
    else out.push(cp(r, 0x1f900, 0x1faff));
    if (r() < 0.2) out.push(pick(r, [' ', ' ', '\n', '!!', ' lol ']));
  }
  return out.join('');
}

function accented(r: Rand, n: number): string {
  const out: string[] = [];
  while (out.join(' ').length < n) {
    const k = int(r, 0, 3);
    if (k === 0) out.push(pick(r, WORDS_ACCENTED));
    else if (k === 1) out.push(chars(r, `${ACCENTS}aeioustrnl`, int(r, 2, 10)));
    else if (k === 2) out.push(chars(r, 'aeiounrst', int(r, 2, 6)).replace(/[aeiou]/g, (v) => v + pick(r, COMBINING)));
    else out.push(chars(r, ACCENTS.toUpperCase(), int(r, 1, 6)));
  }
  return out.join(pick(r, [' ', ' ', ', ']));
}

function url(r: Rand, n: number): string {
  const out: string[] = [];
  while (out.join(' ').length < n) {
    const host = pick(r, ['example.org', 'docs.google.com', 'www.youtube.com', 'github.com', `${randomId(r).toLowerCase()}.co.uk`]);
    const path = Array.from({ length: int(r, 1, 6) }, () =>
      r() < 0.5 ? randomId(r) : pick(r, ['watch', 'd', 'edit', 'blob', 'main', 'src']),
    ).join('/');
    const query = Array.from(
      { length: int(r, 0, 5) },
      () => `${identifier(r)}=${r() < 0.5 ? randomId(r) : encodeURIComponent(pick(r, WORDS_ACCENTED))}`,
    ).join('&');
    out.push(`https://${host}/${path}${query ? `?${query}` : ''}${r() < 0.3 ? `#${randomId(r)}` : ''}`);
  }
  return out.join(pick(r, [' ', '\n']));
}

function whitespace(r: Rand, n: number): string {
  const out: string[] = [];
  while (out.join('').length < n) {
    out.push(pick(r, ['\n', '\n\n', '\n\n\n\n', '\t', '\t\t', '    ', ' ', '\r\n', '        ', ' \n ']));
    if (r() < 0.4) out.push(pick(r, ['-', '*', '|', 'a', '1', '#', '>']));
  }
  return out.join('');
}

const SINGLE: Record<Exclude<TextKind, 'mixed'>, (r: Rand, n: number) => string> = {
  base64: (r, n) => base64(r, n),
  hex: (r, n) => chars(r, '0123456789abcdef', n),
  'random-id': (r, n) => {
    const out: string[] = [];
    while (out.join(' ').length < n) out.push(randomId(r));
    return out.join(pick(r, [' ', '\n', ', ']));
  },
  digits,
  'spaced-digits': spacedDigits,
  code,
  symbols,
  cjk,
  'other-scripts': otherScripts,
  emoji,
  accented,
  url,
  whitespace,
};

/** A text of about `chars` characters (UTF-16 units) of one kind, from `seed`. */
export function adversarialText(kind: TextKind, seed: number, chars: number): string {
  const r = rng(seed);
  if (kind !== 'mixed') return SINGLE[kind](r, chars);
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const k = pick(r, [...(Object.keys(SINGLE) as Array<Exclude<TextKind, 'mixed'>>), 'english' as const]);
    const part = k === 'english' ? pick(r, ENGLISH) : SINGLE[k](r, int(r, 10, Math.max(20, chars / 4)));
    parts.push(part);
    length += part.length;
  }
  return parts.join(pick(r, [' ', '\n', '\n\n', ': ']));
}
