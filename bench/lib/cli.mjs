// The benches' command line: `--name value` options, `--flag` switches, and `--dist a,b` (builds
// compared in one run, each resolved from the working directory).
import { resolve } from 'node:path';

const args = process.argv.slice(2);

/** The value after `name`, or `fallback` when it is not given. */
export const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);

/** Whether the switch `name` is given. */
export const flag = (name) => args.includes(name);

/** The builds named by `--dist` (comma-separated), or `fallback`, as absolute paths. */
export const distList = (fallback) =>
  option('--dist', fallback)
    .split(',')
    .map((d) => resolve(d));
