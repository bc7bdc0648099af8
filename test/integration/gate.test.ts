/**
 * The gate itself (src/gate/), driven by a fake runtime (`hook:fake`, runtime `fake`) against the real Temporal dev
 * server and the real workers: no MCP anywhere. Each answer is data the runtime acts on; a `forward` is performed
 * once and reported; everything else performs nothing.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate, type GateAnswer, type GateRules, type GateToolCall, type Lease } from '../../src/gate';
import { decide, getStatus } from '../../src/client/proposals';
import { McpRuleSchema } from '../../src/contracts/mcp';
import { freePort } from '../../src/devserver/server';
import { startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { approvers: ['scott'], timeout: '10m' } } });
});
afterAll(async () => sys?.stop());

const rules: GateRules = {
  rules: [
    // A note is a lightweight proposal the policy approves on its patterns; the caller (the runtime) performs it.
    {
      name: 'fake.write_note',
      server: 'notes',
      tool: 'write_note',
      actionType: 'vault_note_create',
      target: { vault: 'main', path: '$.path' },
      parameters: { content: '$.content' },
    },
    {
      name: 'fake.comment',
      server: 'forge',
      tool: 'comment',
      actionType: 'issue_comment',
      target: { repo: 'a/b', issue: 1 },
      parameters: { body: '$.body' },
    },
    {
      name: 'fake.pr',
      server: 'forge',
      tool: 'open_pr',
      actionType: 'forgejo_pr_create',
      target: { repo: 'a/b', branch: '$.branch', base: 'main' },
      parameters: { files_changed: ['src/a.ts'], estimated_diff_lines: 3 },
    },
    { name: 'fake.read', server: 'notes', tool: 'read_note', tier: 'no-judge' },
  ].map((r) => McpRuleSchema.parse(r)),
};

/** A fake runtime: one gate, one performer, calls of its own runtime. */
function runtime(redeemer: string, holdMs = 10_000, client: Client = sys.client) {
  return createGate({
    client,
    taskQueue: sys.taskQueues.workflow,
    rules,
    performer: { agentId: '@engineering', redeemer },
    holdMs,
  });
}

function call(server: string, tool: string, args: Record<string, unknown>, agent?: GateToolCall['agent']) {
  return { runtime: 'fake', server, tool, arguments: args, ...(agent ? { agent } : {}) } satisfies GateToolCall;
}

function leaseOf(a: GateAnswer): Lease {
  if (a.kind !== 'forward' || a.lease === null) throw new Error(`expected a leased forward, got ${JSON.stringify(a)}`);
  return a.lease;
}

describe('the gate, for a runtime other than MCP', () => {
  it('forwards an approved call with a lease for this performer; the outcome is reported once', async () => {
    const gate = runtime('hook:fake');
    const c = call('notes', 'write_note', { path: `notes/${randomUUID()}.md`, content: '# hi' });
    const lease = leaseOf(await gate.decide(c));
    expect(lease.performer).toBe('hook:fake');
    expect(lease.proposalId).toMatch(/^call-[0-9a-f]{32}$/);
    expect(lease.status.proposal.performer).toMatchObject({ by: 'caller', runtime: 'fake', rule: 'fake.write_note' });
    expect(lease.status.capability?.redemption).toMatchObject({ redeemer: 'hook:fake' });
    await lease.report('ok');
    await expect(lease.report('ok')).rejects.toThrow(/already reported/);
    const status = await getStatus(sys.client, lease.proposalId);
    expect(status).toMatchObject({ status: 'executed', caller: { outcome: 'ok' } });
  });

  it('a no-judge rule forwards without a proposal or lease', async () => {
    expect(await runtime('hook:fake').decide(call('notes', 'read_note', { path: 'a' }))).toEqual({
      kind: 'forward',
      rule: 'fake.read',
      lease: null,
      arguments: { path: 'a' },
    });
  });

  it('denies with the verdict; the identical call is denied again from the record', async () => {
    const gate = runtime('hook:fake');
    const c = call('forge', 'comment', { body: `key AKIAABCDEFGHIJKLMNOP ${randomUUID()}` });
    const first = await gate.decide(c);
    expect(first).toMatchObject({ kind: 'deny', recorded: false, final: true, verdict: { verdict: 'REJECT' } });
    const again = await gate.decide(c);
    expect(again).toMatchObject({ kind: 'deny', recorded: true });
    expect(again.kind === 'deny' && first.kind === 'deny' && again.workflowId).toBe(
      first.kind === 'deny' && first.workflowId,
    );
  });

  it('asks to clarify, naming rounds left and the deadline', async () => {
    const a = await runtime('hook:fake').decide(call('forge', 'open_pr', { branch: `f-${randomUUID().slice(0, 8)}` }));
    expect(a).toMatchObject({ kind: 'clarify', roundsLeft: expect.any(Number) as unknown });
    if (a.kind !== 'clarify') throw new Error('expected clarify');
    expect(a.reason).toMatch(/cited_evidence/);
    expect(Date.parse(a.deadline ?? '')).toBeGreaterThan(Date.now());
  });

  it('pending while a person decides; approved, the identical call goes once, to one performer', async () => {
    const first = runtime('hook:fake', 500);
    const second = runtime('hook:other', 500);
    // No rule maps it: a tool_call, which a person decides.
    const c = call('shell', 'rm', { path: `/tmp/${randomUUID()}` });
    const held = await first.decide(c);
    expect(held).toMatchObject({ kind: 'pending', waitingFor: 'human', status: 'awaiting_human' });
    if (held.kind !== 'pending') throw new Error('expected pending');
    expect(held.retryAfterMs).toBeGreaterThan(0);
    await decide(sys.client, held.workflowId, { decision: 'approve', approver: 'scott' });

    const lease = leaseOf(await first.decide(c));
    expect(lease.workflowId).toBe(held.workflowId);
    // Another performer asking for the same approved call while it is leased gets no lease of its own.
    const refused = await second.decide(c);
    expect(refused).toMatchObject({ kind: 'refused', proposal: { workflowId: held.workflowId } });
    if (refused.kind !== 'refused') throw new Error('expected refused');
    expect(refused.reason).toMatch(/already forwarded once/);
    await lease.report('tool_error', 'the tool said no');
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'tool_error', detail: 'the tool said no' },
    });
    // Finished: the identical call now is a new proposal, decided anew (never the old approval again).
    const next = await first.decide(c);
    expect(next).toMatchObject({ kind: 'pending' });
    expect(next.kind === 'pending' && next.workflowId).not.toBe(held.workflowId);
  });

  it('refuses, never forwards, when agent-judge cannot be reached', async () => {
    // The SDK retries UNAVAILABLE ten times with backoff (about 20 s) before a call fails; three attempts take the
    // same path to the same refusal in under a second.
    const connection = Connection.lazy({
      address: `127.0.0.1:${await freePort()}`,
      connectTimeout: '1s',
      interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3 }))],
    });
    const client = new Client({ connection, namespace: 'default' });
    try {
      const a = await runtime('hook:fake', 2000, client).decide(
        call('notes', 'write_note', { path: 'notes/x.md', content: 'x' }),
      );
      expect(a).toMatchObject({ kind: 'refused', proposal: null });
      if (a.kind !== 'refused') throw new Error('expected refused');
      expect(a.reason).toMatch(/agent-judge c(annot reach|ould not judge)/);
    } finally {
      await connection.close();
    }
  });

  it('refuses a call its rule cannot map, before anything starts', async () => {
    const a = await runtime('hook:fake').decide(call('notes', 'write_note', { content: 'no path' }));
    expect(a).toMatchObject({ kind: 'refused', proposal: null });
    if (a.kind !== 'refused') throw new Error('expected refused');
    expect(a.reason).toMatch(/rule fake.write_note cannot map this call/);
  });
});
