import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './provided';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { startDevServer, type DevServer } from '../src/devserver/server';
import { ensureNode22 } from '../scripts/node22.mjs';

let server: DevServer | undefined;

/** One real Temporal dev server for the whole run; each test file uses its own task queues. */
export async function setup(project: TestProject): Promise<void> {
  // The MCP Inspector and the conformance suite need Node 22; the tests themselves run on the project's Node.
  project.provide(
    'node22Path',
    ensureNode22((l) => console.log(l)),
  );
  const cliPath = findTemporalCli({ log: (line) => console.log(line) });
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
