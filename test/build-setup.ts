import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The CLI tests run `bin/agent-judge.mjs`, which runs the compiled package: build dist/ first when src/ changed
 * since the last build (`npm ci` builds it through `prepare`; this keeps a test run from using stale code).
 */
export function setup(): void {
  const script = fileURLToPath(new URL('../scripts/build.mjs', import.meta.url));
  execFileSync(process.execPath, [script, '--if-stale'], { stdio: 'inherit' });
}
