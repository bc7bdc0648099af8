/**
 * Scoped grants on the real server (docs/grants.md): an approver's signed grant approves the calls it covers before
 * any judge or person (`decided_by: grant:<id>`, still with a capability token), counts its uses, ends at its last
 * use, its expiry or its revocation, and refuses everything an attacker with namespace access tries: unsigned or
 * forged grants, grants beyond the policy's bounds, a grant restarted after it ended, another agent's calls.
 */
import pino from 'pino';
import { Client, Connection, WorkflowIdReusePolicy } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LiveGrants } from '../../src/activities/live-grants';
import {
  createGrant,
  grantDefinitionFor,
  grantSessionFor,
  grantStatus,
  listGrants,
  revokeGrant,
  type GrantFromProposal,
} from '../../src/client/grants';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import { parseProposal } from '../../src/contracts/proposal';
import type { GrantDefinition, GrantStatus } from '../../src/contracts/grant';
import { generateIdentity } from '../../src/identity/keys';
import { signGrant } from '../../src/identity/sign-grant';
import { GRANT_MEMO_KEY, GRANT_WORKFLOW_TYPE, grantWorkflowId, useGrantUpdate } from '../../src/names';
import { McpRuleSchema } from '../../src/contracts/mcp';
import { createGate, type GateAnswer } from '../../src/gate';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const scott = generateIdentity();
const mallory = generateIdentity();

describe('scoped grants', () => {
  let sys: TestSystem;
  let connection: Connection;
  let grants: LiveGrants;

  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new Client({ connection, namespace: inject('temporalNamespace') });
    // The test's own index, refreshed on demand: nothing waits for the 2 s background refresh.
    const queue = `grants-${Math.random().toString(36).slice(2)}`;
    grants = new LiveGrants({ client, taskQueue: queue, logger: pino({ level: 'silent' }) });
    sys = await startSystem({
      grants,
      spec: {
        escalation: { timeout: '5m', approvers: ['scott'], approverKeys: { scott: scott.public_key }, reminderAt: 0 },
        grants: { tiers: ['human-only', 'full-judge-review'], maxLifetime: '1h', maxUses: 50 },
      },
      taskQueuePrefix: queue,
    });
  });
  afterAll(async () => {
    grants?.stop();
    await sys?.stop();
    await connection?.close();
  });

  const submit = (p: Record<string, unknown>) => submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
  const grantFor = (p: Record<string, unknown>, options: Partial<GrantFromProposal> = {}): GrantDefinition =>
    grantDefinitionFor(parseProposal(p), {
      approver: 'scott',
      lifetimeMs: 30 * 60_000,
      maxUses: 2,
      scope: { kind: 'identical' },
      ...options,
    });
  const start = (definition: GrantDefinition, key = scott) =>
    createGrant(sys.client, signGrant(definition, key), { taskQueue: sys.taskQueues.workflow });
  const payment = (amount: number, overrides: Record<string, unknown> = {}) =>
    proposal('financial_op', { parameters: { amount, currency: 'EUR' }, ...overrides });

  it('a signed grant approves identical calls before any person, each with a token, until used up', async () => {
    const first = payment(25);
    expect((await submit(first)).status).toBe('awaiting_human');
    await decide(sys.client, String(first.proposal_id), { decision: 'approve', approver: 'scott' }, { key: scott });
    const live = await start(grantFor(first));
    expect(live.state).toBe('live');
    await grants.refresh();

    // The same action with another justification and proposal_id: covered.
    const second = await submit(payment(25));
    expect(second.status).toBe('approved');
    expect(second.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: `grant:${live.definition.grant_id}` });
    expect(second.verdict?.reason).toMatch(/use 1 of 2/);
    expect(second.capability?.token).toEqual(expect.any(String));

    // Another amount is another action: a person decides.
    expect((await submit(payment(26))).status).toBe('awaiting_human');
    // Another agent's identical call: not covered either.
    expect((await submit(payment(25, { agent_id: '@marketing' }))).status).toBe('awaiting_human');

    const third = await submit(payment(25));
    expect(third.verdict?.decided_by).toBe(`grant:${live.definition.grant_id}`);
    // Used up: the index may still list it, the grant's workflow refuses.
    expect((await submit(payment(25))).status).toBe('awaiting_human');

    const status = await grantStatus(sys.client, live.definition.grant_id);
    expect(status.state).toBe('used_up');
    expect(status.uses.map((u) => u.workflow_id)).toEqual([second.workflow_id, third.workflow_id]);
  });

  it('a pattern grant covers only calls whose named fields stay equal; a revoked grant approves nothing', async () => {
    const seed = payment(10, { target: { account: 'travel' } });
    const live = await start(
      grantFor(seed, { scope: { kind: 'pattern', same: ['target.account', 'parameters.currency'] }, maxUses: 10 }),
    );
    await grants.refresh();
    expect((await submit(payment(99, { target: { account: 'travel' } }))).verdict?.decided_by).toBe(
      `grant:${live.definition.grant_id}`,
    );
    expect((await submit(payment(99, { target: { account: 'payroll' } }))).status).toBe('awaiting_human');

    const revoked = await revokeGrant(sys.client, live.definition.grant_id, { by: 'scott', reason: 'trip booked' });
    expect(revoked.state).toBe('revoked');
    // The index still lists it (not refreshed): the grant's own workflow refuses the use.
    expect(grants.candidates(parseProposal(payment(5, { target: { account: 'travel' } })))).toContain(
      live.definition.grant_id,
    );
    expect((await submit(payment(5, { target: { account: 'travel' } }))).status).toBe('awaiting_human');
    await expect(revokeGrant(sys.client, live.definition.grant_id, { by: 'scott' })).rejects.toThrow(/not running/);
  });

  it('refuses unsigned, forged and out-of-bounds grants at start, naming why', async () => {
    const p = payment(1);
    await expect(
      createGrant(sys.client, { definition: grantFor(p) }, { taskQueue: sys.taskQueues.workflow }),
    ).rejects.toThrow(/scott must sign grants/);
    await expect(start(grantFor(p), mallory)).rejects.toThrow(/does not verify against scott's key/);
    await expect(start(grantFor(p, { approver: 'mallory' }))).rejects.toThrow(/mallory is not an approver/);
    await expect(start(grantFor(p, { maxUses: 51 }))).rejects.toThrow(/above the policy's spec.grants.maxUses \(50\)/);
    await expect(start(grantFor(p, { lifetimeMs: 2 * 3_600_000 }))).rejects.toThrow(
      /longer than spec.grants.maxLifetime/,
    );
    // An action type whose tier the policy does not let grants cover (vault notes are lightweight here).
    await expect(start(grantFor(proposal('vault_note_create')))).rejects.toThrow(
      /lightweight-approval in the policy, and spec.grants.tiers allows grants only for human-only, full-judge-review/,
    );
    // None of them is live, and a proposal they would have covered asks a person.
    await grants.refresh();
    expect(grants.size).toBe((await listGrants(sys.client, { taskQueue: sys.taskQueues.workflow })).length);
    expect((await submit(payment(1))).status).toBe('awaiting_human');
  });

  /** A runtime's gate mapping the fake bank's `pay` tool to a financial_op, performed by its caller. */
  const payGate = () =>
    createGate({
      client: sys.client,
      taskQueue: sys.taskQueues.workflow,
      rules: {
        rules: [
          McpRuleSchema.parse({
            name: 'fake.pay',
            server: 'bank',
            tool: 'pay',
            actionType: 'financial_op',
            target: { account: '$.account' },
            parameters: { amount: '$.amount', currency: 'EUR' },
          }),
        ],
      },
      performer: { agentId: '@engineering', redeemer: 'hook:fake' },
      holdMs: 3000,
    });

  it("a runtime's gate: a call its caller performs is forwarded on a grant, leased and reported once", async () => {
    const gate = payGate();
    const call = { runtime: 'fake', server: 'bank', tool: 'pay', arguments: { account: 'hosting', amount: 12 } };
    const leased = async (a: GateAnswer) => {
      if (a.kind !== 'forward' || a.lease === null) throw new Error(`expected a leased forward: ${JSON.stringify(a)}`);
      await a.lease.report('ok');
      return a.lease;
    };
    // A payment is human-only: the first call waits for a person, who approves it and grants calls like it.
    const first = await gate.decide(call);
    expect(first).toMatchObject({ kind: 'pending', waitingFor: 'human' });
    const firstId = (first as { proposalId: string }).proposalId;
    await decide(sys.client, firstId, { decision: 'approve', approver: 'scott' }, { key: scott });
    const { proposal: held } = await getStatus(sys.client, firstId);
    const live = await start(
      grantDefinitionFor(held, { approver: 'scott', lifetimeMs: 600_000, maxUses: 5, scope: { kind: 'identical' } }),
    );
    await leased(await gate.decide(call));
    await grants.refresh();

    // The identical call again (a new proposal: the first one finished): the grant approves it, no person is asked.
    const again = await leased(await gate.decide(call));
    expect(again.proposalId).not.toBe(firstId);
    expect(again.status.verdict).toMatchObject({ decided_by: `grant:${live.definition.grant_id}` });
    expect(again.status.capability?.redemption).toMatchObject({ redeemer: 'hook:fake' });
    const after = await getStatus(sys.client, again.proposalId);
    expect(after.caller).toMatchObject({ outcome: 'ok' });
    expect((await grantStatus(sys.client, live.definition.grant_id)).uses.map((u) => u.workflow_id)).toEqual([
      again.workflowId,
    ]);
  });

  it("a session-scoped grant approves its session's identical calls, not another session's or none", async () => {
    const inSession = (session?: string) => payment(31, session === undefined ? {} : { session_id: session });
    const first = inSession('sess-a');
    expect((await submit(first)).status).toBe('awaiting_human');
    await decide(sys.client, String(first.proposal_id), { decision: 'approve', approver: 'scott' }, { key: scott });
    const { proposal: held } = await getStatus(sys.client, String(first.proposal_id));
    expect(held.session_id).toBe('sess-a');
    const live = await start(grantFor(first, { sessionId: grantSessionFor(held, { thisSession: true }), maxUses: 5 }));
    expect(live.definition.session_id).toBe('sess-a');
    await grants.refresh();
    expect(
      (await listGrants(sys.client, { taskQueue: sys.taskQueues.workflow })).find(
        (g) => g.grant_id === live.definition.grant_id,
      ),
    ).toMatchObject({ session_id: 'sess-a' });

    const same = await submit(inSession('sess-a'));
    expect(same.status).toBe('approved');
    expect(same.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: `grant:${live.definition.grant_id}` });
    // The identical call from another session, or from no session: the index offers no candidate, a person decides.
    expect(grants.candidates(parseProposal(inSession('sess-b')))).not.toContain(live.definition.grant_id);
    const other = await submit(inSession('sess-b'));
    expect(other.status).toBe('awaiting_human');
    expect(other.verdict?.decided_by).toBeUndefined();
    expect((await submit(inSession())).status).toBe('awaiting_human');
    // The grant's own workflow (the authority) refuses another session's use even when asked directly.
    await expect(
      sys.client.workflow.getHandle(grantWorkflowId(live.definition.grant_id)).executeUpdate(useGrantUpdate, {
        args: [
          {
            workflow_id: other.workflow_id,
            agent_id: '@engineering',
            session_id: 'sess-b',
            action_type: 'financial_op',
            target: parseProposal(inSession('sess-b')).target,
            parameters: parseProposal(inSession('sess-b')).parameters,
            tier: 'human-only',
          },
        ],
      }),
    ).rejects.toThrow();
    const status = await grantStatus(sys.client, live.definition.grant_id);
    expect(status.uses.map((u) => u.workflow_id)).toEqual([same.workflow_id]);

    // A malformed session id is refused at the edge, naming the field and the rule.
    await expect(submit(inSession('sess a'))).rejects.toThrow(/session_id: .*1-256 characters of letters, digits/);
  });

  it("a runtime's gate: a grant for one session covers that session's next identical call, not another's", async () => {
    const gate = payGate();
    const call = (sessionId: string) => ({
      runtime: 'fake',
      server: 'bank',
      tool: 'pay',
      arguments: { account: 'session-test', amount: 13 },
      session: { sessionId },
    });
    const first = await gate.decide(call('s-one'));
    expect(first).toMatchObject({ kind: 'pending', waitingFor: 'human' });
    const firstId = (first as { proposalId: string }).proposalId;
    await decide(sys.client, firstId, { decision: 'approve', approver: 'scott' }, { key: scott });
    const { proposal: held } = await getStatus(sys.client, firstId);
    expect(held.session_id).toBe('s-one');
    const live = await start(
      grantDefinitionFor(held, {
        approver: 'scott',
        lifetimeMs: 600_000,
        maxUses: 5,
        scope: { kind: 'identical' },
        sessionId: grantSessionFor(held, { thisSession: true }),
      }),
    );
    const performed = await gate.decide(call('s-one'));
    if (performed.kind !== 'forward' || performed.lease === null) throw new Error(JSON.stringify(performed));
    await performed.lease.report('ok');
    await grants.refresh();

    const again = await gate.decide(call('s-one'));
    if (again.kind !== 'forward' || again.lease === null) throw new Error(JSON.stringify(again));
    expect(again.lease.status.verdict).toMatchObject({ decided_by: `grant:${live.definition.grant_id}` });
    await again.lease.report('ok');

    // The identical call in another session is another proposal, which the session's grant does not cover.
    const elsewhere = await gate.decide(call('s-two'));
    expect(elsewhere).toMatchObject({ kind: 'pending', waitingFor: 'human' });
    expect((elsewhere as { proposalId: string }).proposalId).not.toBe(firstId);
    expect((await grantStatus(sys.client, live.definition.grant_id)).uses.map((u) => u.workflow_id)).toEqual([
      again.lease.workflowId,
    ]);
  });

  it('a grant ends at its expiry, and its signed request cannot start it again', async () => {
    const p = payment(7);
    const definition = grantFor(p, { lifetimeMs: 2000 });
    const live = await start(definition);
    await grants.refresh();
    const workflowId = grantWorkflowId(definition.grant_id);
    await sys.client.workflow.getHandle(workflowId).result();
    expect((await grantStatus(sys.client, definition.grant_id)).state).toBe('expired');
    expect((await submit(payment(7))).status).toBe('awaiting_human');

    // Someone who read the signed request from the history starts it again under its id (their reuse policy):
    // the grant refuses to run a second time, even with a fresh signature window.
    const again = await sys.client.workflow.start(GRANT_WORKFLOW_TYPE, {
      taskQueue: sys.taskQueues.workflow,
      workflowId,
      args: [signGrant({ ...definition, expires_at: new Date(Date.now() + 600_000).toISOString() }, mallory)],
      memo: { [GRANT_MEMO_KEY]: definition },
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    const againStatus = (await again.result()) as GrantStatus;
    expect(againStatus.state).toBe('refused');
    expect(againStatus.refusal).toMatch(/already ran/);
    const replayed = await sys.client.workflow.start(GRANT_WORKFLOW_TYPE, {
      taskQueue: sys.taskQueues.workflow,
      workflowId,
      args: [signGrant(definition, scott)],
      memo: { [GRANT_MEMO_KEY]: definition },
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    const replayedStatus = (await replayed.result()) as GrantStatus;
    expect(replayedStatus.state).toBe('refused');
    expect(replayedStatus.refusal).toMatch(/already ran/);
    expect((await grantStatus(sys.client, definition.grant_id)).state).toBe('refused');
    expect((await submit(payment(7))).status).toBe('awaiting_human');
    expect(live.definition.grant_id).toBe(definition.grant_id);
  });
});
