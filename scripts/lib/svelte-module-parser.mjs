// A .svelte component read as the module it is, for eslint-plugin-import-x (eslint.config.js): the
// Svelte parser keeps the statements of <script> inside the script element, where import-x's module
// reader, which looks only at the top level, would not see the component's imports; here they are
// the top level, the <script lang="ts"> parsed by typescript-eslint.
import { parseForESLint as parseSvelte } from 'svelte-eslint-parser';
import ts from 'typescript-eslint';

export function parseForESLint(code, options) {
  const parsed = parseSvelte(code, { ...options, parser: ts.parser });
  const body = parsed.ast.body.flatMap((node) => (node.type === 'SvelteScriptElement' ? node.body : []));
  return { ...parsed, ast: { ...parsed.ast, body } };
}
