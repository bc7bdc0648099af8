/**
 * Signed human decisions on the real server, tried as an attacker who can reach the namespace
 * would: read a signed decision from a run, start another run under the same workflow id (same or
 * different content, the id-reuse policy is the caller's choice), and send it again.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, type WorkflowHandle } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import { proposalContentDigest } from '../../src/contracts/digest';
import type { HumanDecision } from '../../src/contracts/messages';
import { parseProposal } from '../../src/contracts/proposal';
import type { ProposalOutcome, ProposalRecord } from '../../src/contracts/status';
import { generateIdentity, newNonce, signBytes } from '../../src/identity/keys';
import { statementBytes } from '../../src/identity/verify';
import { humanDecisionUpdate, PROPOSAL_WORKFLOW_TYPE, statusQuery } from '../../src/names';
import type { proposalWorkflow } from '../../src/workflows/proposal';
import { performApproved, proposal, startSystem, workflowBundle, type TestSystem } from '../helpers/system';

const scott = generateIdentity();
const alice = generateIdentity();
const mallory = generateIdentity();

/** Every decision the status shows, as it was sent (what anyone who can query the run reads). */
function captured(status: ProposalRecord): HumanDecision[] {
  return status.decisions.map(({ at: _at, ...d }) => d);
}

/** Waits until a run asks a person, or closes; returns its status, or null when it closed first. */
async function untilAwaitingHuman(handle: WorkflowHandle<typeof proposalWorkflow>): Promise<ProposalRecord | null> {
  for (;;) {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return null;
    try {
      const s = await handle.query(statusQuery);
      if (s.stage === 'awaiting_human') return s;
    } catch {
      /* still starting */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the attacker does: a new run under an existing workflow id, with whatever content they like. */
async function startUnderSameId(
  client: Client,
  sys: TestSystem,
  workflowId: string,
  content: Record<string, unknown>,
): Promise<WorkflowHandle<typeof proposalWorkflow>> {
  // The decided run answers the Update before it closes: the new run can start once it has. An approved
  // action the caller performs keeps its run open until its token is redeemed: the caller acts first.
  const status = await client.workflow.getHandle(workflowId).query(statusQuery);
  if (status.capability) await performApproved(sys, { workflow_id: workflowId, capability: status.capability });
  await client.workflow.getHandle<typeof proposalWorkflow>(workflowId).result();
  return client.workflow.start<typeof proposalWorkflow>(PROPOSAL_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: sys.taskQueues.workflow,
    args: [{ proposal: content }],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/** Sends decisions as raw Updates; returns each refusal message (or 'accepted'). */
async function replay(handle: WorkflowHandle<typeof proposalWorkflow>, decisions: HumanDecision[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of decisions) {
    try {
      await handle.executeUpdate(humanDecisionUpdate, { args: [d] });
      out.push('accepted');
    } catch (err) {
      const e = err as { cause?: { message?: string }; message?: string };
      out.push(e.cause?.message ?? e.message ?? String(err));
    }
  }
  return out;
}

describe('signed decisions in the workflow', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem({
      spec: {
        escalation: { timeout: '5m', approvers: ['scott'], approverKeys: { scott: scott.public_key }, reminderAt: 0 },
      },
    });
  });
  afterAll(async () => sys?.stop());

  it('an unsigned or wrongly signed claim to be scott is refused, changes nothing; scott signed approves', async () => {
    const p = proposal('financial_op');
    await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const id = String(p.proposal_id);
    await expect(decide(sys.client, id, { decision: 'approve', approver: 'scott' })).rejects.toThrow(
      /scott must sign decisions/,
    );
    await expect(decide(sys.client, id, { decision: 'approve', approver: 'scott' }, { key: mallory })).rejects.toThrow(
      /does not verify/,
    );
    expect((await getStatus(sys.client, id)).decisions).toEqual([]);
    const out = await decide(
      sys.client,
      id,
      { decision: 'approve', approver: 'scott', reason: 'budgeted', via: 'cli' },
      { key: scott },
    );
    expect(out.status).toBe('approved');
    expect(out.verdict).toMatchObject({ decided_by: 'human:scott', reason: 'budgeted' });
  });

  it('a signed approval replayed onto different content under the same workflow id approves nothing', async () => {
    const p = proposal('financial_op', { parameters: { amount: 10, currency: 'EUR' } });
    const first = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    await decide(sys.client, String(p.proposal_id), { decision: 'approve', approver: 'scott' }, { key: scott });
    const approval = captured(await getStatus(sys.client, first.workflow_id));
    expect(approval).toHaveLength(1);
    const { runId: firstRunId } = await sys.client.workflow.getHandle(first.workflow_id).describe();

    // $10 becomes $1,000,000 under the id of the $10 proposal.
    const forged = await startUnderSameId(sys.client, sys, first.workflow_id, {
      ...p,
      parameters: { amount: 1_000_000, currency: 'EUR' },
    });
    const waiting = await untilAwaitingHuman(forged);
    const [answer] = await replay(forged, approval);
    expect(answer).not.toBe('accepted');
    // The run refuses to run at all: its id is not the fingerprint of its content.
    expect(waiting).toBeNull();
    await expect(forged.result()).rejects.toThrow(/workflow execution failed/i);
    const failure: unknown = await forged.result().then(
      () => null,
      (err: { cause?: unknown }) => err.cause,
    );
    expect(failure).toMatchObject({
      type: 'BadInput',
      message: expect.stringMatching(/is not the fingerprint of the proposal's content/) as unknown,
    });
    // The refusal sits behind patched(): its history and the decided run's replay deterministically.
    const decided = sys.client.workflow.getHandle(first.workflow_id, firstRunId);
    for (const handle of [forged, decided]) {
      const history = await handle.fetchHistory();
      await expect(
        Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, first.workflow_id),
      ).resolves.toBeUndefined();
    }
  });

  it('a signed approval replayed onto a new run of the same content is refused: signed for another run', async () => {
    const p = proposal('financial_op');
    const first = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    await decide(sys.client, String(p.proposal_id), { decision: 'approve', approver: 'scott' }, { key: scott });
    const approval = captured(await getStatus(sys.client, first.workflow_id));

    const again = await startUnderSameId(sys.client, sys, first.workflow_id, p);
    const waiting = await untilAwaitingHuman(again);
    expect(waiting?.stage).toBe('awaiting_human');
    const [answer] = await replay(again, approval);
    expect(answer).toMatch(/signed for another run/);
    const after = await again.query(statusQuery);
    expect(after.stage).toBe('awaiting_human');
    expect(after.decisions).toEqual([]);
    await again.terminate('test done');
  });

  it('a v1 signature (bound to the workflow id only) is refused by new runs', async () => {
    const p = proposal('financial_op');
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const signedAt = new Date().toISOString();
    const nonce = newNonce();
    const d = { decision: 'approve' as const, approver: 'scott', via: 'api' as const };
    const value = signBytes(
      statementBytes('agent-judge/human-decision/v1', {
        workflow_id: waiting.workflow_id,
        decision: d.decision,
        approver: d.approver,
        reason: null,
        signed_at: signedAt,
        nonce,
      }),
      scott.private_key,
    );
    const handle = sys.client.workflow.getHandle<typeof proposalWorkflow>(waiting.workflow_id);
    const [answer] = await replay(handle, [{ ...d, signature: { signed_at: signedAt, nonce, value } }]);
    expect(answer).toMatch(/v1 signature binds only the workflow id/);
    expect((await handle.query(statusQuery)).decisions).toEqual([]);
    await handle.terminate('test done');
  });
});

describe('signed decisions with a quorum of two', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem({
      spec: {
        escalation: {
          timeout: '5m',
          approvers: ['scott', 'alice'],
          approverKeys: { scott: scott.public_key, alice: alice.public_key },
          quorum: { 'human-only': 2 },
          reminderAt: 0,
        },
      },
    });
  });
  afterAll(async () => sys?.stop());

  it('the same signed decision sent twice is refused the second time, and counts once', async () => {
    const p = proposal('financial_op');
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const pending = await decide(
      sys.client,
      waiting.workflow_id,
      { decision: 'approve', approver: 'scott' },
      { key: scott },
    );
    expect(pending.status).toBe('awaiting_human');
    const handle = sys.client.workflow.getHandle<typeof proposalWorkflow>(waiting.workflow_id);
    const [answer] = await replay(handle, captured(await handle.query(statusQuery)));
    expect(answer).toMatch(/this signed decision was already used/);
    const s = await handle.query(statusQuery);
    expect(s.stage).toBe('awaiting_human');
    expect(s.decisions).toHaveLength(1);
    await handle.terminate('test done');
  });

  it('two replayed signatures do not meet a quorum of two on a new run', async () => {
    const p = proposal('financial_op');
    const first = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    await decide(sys.client, first.workflow_id, { decision: 'approve', approver: 'scott' }, { key: scott });
    const done: ProposalOutcome = await decide(
      sys.client,
      first.workflow_id,
      { decision: 'approve', approver: 'alice' },
      { key: alice },
    );
    expect(done.status).toBe('approved');
    const approvals = captured(await getStatus(sys.client, first.workflow_id));
    expect(approvals).toHaveLength(2);

    const again = await startUnderSameId(sys.client, sys, first.workflow_id, p);
    expect((await untilAwaitingHuman(again))?.stage).toBe('awaiting_human');
    const answers = await replay(again, approvals);
    expect(answers).toEqual([
      expect.stringMatching(/signed for another run/),
      expect.stringMatching(/signed for another run/),
    ]);
    const after = await again.query(statusQuery);
    expect(after.stage).toBe('awaiting_human');
    expect(after.decisions).toEqual([]);
    await again.terminate('test done');
  });
});

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Runs the built CLI as a user would; resolves with its exit code and output. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: REPO,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
          AGENT_JUDGE_POLICY: '',
        },
        timeout: 50_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('agent-judge decide --key', () => {
  let sys: TestSystem;
  let dir: string;
  beforeAll(async () => {
    sys = await startSystem({
      spec: {
        escalation: { timeout: '5m', approvers: ['scott'], approverKeys: { scott: scott.public_key }, reminderAt: 0 },
      },
    });
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-keys-'));
  });
  afterAll(async () => {
    await sys?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs a decision the workflow accepts, bound to the content and the run it was made for', async () => {
    const p = proposal('financial_op');
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const keyFile = join(dir, 'scott.key');
    writeFileSync(keyFile, JSON.stringify(scott));
    const run = await cli(['decide', String(p.proposal_id), 'approve', '--approver', 'scott', '--key', keyFile]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as ProposalOutcome).status).toBe('approved');
    const handle = sys.client.workflow.getHandle(waiting.workflow_id);
    const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId;
    const [decision] = (await handle.query(statusQuery)).decisions;
    expect(decision?.signature).toMatchObject({
      binds: { run_id: firstRunId, content_sha256: proposalContentDigest(parseProposal(p)) },
    });
  });
});
