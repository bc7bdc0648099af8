import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clarify,
  decide,
  getStatus,
  listProposals,
  submitAndWait,
  submitProposal,
  waitUntilSettled,
} from '../../src/client/proposals';
import { DuplicateProposalError, BadInputError } from '../../src/contracts/errors';
import type { proposalWorkflow } from '../../src/workflows/proposal';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const EVIDENCE = [{ type: 'issue', url: 'https://os.scoble.me/forgejo/sscoble/speckl/issues/42' }];

let sys: TestSystem;
/** Same policy with 2-second deadlines, for the timeout paths only (the rest must not race them). */
let sysShort: TestSystem;
let submit: (p: Record<string, unknown>) => ReturnType<typeof submitAndWait>;
// These tests are about clarify, decisions and execution: rules-only approvals are asked for explicitly.
const spec = (timeout: string) => ({
  judge: { withoutModel: 'approve' },
  clarify: { maxRounds: 2, timeout },
  escalation: { timeout, approvers: ['scott', 'ana', 'lee'], quorum: { 'human-only': 1 }, reminderAt: 0 },
});
beforeAll(async () => {
  sys = await startSystem({ spec: spec('5m') });
  sysShort = await startSystem({ spec: spec('2s') });
  submit = (p) => submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
});
afterAll(async () => {
  await sys?.stop();
  await sysShort?.stop();
});

describe('clarify', () => {
  it('no evidence -> CLARIFY naming what is missing; evidence added -> judged again and approved', async () => {
    const p = proposal('forgejo_pr_create', { cited_evidence: [] });
    const first = await submit(p);
    expect(first.status).toBe('awaiting_clarification');
    expect(first.verdict).toMatchObject({ verdict: 'CLARIFY', rule: 'evidence.missing', decided_by: 'rules' });
    expect(first.verdict?.reason).toContain('cited_evidence');
    const status = await getStatus(sys.client, String(p.proposal_id));
    expect(status.deadlines.clarification).not.toBeNull();

    const second = await clarify(sys.client, String(p.proposal_id), { cited_evidence: EVIDENCE });
    // forgejo_pr_create has no executor here: approved means the caller performs it.
    expect(second.status).toBe('approved');
    expect(second.verdicts.map((v) => v.verdict)).toEqual(['CLARIFY', 'APPROVE']);
    expect(second.verdict?.constraints).toMatchObject({ files_only: ['src/schema/'], max_lines: 80 });
    const after = await getStatus(sys.client, String(p.proposal_id));
    expect(after.clarify_rounds).toBe(1);
    expect(after.proposal.cited_evidence).toEqual(EVIDENCE);
  });

  it('a third CLARIFY ends in REJECT', async () => {
    const p = proposal('forgejo_pr_create', { cited_evidence: [] });
    expect((await submit(p)).status).toBe('awaiting_clarification');
    const r1 = await clarify(sys.client, String(p.proposal_id), { justification: 'Really needed for issue 42.' });
    expect(r1.status).toBe('awaiting_clarification');
    const r2 = await clarify(sys.client, String(p.proposal_id), { justification: 'Still really needed.' });
    expect(r2.status).toBe('rejected');
    expect(r2.verdicts.map((v) => v.verdict)).toEqual(['CLARIFY', 'CLARIFY', 'CLARIFY', 'REJECT']);
    expect(r2.verdict).toMatchObject({ rule: 'clarify.max-rounds', decided_by: 'rules' });
  });

  it('no answer before the clarify timeout -> REJECT decided_by timeout', async () => {
    const p = proposal('exec', { cited_evidence: [], parameters: { command: ['echo', 'late'] } });
    const { workflow_id } = await submitProposal(sysShort.client, p, { taskQueue: sysShort.taskQueues.workflow });
    const handle = sysShort.client.workflow.getHandle<typeof proposalWorkflow>(workflow_id);
    const final = await handle.result();
    expect(final.status).toBe('rejected');
    expect(final.verdict).toMatchObject({ verdict: 'REJECT', decided_by: 'timeout' });
  });

  it('refuses a clarification that widens the scope, and one when none is asked for', async () => {
    const p = proposal('forgejo_pr_create', { cited_evidence: [] });
    await submit(p);
    await expect(
      clarify(sys.client, String(p.proposal_id), { scope_claim: { files_only: ['src/'], max_lines: 80 } }),
    ).rejects.toThrow(/files_only may only narrow/);
    const st = await getStatus(sys.client, String(p.proposal_id));
    expect(st.stage).toBe('awaiting_clarification');
    expect(st.clarify_rounds).toBe(0);

    const done = proposal('memory_write');
    await submit(done);
    await expect(clarify(sys.client, String(done.proposal_id), { justification: 'more' })).rejects.toThrow(/refused/);
  });

  it('refuses a malformed clarification before sending it', async () => {
    const p = proposal('forgejo_pr_create', { cited_evidence: [] });
    await submit(p);
    await expect(clarify(sys.client, String(p.proposal_id), { mood: 'please' })).rejects.toBeInstanceOf(BadInputError);
  });
});

describe('human decisions', () => {
  it('an approver approves a human-only proposal: decided_by human:<id>', async () => {
    const p = proposal('credential_rotation', {
      target: { credential: 'forgejo-bot' },
      parameters: { reason: 'leaked' },
    });
    expect((await submit(p)).status).toBe('awaiting_human');
    const out = await decide(sys.client, String(p.proposal_id), {
      decision: 'approve',
      approver: 'ana',
      reason: 'go',
      via: 'cli',
    });
    expect(out.status).toBe('approved');
    expect(out.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'human:ana', reason: 'go' });
  });

  it('a reject from an approver rejects', async () => {
    const p = proposal('impersonation', { target: { identity: '@scott' }, parameters: { purpose: 'reply as Scott' } });
    await submit(p);
    const out = await decide(sys.client, String(p.proposal_id), { decision: 'reject', approver: 'scott', via: 'cli' });
    expect(out.status).toBe('rejected');
    expect(out.verdict?.decided_by).toBe('human:scott');
  });

  it('a decision from someone not listed is refused and changes nothing', async () => {
    const p = proposal('financial_op');
    await submit(p);
    await expect(
      decide(sys.client, String(p.proposal_id), { decision: 'approve', approver: 'mallory' }),
    ).rejects.toThrow(/mallory is not an approver/);
    const st = await getStatus(sys.client, String(p.proposal_id));
    expect(st.stage).toBe('awaiting_human');
    expect(st.decisions).toEqual([]);
  });

  it('no decision before the deadline -> REJECT decided_by timeout', async () => {
    const p = proposal('financial_op');
    const { workflow_id } = await submitProposal(sysShort.client, p, { taskQueue: sysShort.taskQueues.workflow });
    const final = await sysShort.client.workflow.getHandle<typeof proposalWorkflow>(workflow_id).result();
    expect(final.status).toBe('rejected');
    expect(final.verdict).toMatchObject({ decided_by: 'timeout' });
    expect(final.verdict?.reason).toContain('no human decision');
  });

  it('an unknown (well-formed) action type goes to a person, never passes', async () => {
    const out = await submit(proposal('launch_rockets', { target: { pad: '39A' }, parameters: { count: 1 } }));
    expect(out.status).toBe('awaiting_human');
  });
});

describe('resubmission, revision and the audit flag', () => {
  it('refuses an identical proposal under a new proposal_id; a revision runs as a new one', async () => {
    const p = proposal('exec', { parameters: { command: ['rm', '-rf', '/tmp/x'] } });
    const first = await submit(p);
    expect(first.status).toBe('rejected');
    await expect(
      submitProposal(sys.client, { ...p, proposal_id: randomUUID() }, { taskQueue: sys.taskQueues.workflow }),
    ).rejects.toBeInstanceOf(DuplicateProposalError);
    const revised = await submit({
      ...p,
      proposal_id: randomUUID(),
      revision_of: p.proposal_id,
      parameters: { command: ['ls'] },
      justification: 'Only list the workspace instead.',
    });
    expect(revised.status).toBe('executed');
    expect(revised.workflow_id).not.toBe(first.workflow_id);
  });

  it('refuses a proposal_id already used by different content', async () => {
    const p = proposal('memory_write');
    await submit(p);
    await expect(
      submitProposal(sys.client, { ...p, justification: 'something else' }, { taskQueue: sys.taskQueues.workflow }),
    ).rejects.toThrow(/already used/);
  });

  it('the third REJECT on one target within the window raises a searchable audit flag', async () => {
    const path = `../outside-${randomUUID()}.txt`;
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      outcomes.push(
        await submit(proposal('file_write', { target: { path }, justification: `attempt ${i} ${randomUUID()}` })),
      );
    }
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(outcomes[0]!.verdict?.rule).toBe('files.roots');
    const first = await getStatus(sys.client, outcomes[0]!.workflow_id);
    const third = await getStatus(sys.client, outcomes[2]!.workflow_id);
    expect(first.audit_flag).toBe(false);
    expect(third.audit_flag).toBe(true);
    // Visibility is eventually consistent: poll briefly for the flag.
    let flagged: string[] = [];
    for (let i = 0; i < 20 && !flagged.includes(outcomes[2]!.workflow_id); i++) {
      flagged = (await listProposals(sys.client, { auditFlag: true, sinceMs: 3_600_000 })).map((r) => r.workflow_id);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(flagged).toContain(outcomes[2]!.workflow_id);
  });
});

describe('execution', () => {
  it('file_write inside the workspace is written; escaping with .. is rejected', async () => {
    const ok = await submit(
      proposal('file_write', {
        target: { path: '.agent-judge/workspace/notes/a.txt' },
        parameters: { content: 'hi\n' },
      }),
    );
    expect(ok.status).toBe('executed');
    expect(readFileSync(join(sys.baseDir, '.agent-judge/workspace/notes/a.txt'), 'utf8')).toBe('hi\n');
    const bad = await submit(proposal('file_write', { target: { path: '.agent-judge/workspace/../../etc/passwd' } }));
    expect(bad.status).toBe('rejected');
    expect(bad.verdict?.rule).toBe('files.roots');
  });

  it('a failing command ends failed with the exit code', async () => {
    const out = await submit(proposal('exec', { parameters: { command: ['ls', 'no-such-file'] } }));
    expect(out.status).toBe('failed');
    expect(out.execution?.error).toMatch(/exit code/);
  });

  it('waitUntilSettled on a finished proposal returns its outcome', async () => {
    const p = proposal('memory_write');
    const { workflow_id } = await submitProposal(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    await sys.client.workflow.getHandle(workflow_id).result();
    const out = await waitUntilSettled(sys.client, workflow_id);
    expect(out.status).toBe('executed');
  });
});
