import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './provided';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { startDevServer, type DevServer } from '../src/devserver/server';
import { ensureTestTools } from '../scripts/test-tools.mjs';
import { freshNamespace } from './existing-server';

let server: DevServer | undefined;

/**
 * One real Temporal dev server for the whole run; each test file uses its own task queues. Before it, every tool
 * the tests drive is found or installed from a registry (scripts/test-tools.mjs, one line per install): a fresh
 * clone needs nothing installed by hand. A tool that cannot be had fails its tests with the reason, never skips them.
 *
 * AGENT_JUDGE_TEST_TEMPORAL_ADDRESS=host:port runs the suite against a server that is already up instead (the
 * multi-process cluster of `npm run test:cluster`), in a namespace of this run's own.
 */
export async function setup(project: TestProject): Promise<void> {
  const { tools, missing } = await ensureTestTools((line) => console.log(line));
  for (const [name, why] of Object.entries(missing)) console.log(`test setup: ${name} is MISSING (${why})`);
  project.provide('tools', tools);
  project.provide('missingTools', missing);
  const existing = process.env.AGENT_JUDGE_TEST_TEMPORAL_ADDRESS;
  if (existing) {
    project.provide('temporalAddress', existing);
    project.provide('temporalNamespace', await freshNamespace(existing, (line) => console.log(line)));
    return;
  }
  const cliPath = findTemporalCli({ log: (line) => console.log(`test setup: ${line}`) });
  server = await startDevServer({
    cliPath,
    headless: true,
    namespace: 'default',
    logFile: join(tmpdir(), `agent-judge-test-temporal-${process.pid}.log`),
    readyTimeoutMs: 90_000,
  });
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
