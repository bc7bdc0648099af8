/**
 * The gate service for a test: the resident gate (src/hooks/gate-server.ts, which serves `/v1` and the hooks) on a
 * random loopback port over a test system's workers, with one bearer token per agent. What agents in a test are given
 * is what a user's agents are given: the URL and their own token.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { inject } from 'vitest';
import { LiveGrants } from '../../src/activities/live-grants';
import { HookGateServer } from '../../src/hooks/gate-server';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { taskQueuesFor } from '../../src/wire-names';
import { recordingLogger, silentLogger } from './logger';
import { startSystem, type SystemOptions, type TestSystem } from './system';

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
  /** The per-agent limits (`spec.limits`) this service applies instead of the system policy's. */
  limits?: Partial<TestSystem['policy']['spec']['limits']>;
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
  const policy = {
    ...sys.policy,
    spec: {
      ...spec,
      hooks: { ...spec.hooks, ...(options.holdFor ? { holdFor: options.holdFor } : {}) },
      limits: { ...spec.limits, ...options.limits },
    },
  };
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
 * issue comment, judged) under the adapter's `server`, any other tool being a proposal a person decides (and a person
 * may grant: {@link startSystemWithGrants}), and two gate services over it for `@engineering`: `short`, whose
 * 1 s hold leaves a call a person decides pending at once, and `patient`, whose 15 s hold outlasts the judge's REJECT.
 */
export interface AdapterTestBed {
  sys: TestSystem;
  short: TestGateService;
  patient: TestGateService;
  /** The workflow worker's index of live grants, which a test refreshes when it has made one. */
  grants: LiveGrants;
  stop(): Promise<void>;
}

/** The agent the adapter tests act as. */
export const ADAPTER_AGENT = '@engineering';

/**
 * A test system whose workflow worker's index of live grants is the test's own (`grants`, refreshed when a test made
 * a grant: grantIdenticalCalls in test/helpers/grants.ts), and whose policy lets a person grant calls of every tier,
 * human-only included.
 */
export async function startSystemWithGrants(
  spec: Record<string, unknown>,
  options: Pick<SystemOptions, 'judge'> = {},
): Promise<{ sys: TestSystem; grants: LiveGrants; stop: () => Promise<void> }> {
  const taskQueuePrefix = `grants-${randomUUID()}`;
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  const grants = new LiveGrants({
    client: new Client({ connection, namespace: inject('temporalNamespace') }),
    taskQueue: taskQueuesFor(taskQueuePrefix).workflow,
    logger: silentLogger,
  });
  const sys = await startSystem({
    ...options,
    taskQueuePrefix,
    grants,
    spec: { grants: { tiers: ['lightweight-approval', 'full-judge-review', 'human-only'] }, ...spec },
  });
  return {
    sys,
    grants,
    stop: async () => {
      grants.stop();
      await sys.stop();
      await connection.close();
    },
  };
}

export async function startAdapterTestBed(server: string, rulePrefix: string): Promise<AdapterTestBed> {
  const { sys, grants, stop } = await startSystemWithGrants({
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
  });
  const short = await startGateService(sys, [ADAPTER_AGENT]);
  const patient = await startGateService(sys, [ADAPTER_AGENT], { holdFor: '15s' });
  return {
    sys,
    short,
    patient,
    grants,
    stop: async () => {
      await short.close();
      await patient.close();
      await stop();
    },
  };
}

/** What an application is given: the gate service's URL and its agent's token (`agent-judge hook token`). */
export function accessTo(service: TestGateService, agent = ADAPTER_AGENT): { url: string; token: string } {
  return { url: service.url, token: service.tokens[agent]! };
}

/** The proposal limit the limit tests drive an agent past. */
export const PROPOSAL_LIMIT = 2;

/**
 * A gate service over the bed's system for an agent of its own (a fresh id, so no other test's proposals count)
 * whose policy allows {@link PROPOSAL_LIMIT} proposals per agent in ten minutes.
 */
export async function startLimitedService(sys: TestSystem): Promise<{ service: TestGateService; agent: string }> {
  const agent = `@limited-${randomUUID().slice(0, 8)}`;
  const service = await startGateService(sys, [agent], {
    limits: { proposals: { perAgent: PROPOSAL_LIMIT, window: '10m' } },
  });
  return { service, agent };
}

/** The reason a call past {@link startLimitedService}'s limit is refused with: the limit's name and its setting. */
export function limitRefusal(agent: string): RegExp {
  return new RegExp(
    `limit proposals_per_agent: ${agent} submitted ${PROPOSAL_LIMIT} proposals .*` +
      `\\(spec\\.limits\\.proposals\\.perAgent is ${PROPOSAL_LIMIT}\\)`,
  );
}
