// Once before the unit tests: the generated test models (scripts/make-test-assets.mjs), made in
// this process. Test files used to run the script each in its own child process, three at a time
// writing the same files; one such child once hung at exit and stopped the whole run.
import { makeTestAssets } from '../../scripts/make-test-assets.mjs';

export default function setup(): void {
  makeTestAssets();
}
