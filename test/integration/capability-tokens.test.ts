/**
 * Capability tokens on the real dev server (seed 000 §8): every approved action gets one token,
 * redeemed once through its proposal's workflow. Executed actions: the executor verifies and redeems
 * before acting. Caller-performed actions: the outcome carries the token and the run stays open
 * until it is redeemed or expires.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CapabilityRefusedError, redeemCapability } from '../../src/client/capabilities';
import { getStatus, submitAndWait } from '../../src/client/proposals';
import {
  actionDigest,
  EXECUTOR_REDEEMER,
  policyDigest,
  type RedeemCapabilityInput,
} from '../../src/contracts/capability';
import { verifyCapability } from '../../src/identity/capability';
import { awaitSettledUpdate, redeemCapabilityUpdate } from '../../src/names';
import type { proposalWorkflow } from '../../src/workflows/proposal';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
/** The same with a 10-second token lifetime, for the expiry path only. */
let sysShort: TestSystem;
let webhook: { url: string; headers: IncomingHttpHeaders[]; close(): Promise<void> };
const spec = (ttl: string, webhookUrl: string) => ({
  judge: { withoutModel: 'approve' },
  capabilities: { ttl },
  webhook: { routes: { web_publish: webhookUrl } },
});

function startWebhook(): Promise<typeof webhook> {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        headers,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

beforeAll(async () => {
  webhook = await startWebhook();
  sys = await startSystem({ spec: spec('10m', webhook.url) });
  sysShort = await startSystem({ spec: spec('10s', webhook.url) });
});
afterAll(async () => {
  await sys?.stop();
  await sysShort?.stop();
  await webhook?.close();
});

const submit = (s: TestSystem, p: Record<string, unknown>) =>
  submitAndWait(s.client, p, { taskQueue: s.taskQueues.workflow });
const actionOf = (p: Record<string, unknown>) => ({
  action_type: String(p.action_type),
  target: p.target,
  parameters: p.parameters,
});

describe('executed actions', () => {
  it('the workflow redeems the token for its executor as it schedules it; a second redemption is refused', async () => {
    const p = proposal('memory_write');
    const outcome = await submit(sys, p);
    expect(outcome.status).toBe('executed');
    // The executor used the token: the outcome does not hand it out.
    expect(outcome.capability).toBeUndefined();
    const status = await getStatus(sys.client, String(p.proposal_id));
    const c = status.capability!;
    expect(c).toMatchObject({ audience: 'executor:memory_write', executed_by_agent_judge: true, expired_at: null });
    expect(c.redemption).toMatchObject({ token_id: c.token_id, audience: 'executor:memory_write' });
    // Recorded by the workflow as it handed the token to its executor (no Update of the executor's own).
    expect(c.redemption?.redeemer).toBe(EXECUTOR_REDEEMER);
    const history = await sys.client.workflow.getHandle(outcome.workflow_id).fetchHistory();
    const updates = (history.events ?? []).map(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name,
    );
    // The submitter's own Update (submit-and-wait) is there; no redeeming one is.
    expect(updates).toContain(awaitSettledUpdate.name);
    expect(updates).not.toContain(redeemCapabilityUpdate.name);
    const check = verifyCapability(c.token, { issuers: sys.policy.spec.capabilities.issuers, nowMs: Date.now() });
    expect(check.ok && check.value.claims).toMatchObject({
      sub: '@engineering',
      wid: outcome.workflow_id,
      action_sha256: actionDigest(actionOf(p)),
      // The policy in force, as the run recorded it (the worker computes its digest once, the run takes it along).
      policy_sha256: policyDigest(sys.policy),
    });

    const again = redeemCapability(sys.client, { token: c.token, action: actionOf(p) });
    await expect(again).rejects.toThrow(CapabilityRefusedError);
    await expect(again).rejects.toThrow(new RegExp(`already redeemed .* by ${EXECUTOR_REDEEMER}`));
  });

  it('the webhook executor sends the redeemed token to the receiver in Agent-Judge-Capability', async () => {
    const p = proposal('web_publish');
    const outcome = await submit(sys, p);
    expect(outcome.status).toBe('executed');
    const sent = webhook.headers.at(-1)?.['agent-judge-capability'];
    expect(typeof sent).toBe('string');
    // The action as agent-judge validated it (schema defaults applied): what the executor performed.
    const performed = (await getStatus(sys.client, String(p.proposal_id))).proposal;
    const check = verifyCapability(String(sent), {
      issuers: sys.policy.spec.capabilities.issuers,
      nowMs: Date.now(),
      audience: 'executor:web_publish',
      workflowId: outcome.workflow_id,
      actionSha256: actionDigest(performed),
    });
    expect(check).toMatchObject({ ok: true });
    expect((await getStatus(sys.client, String(p.proposal_id))).capability?.redemption).not.toBeNull();
  });
});

describe('actions the caller performs', () => {
  it('the outcome carries the token; of two concurrent redemptions exactly one wins; the run then closes', async () => {
    const p = proposal('forgejo_pr_create');
    const outcome = await submit(sys, p);
    expect(outcome.status).toBe('approved');
    const cap = outcome.capability!;
    expect(cap).toMatchObject({ audience: 'executor:forgejo_pr_create', redemption: null, expired_at: null });
    expect(Date.parse(cap.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);

    const tries = await Promise.allSettled([
      redeemCapability(sys.client, { token: cap.token, action: actionOf(p), redeemer: 'first' }),
      redeemCapability(sys.client, { token: cap.token, action: actionOf(p), redeemer: 'second' }),
    ]);
    const won = tries.filter((t) => t.status === 'fulfilled');
    const lost = tries.filter((t) => t.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(String((lost[0] as PromiseRejectedResult).reason)).toMatch(/already redeemed/);

    const final = await sys.client.workflow.getHandle<typeof proposalWorkflow>(outcome.workflow_id).result();
    expect(final.status).toBe('approved');
    expect(final.capability?.redemption?.token_id).toBe(cap.token_id);
  });

  it('a retried redemption (same nonce) gets the same answer, also after the run closed', async () => {
    const p = proposal('forgejo_pr_create');
    const cap = (await submit(sys, p)).capability!;
    const options = { token: cap.token, action: actionOf(p), nonce: 'retry-me', redeemer: 'cli' };
    const first = await redeemCapability(sys.client, options);
    const second = await redeemCapability(sys.client, options);
    expect(second).toEqual(first);
  });

  it('refuses a wrong audience, another action and a token of another workflow, changing nothing', async () => {
    const a = proposal('forgejo_pr_create');
    const b = proposal('forgejo_pr_create');
    const [oa, ob] = [await submit(sys, a), await submit(sys, b)];
    const token = oa.capability!.token;
    await expect(
      redeemCapability(sys.client, { token, action: actionOf(a), audience: 'mcp:filesystem' }),
    ).rejects.toThrow(/the token is for executor:forgejo_pr_create, not mcp:filesystem/);
    await expect(
      redeemCapability(sys.client, {
        token,
        action: { ...actionOf(a), parameters: { files_changed: ['src/other.ts'], estimated_diff_lines: 1 } },
      }),
    ).rejects.toThrow(/not the approved one/);
    // A's token sent to B's workflow directly (a client would route it to A by its wid claim).
    const input: RedeemCapabilityInput = {
      token,
      audience: 'executor:forgejo_pr_create',
      action_sha256: actionDigest(actionOf(b)),
      redeemer: 'intruder',
      nonce: 'n1',
    };
    await expect(
      sys.client.workflow.getHandle(ob.workflow_id).executeUpdate(redeemCapabilityUpdate, { args: [input] }),
    ).rejects.toThrow();
    const statusB = await getStatus(sys.client, String(b.proposal_id));
    expect(statusB.capability?.redemption).toBeNull();
    expect((await getStatus(sys.client, String(a.proposal_id))).capability?.redemption).toBeNull();
    // Nothing was used up: the right redemption still goes through.
    await expect(redeemCapability(sys.client, { token, action: actionOf(a) })).resolves.toMatchObject({
      token_id: oa.capability!.token_id,
    });
    await redeemCapability(sys.client, { token: ob.capability!.token, action: actionOf(b) });
  });

  it('closes the run when nobody redeems before expiry; a later redemption is refused', async () => {
    const p = proposal('forgejo_pr_create');
    const outcome = await submit(sysShort, p);
    expect(outcome.status).toBe('approved');
    const final = await sysShort.client.workflow.getHandle<typeof proposalWorkflow>(outcome.workflow_id).result();
    expect(final.status).toBe('approved');
    expect(final.capability?.redemption).toBeNull();
    expect(final.capability?.expired_at).not.toBeNull();
    await expect(
      redeemCapability(sysShort.client, { token: outcome.capability!.token, action: actionOf(p) }),
    ).rejects.toThrow(/expired/);
  });
});
