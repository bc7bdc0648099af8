/**
 * Capability tokens (issue 10, seed 000 §8): how long the workflow worker takes to issue a token,
 * a performer to verify one, and a redemption through the proposal's workflow (an Update round trip
 * on the dev server). Issue and verify rows are interleaved sample by sample, as the other sections do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { redeemCapability } from '../src/client/capabilities';
import { getStatus, submitAndWait, waitUntilSettled } from '../src/client/proposals';
import { actionDigest, executorAudience, policyDigest } from '../src/contracts/capability';
import type { ProposalOutcome } from '../src/contracts/status';
import { verifyCapability } from '../src/identity/capability';
import { generateCapabilityKey, issueCapability, loadCapabilityKey } from '../src/identity/capability-key';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { summarize, timed, type BenchServer, type Row } from './lib';

const N = 500;
const REDEEM_N = 30;

/**
 * The final outcome of a proposal as a performer lives it: once settled, an approved action the
 * caller performs is redeemed (its run stays open until then), and the run's result is returned.
 */
export async function closedOutcome(client: Client, workflowId: string): Promise<ProposalOutcome> {
  const settled = await waitUntilSettled(client, workflowId);
  if (settled.capability && !settled.capability.redemption) {
    const { proposal } = await getStatus(client, workflowId);
    await redeemCapability(client, { token: settled.capability.token, action: proposal, redeemer: 'bench' });
  }
  return (await client.workflow.getHandle(workflowId).result()) as ProposalOutcome;
}

export async function benchCapabilities(server: BenchServer): Promise<Row[]> {
  const file = generateCapabilityKey('bench');
  const key = await loadCapabilityKey(`${file.kid}:${file.private_key}`);
  const issuers = { [key.kid]: key.publicKey };
  const policy = defaultPolicyWith();
  const action = { action_type: 'exec', target: { host: 'local' }, parameters: { command: ['git', 'status'] } };
  const request = {
    workflow_id: `proposal-${'0'.repeat(32)}`,
    sub: '@engineering',
    aud: executorAudience('exec'),
    action_sha256: actionDigest(action),
    policy_sha256: policyDigest(policy),
    ttl_ms: 600_000,
  };
  const issue: number[] = [];
  const verify: number[] = [];
  for (let i = 0; i < N + 50; i++) {
    const t0 = performance.now();
    const { token } = issueCapability(request, key);
    const t1 = performance.now();
    const check = verifyCapability(token, {
      issuers,
      nowMs: Date.now(),
      audience: request.aud,
      workflowId: request.workflow_id,
      actionSha256: request.action_sha256,
    });
    const t2 = performance.now();
    if (!check.ok) throw new Error(`bench capabilities: ${check.refusal.reason}`);
    if (i >= 50) {
      issue.push(t1 - t0);
      verify.push(t2 - t1);
    }
  }

  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-cap-'));
  const queues = taskQueuesFor(`bench-cap-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy: defaultPolicyWith({}, { baseDir }),
    logger: pino({ level: 'silent' }),
    baseDir,
  });
  const redeem: number[] = [];
  try {
    for (let i = 0; i < REDEEM_N + 3; i++) {
      const p = {
        proposal_id: `bench-${randomUUID()}`,
        agent_id: '@engineering',
        action_type: 'vault_note_create',
        target: { vault: 'main', path: `notes/bench-${randomUUID()}.md` },
        parameters: { content: '# bench' },
        justification: 'bench note',
        cited_evidence: [],
      };
      const out = await submitAndWait(system.client, p, { taskQueue: queues.workflow });
      if (!out.capability) throw new Error(`bench capabilities: expected a token, got ${JSON.stringify(out)}`);
      const { proposal } = await getStatus(system.client, out.workflow_id);
      const [ms] = await timed(() =>
        redeemCapability(system.client, {
          token: out.capability!.token,
          action: proposal,
          issuers: system.policy.spec.capabilities.issuers,
          redeemer: 'bench',
        }),
      );
      if (i >= 3) redeem.push(ms);
    }
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
  return [
    summarize(
      'issue: sign a token (workflow worker, node:crypto Ed25519)',
      issue,
      'claims + canonical JSON + PASETO v4.public',
    ),
    summarize('verify: signature, expiry, audience, workflow, action', verify, 'what an executor or the proxy checks'),
    summarize('redeem: verify + Update through the proposal workflow', redeem, 'dev server round trip, single use'),
  ];
}
