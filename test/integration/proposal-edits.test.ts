/**
 * Approve with edits on the real server (docs/edits.md): an approver narrows the action, the decision signs the edited
 * action's digest, the rules check the edited action before the decision counts, and the executor performs exactly
 * the edited action; widening edits, edits the rules refuse and replayed unedited signatures record nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import { actionDigest } from '../../src/contracts/capability';
import { proposalContentDigest } from '../../src/contracts/digest';
import { parseProposal } from '../../src/contracts/proposal';
import type { HumanDecision } from '../../src/contracts/messages';
import { generateIdentity } from '../../src/identity/keys';
import { humanDecisionUpdate, statusQuery } from '../../src/names';
import type { proposalWorkflow } from '../../src/workflows/proposal';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const scott = generateIdentity();
const alice = generateIdentity();

const HUMAN_ONLY = (actionType: string) => ({
  actionType,
  surface: `${actionType}, decided by a person in this test`,
  surfaceArea: 1,
  actionRisk: 1,
  tier: 'human-only',
});

describe('approve with edits', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem({
      spec: {
        defaultTier: 'human-only',
        riskMatrix: [HUMAN_ONLY('memory_write'), HUMAN_ONLY('forgejo_pr_create'), HUMAN_ONLY('financial_op')],
        escalation: { timeout: '5m', approvers: ['scott'], approverKeys: { scott: scott.public_key }, reminderAt: 0 },
      },
    });
  });
  afterAll(async () => sys?.stop());

  it('a shortened memory write, signed over the edited digest, is what the executor writes', async () => {
    const p = proposal('memory_write', { parameters: { content: 'remember the milk, and the bank PIN 1234' } });
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(waiting.status).toBe('awaiting_human');
    const out = await decide(
      sys.client,
      waiting.workflow_id,
      {
        decision: 'approve',
        approver: 'scott',
        reason: 'not the PIN',
        edits: [{ path: 'parameters.content', value: 'remember the milk' }],
      },
      { key: scott },
    );
    expect(out.status).toBe('executed');
    const submitted = parseProposal(p);
    expect(out.edited).toMatchObject({
      from_digest: proposalContentDigest(submitted),
      changes: [
        { path: 'parameters.content', from: 'remember the milk, and the bank PIN 1234', to: 'remember the milk' },
      ],
      action: { action_type: 'memory_write', parameters: { content: 'remember the milk' } },
    });
    expect(out.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'human:scott', edited: { changes: [{}] } });
    // The store holds the edited content, never the proposed one.
    const store = readFileSync(join(sys.policy.spec.memory.dir, 'memory.jsonl'), 'utf8');
    expect(store).toContain('"content":"remember the milk"');
    expect(store).not.toContain('PIN');

    const status = await getStatus(sys.client, waiting.workflow_id);
    // History shows both: the proposal as submitted, and the edited action with its own digest.
    expect(status.proposal.parameters).toEqual({ content: 'remember the milk, and the bank PIN 1234' });
    expect(status.edited?.proposal.parameters).toEqual({ content: 'remember the milk' });
    expect(status.edited?.to_digest).toBe(proposalContentDigest(status.edited!.proposal));
    expect(status.decisions[0]?.signature?.binds?.edited_sha256).toBe(status.edited?.to_digest);
    // The single-use token bound the edited action.
    expect(status.capability?.action_sha256).toBe(actionDigest(status.edited!.proposal));
  });

  it('a widening edit is refused naming the field and the rule; nothing is recorded', async () => {
    const p = proposal('financial_op', { parameters: { amount: 100, currency: 'EUR' } });
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    await expect(
      decide(
        sys.client,
        waiting.workflow_id,
        { decision: 'approve', approver: 'scott', edits: [{ path: 'parameters.amount', value: 1000 }] },
        { key: scott },
      ),
    ).rejects.toThrow(/parameters\.amount: may only be lowered: 1000 is more than 100/);
    await expect(
      decide(
        sys.client,
        waiting.workflow_id,
        { decision: 'approve', approver: 'scott', edits: [{ path: 'target.account', value: 'other' }] },
        { key: scott },
      ),
    ).rejects.toThrow(/expected scope_claim.<field> or parameters.<field>/);
    const handle = sys.client.workflow.getHandle<typeof proposalWorkflow>(waiting.workflow_id);
    // Sent as a raw Update (no client-side check), the workflow refuses it the same way.
    await expect(
      handle.executeUpdate(humanDecisionUpdate, {
        args: [
          {
            decision: 'approve',
            approver: 'scott',
            via: 'api',
            edits: [{ path: 'parameters.currency', value: 'USD' }],
          },
        ],
      }),
    ).rejects.toThrow();
    const s = await handle.query(statusQuery);
    expect(s.stage).toBe('awaiting_human');
    expect(s.decisions).toEqual([]);
    // Lowered, it is approved and the caller is told the edited amount.
    const out = await decide(
      sys.client,
      waiting.workflow_id,
      { decision: 'approve', approver: 'scott', edits: [{ path: 'parameters.amount', value: 40 }] },
      { key: scott },
    );
    expect(out.status).toBe('approved');
    expect(out.edited?.action.parameters).toEqual({ amount: 40, currency: 'EUR' });
    await handle.terminate('test done');
  });

  it('an edit the rules refuse (max_lines below the diff) is refused by the judge worker; none recorded', async () => {
    const p = proposal('forgejo_pr_create');
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(waiting.status).toBe('awaiting_human');
    await expect(
      decide(
        sys.client,
        waiting.workflow_id,
        { decision: 'approve', approver: 'scott', edits: [{ path: 'scope_claim.max_lines', value: 10 }] },
        { key: scott },
      ),
    ).rejects.toThrow(/the edited action fails the rules \(scope\.max_lines/);
    const handle = sys.client.workflow.getHandle<typeof proposalWorkflow>(waiting.workflow_id);
    const s = await handle.query(statusQuery);
    expect(s.stage).toBe('awaiting_human');
    expect(s.decisions).toEqual([]);
    expect(s.edited).toBeUndefined();
    await handle.terminate('test done');
  });

  it('an unedited signature replayed with edits added is refused; so is a forged edited_sha256 claim', async () => {
    const p = proposal('financial_op', { parameters: { amount: 100, currency: 'EUR', memo: 'quarterly invoice' } });
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const handle = sys.client.workflow.getHandle<typeof proposalWorkflow>(waiting.workflow_id);
    // An attacker holds an unedited signed approval (captured from the run) and adds edits to it.
    const { signDecision } = await import('../../src/identity/sign-decision');
    const description = await handle.describe();
    const binding = {
      workflowId: waiting.workflow_id,
      runId: description.raw.workflowExecutionInfo?.firstRunId || description.runId,
      contentSha256: proposalContentDigest(parseProposal(p)),
    };
    const unedited = signDecision(binding, { decision: 'approve', approver: 'scott', via: 'api' }, scott);
    const edits = [{ path: 'parameters.memo', value: 'quarterly' }];
    const send = (d: HumanDecision) => handle.executeUpdate(humanDecisionUpdate, { args: [d] });
    await expect(send({ ...unedited, edits })).rejects.toThrow();
    const why = (d: HumanDecision) =>
      send(d).then(
        () => 'accepted',
        (err: { cause?: { message?: string } }) => err.cause?.message ?? '',
      );
    const refused = await why({ ...unedited, edits });
    expect(refused).toMatch(/does not bind the edited action/);
    const forged = await why({
      ...unedited,
      edits,
      signature: { ...unedited.signature!, binds: { ...unedited.signature!.binds!, edited_sha256: 'a'.repeat(64) } },
    });
    expect(forged).toMatch(/signed for another edited action/);
    expect((await handle.query(statusQuery)).decisions).toEqual([]);
    // The same unedited signature is still good for what it says: an unedited approval.
    const out = await send(unedited);
    expect(out.status).toBe('approved');
    expect(out.edited).toBeUndefined();
    await handle.terminate('test done');
  });
});

describe('approve with edits under a quorum of two', () => {
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

  it('every approval names the same edited action', async () => {
    const p = proposal('financial_op', { parameters: { amount: 100, currency: 'EUR' } });
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const edits = [{ path: 'parameters.amount', value: 50 }];
    const first = await decide(
      sys.client,
      waiting.workflow_id,
      { decision: 'approve', approver: 'scott', edits },
      { key: scott },
    );
    expect(first.status).toBe('awaiting_human');
    await expect(
      decide(sys.client, waiting.workflow_id, { decision: 'approve', approver: 'alice' }, { key: alice }),
    ).rejects.toThrow(/scott approved an edited action .*approve with the same edits/);
    await expect(
      decide(
        sys.client,
        waiting.workflow_id,
        { decision: 'approve', approver: 'alice', edits: [{ path: 'parameters.amount', value: 60 }] },
        { key: alice },
      ),
    ).rejects.toThrow(/approve with the same edits/);
    const done = await decide(
      sys.client,
      waiting.workflow_id,
      { decision: 'approve', approver: 'alice', edits },
      { key: alice },
    );
    expect(done.status).toBe('approved');
    expect(done.edited?.action.parameters).toEqual({ amount: 50, currency: 'EUR' });
    const status = await getStatus(sys.client, waiting.workflow_id);
    expect(status.capability?.action_sha256).toBe(actionDigest(status.edited!.proposal));
    await sys.client.workflow.getHandle(waiting.workflow_id).terminate('test done');
  });
});
