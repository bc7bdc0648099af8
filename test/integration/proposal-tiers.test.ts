import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitAndWait, getStatus } from '../../src/client/proposals';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({
    // About tiers and executors: rules-only approvals of full-judge proposals are asked for explicitly
    // (test/integration/judge-without-model.test.ts covers the default, a person decides).
    spec: {
      judge: { withoutModel: 'approve' },
      clarify: { maxRounds: 2, timeout: '5m' },
      escalation: { timeout: '5m', approvers: ['scott'] },
    },
  });
});
afterAll(async () => sys?.stop());

describe('tiers', () => {
  it('no-judge: memory_write executes at once, decided by policy', async () => {
    const p = proposal('memory_write', { parameters: { content: 'the build is green' } });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('executed');
    expect(out.verdict?.verdict).toBe('APPROVE');
    expect(out.verdict?.decided_by).toBe('policy');
    expect(out.verdict?.tier).toBe('no-judge');
    const store = join(sys.policy.spec.memory.dir, 'memory.jsonl');
    expect(existsSync(store)).toBe(true);
    expect(readFileSync(store, 'utf8')).toContain('the build is green');
  });

  it('lightweight: a clean vault note is approved by the topic rule', async () => {
    const out = await submitAndWait(sys.client, proposal('vault_note_create'), { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('approved');
    expect(out.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'rules', rule: 'vault.notes-folder' });
  });

  it('lightweight: a secret in an issue comment is rejected, naming the rule', async () => {
    const p = proposal('issue_comment', { parameters: { body: 'key is AKIAABCDEFGHIJKLMNOP' } });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('rejected');
    expect(out.verdict?.rule).toBe('secrets.aws-access-key');
    expect(out.verdict?.reason).toContain('parameters.body');
  });

  it('full-judge: an allowlisted exec runs and its output is captured', async () => {
    const out = await submitAndWait(
      sys.client,
      proposal('exec', { parameters: { command: ['echo', 'judged', 'and', 'run'] } }),
      {
        taskQueue: sys.taskQueues.workflow,
      },
    );
    expect(out.status).toBe('executed');
    expect(out.verdict?.decided_by).toBe('rules');
    expect(out.execution?.status).toBe('succeeded');
    expect((out.execution?.output as { stdout: string }).stdout).toBe('judged and run\n');
  });

  it('full-judge: exec not on the allowlist is rejected', async () => {
    const out = await submitAndWait(sys.client, proposal('exec', { parameters: { command: ['rm', '-rf', '/'] } }), {
      taskQueue: sys.taskQueues.workflow,
    });
    expect(out.status).toBe('rejected');
    expect(out.verdict?.rule).toBe('exec.allowlist');
    expect(out.execution).toBeNull();
  });

  it('human-only: waits for a person; status shows the dispute and the deadline', async () => {
    const p = proposal('financial_op');
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('awaiting_human');
    const st = await getStatus(sys.client, String(p.proposal_id));
    expect(st.dispute?.actor_position).toBe(p.justification);
    expect(st.deadlines.human).not.toBeNull();
  });
});
