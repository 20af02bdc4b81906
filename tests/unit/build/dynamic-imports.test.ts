// A module the app loads on demand (import()) must not also be imported statically by another
// module: the bundler then keeps it in the static chunk, the lazy load saves nothing, and every
// build warns INEFFECTIVE_DYNAMIC_IMPORT (as it did for src/services/demo.ts, loaded lazily by
// tealeaf.ts and statically by space.ts). Type-only imports vanish at build time and do not count.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(ts|svelte)$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** A relative specifier to the file it names (as Vite resolves it: the file, then an index). */
function target(from: string, spec: string, known: Set<string>): string {
  if (!spec.startsWith('.')) return spec.split('?')[0]; // a package
  const base = resolve(dirname(from), spec.split('?')[0]);
  for (const c of [base, `${base}.ts`, `${base}.js`, join(base, 'index.ts')])
    if (known.has(c) || (existsSync(c) && statSync(c).isFile())) return c;
  return base;
}

/** Static and dynamic imports of one source text (Svelte files: their script blocks). */
function importsOf(code: string): { static: string[]; dynamic: string[] } {
  const stat: string[] = [];
  const dyn: string[] = [];
  // `import x from '...'`, `import { a, type B } from '...'`, `export { a } from '...'`, `import '...'`;
  // not `import type ...` nor `export type ...`.
  for (const m of code.matchAll(/^\s*(import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    if (m[1] === 'export' && !/\sfrom\s/.test(m[0])) continue;
    stat.push(m[2]);
  }
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) dyn.push(m[1]);
  return { static: stat, dynamic: dyn };
}

/**
 * Lazy imports that load nothing: module M, imported lazily by D, is ineffective when a chunk that
 * holds D (the static closure of the entry or of a lazy module) already holds M statically.
 */
function ineffective(sources: Array<[string, string]>, entry: string): string[] {
  const staticOf = new Map<string, string[]>();
  const lazy: Array<[string, string]> = [];
  const known = new Set(sources.map(([f]) => f));
  for (const [file, code] of sources) {
    const found = importsOf(code);
    staticOf.set(
      file,
      found.static.map((s) => target(file, s, known)),
    );
    for (const s of found.dynamic) lazy.push([file, target(file, s, known)]);
  }
  const closure = (root: string) => {
    const seen = new Set<string>();
    const todo = [root];
    while (todo.length) {
      const f = todo.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      todo.push(...(staticOf.get(f) ?? []));
    }
    return seen;
  };
  const chunks = [entry, ...new Set(lazy.map(([, m]) => m))].map((root) => ({ root, files: closure(root) }));
  const name = (f: string) => (f.startsWith(ROOT) ? relative(ROOT, f) : f);
  return lazy
    .map(([d, m]) => [d, m, chunks.find((c) => c.root !== m && c.files.has(d) && c.files.has(m))] as const)
    .filter(([, , chunk]) => chunk)
    .map(([d, m, chunk]) => `${name(m)}: lazily by ${name(d)}, but already in the chunk of ${name(chunk!.root)}`);
}

describe('lazy modules stay lazy', () => {
  it('reads the import forms the app uses, and not type-only imports', () => {
    const code = [
      "import { a, type B } from './a';",
      "import type { C } from './c';",
      "export { d } from './d';",
      "export type { E } from './e';",
      "import './f.css';",
      "const g = await import('./g');",
      "const [h] = await Promise.all([import('h-package')]);",
    ].join('\n');
    expect(importsOf(code)).toEqual({ static: ['./a', './d', './f.css'], dynamic: ['./g', 'h-package'] });
  });

  it('finds a module imported both ways (control: the shape of the demo.ts defect)', () => {
    const f = (name: string) => join(SRC, 'fixture', `${name}.ts`);
    const found = ineffective(
      [
        [f('main'), "const app = await import('./app');"],
        // app loads demo lazily, but also space statically, which imports demo: one chunk.
        [f('app'), "import { s } from './space';\nconst d = await import('./demo');\nconst b = await import('./backup');"],
        [f('space'), "import { id } from './demo';\nimport type { T } from './types';"],
        [f('demo'), ''],
        // backup is lazy here and static in another lazy module (rescue): a chunk of its own.
        [f('rescue'), "import { b } from './backup';"],
        [f('backup'), ''],
        // types is imported lazily and only as types elsewhere: effective.
        [f('other'), "const t = await import('./types');"],
        [f('types'), ''],
      ],
      f('main'),
    );
    expect(found).toEqual(['src/fixture/demo.ts: lazily by src/fixture/app.ts, but already in the chunk of src/fixture/app.ts']);
  });

  it('no lazy import in src is ineffective', () => {
    const sources = files(SRC).map((f): [string, string] => [f, readFileSync(f, 'utf8')]);
    expect(sources.length).toBeGreaterThan(100);
    expect(ineffective(sources, join(SRC, 'main.ts'))).toEqual([]);
  });
});
