import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './provided';
import { createLogger } from '../src/cli/shared';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { startDevServer, type DevServer } from '../src/devserver/server';
import { ensureTestTools } from '../scripts/test-tools.mjs';
import { freshNamespace } from './existing-server';

/** What the setup makes once per run, shared by the projects of vitest.config.ts (unit, system). */
interface Shared {
  tools: Awaited<ReturnType<typeof ensureTestTools>>;
  temporalAddress: string;
  temporalNamespace: string;
  server?: DevServer;
}
/** On globalThis: each project calls setup(), and the run makes one set of tools and one server for both. */
const run = globalThis as { agentJudgeTestSetup?: Promise<Shared>; agentJudgeTestSetupUsers?: number };

/**
 * One real Temporal dev server for the whole run; each test file uses its own task queues. Before it, every tool
 * the tests drive is found or installed from a registry (scripts/test-tools.mjs, one line per install): a fresh
 * clone needs nothing installed by hand. A tool that cannot be had fails its tests with the reason, never skips them.
 *
 * AGENT_JUDGE_TEST_TEMPORAL_ADDRESS=host:port runs the suite against a server that is already up instead (the
 * multi-process cluster of `npm run test:cluster`), in a namespace of this run's own.
 */
export async function setup(project: TestProject): Promise<void> {
  run.agentJudgeTestSetupUsers = (run.agentJudgeTestSetupUsers ?? 0) + 1;
  run.agentJudgeTestSetup ??= prepare();
  const shared = await run.agentJudgeTestSetup;
  project.provide('tools', shared.tools.tools);
  project.provide('missingTools', shared.tools.missing);
  project.provide('temporalAddress', shared.temporalAddress);
  project.provide('temporalNamespace', shared.temporalNamespace);
}

async function prepare(): Promise<Shared> {
  const tools = await ensureTestTools((line) => console.log(line));
  for (const [name, why] of Object.entries(tools.missing)) console.log(`test setup: ${name} is MISSING (${why})`);
  const existing = process.env.AGENT_JUDGE_TEST_TEMPORAL_ADDRESS;
  if (existing) {
    const temporalNamespace = await freshNamespace(existing, (line) => console.log(line));
    return { tools, temporalAddress: existing, temporalNamespace };
  }
  const cliPath = findTemporalCli({ logger: createLogger({ format: 'pretty' }).child({ component: 'test setup' }) });
  const server = await startDevServer({
    cliPath,
    headless: true,
    namespace: 'default',
    logFile: join(tmpdir(), `agent-judge-test-temporal-${process.pid}.log`),
    readyTimeoutMs: 90_000,
  });
  return { tools, temporalAddress: server.address, temporalNamespace: server.namespace, server };
}

/** The server stops when the last project that set it up is done. */
export async function teardown(): Promise<void> {
  run.agentJudgeTestSetupUsers = (run.agentJudgeTestSetupUsers ?? 1) - 1;
  if (run.agentJudgeTestSetupUsers > 0 || !run.agentJudgeTestSetup) return;
  const shared = await run.agentJudgeTestSetup.catch(() => undefined);
  run.agentJudgeTestSetup = undefined;
  await shared?.server?.stop();
}
