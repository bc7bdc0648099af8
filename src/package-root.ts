import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The agent-judge package's own directory (a checkout, or `node_modules/agent-judge` when installed). Files that
 * ship with the package (policies/, the prebuilt workflow bundle) are found from here rather than relative to
 * `import.meta.url`, which points into a bundled chunk once the code is compiled.
 */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** True when this code runs from the compiled package (dist/), false when it runs from src/ (tests, tsx). */
export const RUNNING_COMPILED = fileURLToPath(import.meta.url).startsWith(join(PACKAGE_ROOT, 'dist') + sep);

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'agent-judge'
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`agent-judge: no agent-judge package.json above ${start}`);
  }
}

/** The version in the package's own package.json (a checkout or an installed copy). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/**
 * A file of the package's examples/ as a user in `cwd` can type it: relative when it lies below `cwd` (a checkout),
 * else the installed package's own copy (examples/ ships in the package).
 */
export function examplePath(name: string, cwd = process.cwd()): string {
  const file = join(PACKAGE_ROOT, 'examples', name);
  const path = relative(cwd, file);
  return path.startsWith(`..${sep}`) || isAbsolute(path) ? file : path;
}
