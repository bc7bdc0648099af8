/**
 * The gate service for a test: the resident gate (src/hooks/gate-server.ts, which serves `/v1` and the hooks) on a
 * random loopback port over a test system's workers, with one bearer token per agent. What agents in a test are given
 * is what a user's agents are given: the URL and their own token.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HookGateServer } from '../../src/hooks/gate-server';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { recordingLogger } from './logger';
import type { TestSystem } from './system';

export interface TestGateService {
  url: string;
  /** Each agent's token, by agent id. */
  tokens: Record<string, string>;
  server: HookGateServer;
  close(): Promise<void>;
}

export async function startGateService(sys: TestSystem, agents: readonly string[]): Promise<TestGateService> {
  const tokens = Object.fromEntries(agents.map((a) => [a, newAgentToken()]));
  const project = join(sys.baseDir, 'gate-project');
  mkdirSync(project, { recursive: true });
  const server = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy: sys.policy,
    agents: agents.map((agent) => ({ agent, tokenSha256: tokenSha256(tokens[agent]!) })),
    temporal: { client: sys.client, taskQueue: sys.taskQueues.workflow },
    baseDir: project,
    auditLog: join(sys.baseDir, 'gate-audit.jsonl'),
    logger: recordingLogger(),
  });
  const url = await server.start();
  return { url, tokens, server, close: () => server.close() };
}
