/**
 * A whole agent-judge (workflow, judge and executor workers) against the run's real Temporal dev
 * server, on task queues of its own, with a temp directory as its working directory.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Runtime, type Worker } from '@temporalio/worker';
import { testRuntimeLogger } from './runtime-logger';
import pino from 'pino';
import { inject } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import type { EscalationNotifier } from '../../src/escalation/notifier';
import type { JudgeDeps } from '../../src/judge';
import { taskQueuesFor, type TaskQueues } from '../../src/names';
import { defaultPolicyWith } from '../../src/policy/load';
import { startWorkersInProcess, type WorkerOptions, type WorkerRole } from '../../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../../src/workflow-code';
import type { ExecutorDeps } from '../../src/activities/execute';
import { redeemCapability } from '../../src/client/capabilities';
import { getStatus } from '../../src/client/proposals';
import { generateCapabilityKey } from '../../src/identity/capability-key';
import { DEFAULT_POLICY_PATH } from '../../src/policy/load';
import { parse as parseYaml } from 'yaml';

// Worker lifecycle chatter drowns test output; keep warnings and errors.
try {
  Runtime.install({
    logger: testRuntimeLogger(),
    // The SDK core's own warnings (e.g. "Activity not found on completion" when a test cancels a run whose activity
    // then completes) are expected in tests; its errors are still printed.
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
} catch {
  /* already installed in this process */
}

let bundle: Promise<{ code: string }> | undefined;
/** Workflow code is bundled once per test file (1-2 s each time). */
export function workflowBundle(): Promise<{ code: string }> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quietBundlerLogger,
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  return bundle;
}
const quietBundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error(message: string, meta?: unknown) {
    console.error(message, meta);
  },
};

/** The default policy with `spec` fields overridden (deep-merged one level), completed for `baseDir`. */
export function testPolicy(
  baseDir: string,
  spec: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
): CompliancePolicy {
  return defaultPolicyWith(spec, { baseDir, env });
}

export interface SystemOptions {
  /** Overrides of the default policy's spec (short timeouts, approvers...). */
  spec?: Record<string, unknown>;
  notifiers?: EscalationNotifier[];
  judge?: Partial<JudgeDeps>;
  executor?: Partial<ExecutorDeps>;
  roles?: WorkerRole[];
  /** The archive role's folder and crash hook (default: the policy's folder inside the temp directory). */
  archive?: WorkerOptions['archive'];
  /** Another Temporal server than the shared one (a test that needs its own settings or stops it). */
  temporal?: { address: string; namespace: string };
  /** The task queues' prefix (default: a random one per system). */
  taskQueuePrefix?: string;
  /** The workflow worker's index of live grants (a test refreshes its own at once). */
  grants?: WorkerOptions['grants'];
  /** The approvers' passkeys the workflow worker reads (a registry file's reader). */
  passkeys?: WorkerOptions['passkeys'];
}

export interface TestSystem {
  client: Client;
  taskQueues: TaskQueues;
  baseDir: string;
  policy: CompliancePolicy;
  workers: Worker[];
  stop(): Promise<void>;
}

export async function startSystem(options: SystemOptions = {}): Promise<TestSystem> {
  const address = options.temporal?.address ?? inject('temporalAddress');
  const namespace = options.temporal?.namespace ?? inject('temporalNamespace');
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-test-'));
  const policy = testPolicy(baseDir, options.spec);
  const taskQueues = taskQueuesFor(options.taskQueuePrefix ?? `test-${randomUUID()}`);
  const system = await startWorkersInProcess(address, {
    namespace,
    taskQueues,
    policy,
    roles: options.roles,
    logger: pino({ level: 'silent' }),
    notifiers: options.notifiers,
    judge: options.judge,
    executor: options.executor,
    archive: options.archive,
    grants: options.grants,
    passkeys: options.passkeys,
    baseDir,
    workflowBundle: await workflowBundle(),
  });
  return {
    client: system.client,
    taskQueues,
    baseDir,
    // With the in-process capability key listed (what the workers run with).
    policy: system.policy,
    workers: system.workers,
    async stop() {
      await system.stop();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/** A valid proposal of the given action type, with overrides. */
export function proposal(actionType: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, Record<string, unknown>> = {
    memory_write: { target: { store: 'memory' }, parameters: { content: 'remember the milk' } },
    vault_note_create: { target: { vault: 'main', path: 'notes/standup.md' }, parameters: { content: '# Standup' } },
    issue_comment: { target: { repo: 'sscoble/speckl', issue: 42 }, parameters: { body: 'Looks good to me.' } },
    discord_message: { target: { channel_id: '123456789012345678' }, parameters: { content: 'Deploy finished.' } },
    forgejo_pr_create: {
      target: { repo: 'sscoble/speckl', branch: 'feat/add-schema-validation', base: 'main' },
      parameters: { files_changed: ['src/schema/validator.ts', 'src/schema/types.ts'], estimated_diff_lines: 45 },
      scope_claim: { files_only: ['src/schema/'], max_lines: 80, no_existing_code_deletion: true },
    },
    file_write: { target: { path: '.agent-judge/workspace/out.txt' }, parameters: { content: 'hello\n' } },
    exec: { target: { host: 'local' }, parameters: { command: ['echo', 'hello'] } },
    web_publish: { target: { url: 'https://example.org/post' }, parameters: { body: 'post' } },
    financial_op: { target: { account: 'ops' }, parameters: { amount: 100, currency: 'EUR' } },
  };
  return {
    proposal_id: randomUUID(),
    agent_id: '@engineering',
    action_type: actionType,
    justification: `Test ${actionType} ${randomUUID()}`,
    cited_evidence: [{ type: 'issue', url: 'https://os.scoble.me/forgejo/sscoble/speckl/issues/42' }],
    ...(base[actionType] ?? { target: { thing: 'x' }, parameters: {} }),
    ...overrides,
  };
}

/**
 * The caller performs an approved action it performs itself: it redeems the token its outcome
 * carries, and the run (kept open for that) closes. No-op for outcomes without a token.
 */
export async function performApproved(
  sys: Pick<TestSystem, 'client' | 'policy'>,
  outcome: { workflow_id: string; capability?: { token: string; redemption: unknown } | undefined },
): Promise<void> {
  if (!outcome.capability || outcome.capability.redemption) return;
  const { proposal: performed } = await getStatus(sys.client, outcome.workflow_id);
  await redeemCapability(sys.client, {
    token: outcome.capability.token,
    action: performed,
    issuers: sys.policy.spec.capabilities.issuers,
    redeemer: 'test',
  });
}

/**
 * What an `agent-judge worker` process with the workflow role needs (seed 000 §8): a capability signing key in its
 * environment and a policy that lists it. Writes the default policy with the key listed into `dir`.
 */
export function workerProcessCapability(dir: string): { policyFile: string; env: Record<string, string> } {
  const key = generateCapabilityKey('test-worker');
  const policy = parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as { spec: Record<string, unknown> };
  const capabilities = (policy.spec.capabilities ?? {}) as Record<string, unknown>;
  policy.spec.capabilities = { ...capabilities, issuers: { [key.kid]: key.public_key } };
  const policyFile = join(dir, 'worker-policy.yaml');
  writeFileSync(policyFile, JSON.stringify(policy));
  return { policyFile, env: { AGENT_JUDGE_CAPABILITY_KEY: `${key.kid}:${key.private_key}` } };
}
