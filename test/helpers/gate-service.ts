/**
 * The gate service for a test: the resident gate (src/hooks/gate-server.ts, which serves `/v1` and the hooks) on a
 * random loopback port over a test system's workers, with one bearer token per agent. What agents in a test are given
 * is what a user's agents are given: the URL and their own token.
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { HookGateServer } from '../../src/hooks/gate-server';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { recordingLogger } from './logger';
import { startSystem, type TestSystem } from './system';

export interface TestGateService {
  url: string;
  /** Each agent's token, by agent id. */
  tokens: Record<string, string>;
  server: HookGateServer;
  close(): Promise<void>;
}

export interface GateServiceOptions {
  /**
   * The longest hold (`spec.hooks.holdFor`) for this service instead of the system policy's: a second service over
   * the same system can then leave calls pending at once while the first waits for the judge.
   */
  holdFor?: string;
  /** The project the hooks' roots are (relative roots resolve against it); default a fresh folder of its own. */
  project?: string;
}

export async function startGateService(
  sys: TestSystem,
  agents: readonly string[],
  options: GateServiceOptions = {},
): Promise<TestGateService> {
  const tokens = Object.fromEntries(agents.map((a) => [a, newAgentToken()]));
  // A folder of its own per service: two services over one system keep separate audit logs.
  const project = options.project ?? mkdtempSync(join(sys.baseDir, 'gate-project-'));
  const spec = sys.policy.spec;
  const policy = options.holdFor
    ? { ...sys.policy, spec: { ...spec, hooks: { ...spec.hooks, holdFor: options.holdFor } } }
    : sys.policy;
  const server = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy,
    agents: agents.map((agent) => ({ agent, tokenSha256: tokenSha256(tokens[agent]!) })),
    temporal: { client: sys.client, taskQueue: sys.taskQueues.workflow },
    baseDir: project,
    auditLog: join(mkdtempSync(join(sys.baseDir, 'gate-audit-')), 'gate-audit.jsonl'),
    logger: recordingLogger(),
  });
  const url = await server.start();
  return { url, tokens, server, close: () => server.close() };
}

/** A gate service URL nothing answers: a loopback port that was just free (bound, then closed). */
export async function closedGateUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * What each framework adapter's test runs on: a system whose policy maps `read_note` (no-judge) and `comment` (an
 * issue comment, judged) under the adapter's `server`, any other tool being a proposal a person decides, and two gate
 * services over it for `@engineering`: `short`, whose 1 s hold leaves a call a person decides pending at once, and
 * `patient`, whose 15 s hold outlasts the judge's REJECT.
 */
export interface AdapterTestBed {
  sys: TestSystem;
  short: TestGateService;
  patient: TestGateService;
  stop(): Promise<void>;
}

/** The agent the adapter tests act as. */
export const ADAPTER_AGENT = '@engineering';

export async function startAdapterTestBed(server: string, rulePrefix: string): Promise<AdapterTestBed> {
  const sys = await startSystem({
    spec: {
      escalation: { approvers: ['scott'], timeout: '10m' },
      hooks: { holdFor: '1s' },
      mcp: {
        rules: [
          { name: `${rulePrefix}.read`, server, tool: 'read_note', tier: 'no-judge' },
          {
            name: `${rulePrefix}.comment`,
            server,
            tool: 'comment',
            actionType: 'issue_comment',
            target: { repo: 'a/b', issue: 1 },
            parameters: { body: '$.body' },
          },
        ],
      },
    },
  });
  const short = await startGateService(sys, [ADAPTER_AGENT]);
  const patient = await startGateService(sys, [ADAPTER_AGENT], { holdFor: '15s' });
  return {
    sys,
    short,
    patient,
    stop: async () => {
      await short.close();
      await patient.close();
      await sys.stop();
    },
  };
}

/** What an application is given: the gate service's URL and its agent's token (`agent-judge hook token`). */
export function accessTo(service: TestGateService): { url: string; token: string } {
  return { url: service.url, token: service.tokens[ADAPTER_AGENT]! };
}
