/**
 * What an agent's process loads (issue 38): the gate service's client (`agent-judge/remote`) and the framework
 * adapters reach agent-judge over HTTP with a token, so none of them may load the Temporal SDK: an agent that held a
 * Temporal client would hold namespace access and could name its own agent id. Checked on the compiled package, as an
 * installed copy would load it, by a resolve hook that lists every package a fresh Node process resolves.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The packages (`@scope/name` or `name`) resolved while importing `entry` in a fresh process. */
function packagesLoaded(entry: string): string[] {
  const hook = `export async function resolve(s, c, n) {
    const r = await n(s, c);
    const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(r.url);
    if (m) process.stderr.write('PKG ' + m[1] + '\\n');
    return r;
  }`;
  const script =
    `import { register } from 'node:module';` +
    `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));` +
    `await import(${JSON.stringify(`${root}${entry}`)});`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: root });
  if (run.status !== 0) throw new Error(`importing ${entry} failed: ${run.stderr}`);
  const packages = run.stderr
    .split('\n')
    .filter((l) => l.startsWith('PKG '))
    .map((l) => l.slice(4));
  return [...new Set(packages)].sort();
}

describe('the agent side loads no Temporal', () => {
  it("the check sees packages: the workers' entry point loads the Temporal SDK", () => {
    expect(packagesLoaded('dist/gate/index.js').some((p) => p.startsWith('@temporalio/'))).toBe(true);
  });

  it.each([
    'dist/gate/remote.js',
    'dist/adapters/openai-agents.js',
    'dist/adapters/ai-sdk.js',
    'dist/adapters/langchain.js',
  ])('%s loads no @temporalio package', (entry) => {
    expect(packagesLoaded(entry).filter((p) => p.startsWith('@temporalio/'))).toEqual([]);
  });

  it('the gate service client loads no package at all (fetch only)', () => {
    expect(packagesLoaded('dist/gate/remote.js')).toEqual([]);
  });
});
