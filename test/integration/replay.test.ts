/**
 * Issue 41 against the real dev server: proposals decided under one policy (people deciding the escalated ones), then
 * replayed under a stricter and a looser candidate with the expected transitions, under a scripted candidate model
 * (a loopback Ollama API: called only for the proposal that reaches the model, and only once confirmed), and through
 * the CLI (`agent-judge replay --json --html --check`). Nothing a replay does starts a workflow: the count of proposal
 * runs is the same before and after.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, listProposals, submitAndWait } from '../../src/client/proposals';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { createOllamaModel } from '../../src/judge/model';
import { PROPOSAL_WORKFLOW_TYPE } from '../../src/names';
import { recordedProposals } from '../../src/replay/history';
import { replay, type ModelPlan, type ReplayOptions } from '../../src/replay/run';
import { answerJson, startFakeOllama } from '../helpers/fake-ollama';
import { performApproved, proposal, startSystem, testPolicy, type TestSystem } from '../helpers/system';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const run = promisify(execFile);

let sys: TestSystem;
/** Proposal ids by what they are. */
const id: Record<'memory' | 'friday' | 'note' | 'cat' | 'echo' | 'pay', string> = {} as never;

beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { timeout: '1m', approvers: ['scott'], reminderAt: 0 } } });
  const submit = async (name: keyof typeof id, p: Record<string, unknown>) => {
    id[name] = String(p.proposal_id);
    await performApproved(sys, await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow }));
  };
  await submit('memory', proposal('memory_write'));
  await submit('friday', proposal('issue_comment', { parameters: { body: 'ship it on friday' } }));
  await submit('note', proposal('vault_note_create', { target: { vault: 'main', path: 'archive/old.md' } }));
  await submit('cat', proposal('exec', { parameters: { command: ['cat', 'README.md'] } }));
  await submit('echo', proposal('exec', { parameters: { command: ['echo', 'hello'] } }));
  await submit('pay', proposal('financial_op'));
  // People decide the two escalated proposals: scott refuses the echo, approves the payment.
  await decide(sys.client, id.echo, { decision: 'reject', approver: 'scott', reason: 'not now' });
  await performApproved(sys, await decide(sys.client, id.pay, { decision: 'approve', approver: 'scott' }));
  for (let i = 0; i < 80; i++) {
    const closed = (await listProposals(sys.client, { sinceMs: 3_600_000 })).filter(
      (r) => Object.values(id).includes(r.proposal_id) && r.closed_at !== null,
    );
    if (closed.length === Object.keys(id).length) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the recorded proposals did not all close');
});
afterAll(async () => sys?.stop());

const selection = () => ({ sinceMs: 3_600_000, ids: Object.values(id) });

async function replayUnder(policy: CompliancePolicy, extra: Partial<ReplayOptions> = {}) {
  const result = await replay(recordedProposals(sys.client, selection()), {
    candidate: { policy, baseDir: sys.baseDir },
    recordedThresholds: sys.policy.spec.thresholds,
    ...extra,
  });
  const by = (pid: string) => result.rows.find((r) => r.proposal_id === pid)!;
  return { result, by };
}

const transitions = (r: Awaited<ReturnType<typeof replayUnder>>) =>
  Object.fromEntries(
    Object.entries(id).map(([name, pid]) => [name, `${r.by(pid).recorded.outcome} -> ${r.by(pid).candidate.outcome}`]),
  );

/** This file's proposal runs (its own task queue: other files start proposals on the same server meanwhile). */
async function proposalRuns(): Promise<number> {
  const { count } = await sys.client.workflow.count(
    `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND TaskQueue = '${sys.taskQueues.workflow}'`,
  );
  return count;
}

describe('replay under candidate policies', () => {
  it('replays the recorded policy itself with no change', async () => {
    const r = await replayUnder(sys.policy);
    expect(r.result.replayed).toBe(6);
    expect(r.result.changed).toEqual([]);
    expect(transitions(r)).toEqual({
      memory: 'APPROVE -> APPROVE',
      friday: 'APPROVE -> APPROVE',
      note: 'REJECT -> REJECT',
      cat: 'REJECT -> REJECT',
      echo: 'person -> person',
      pay: 'person -> person',
    });
    expect(r.by(id.echo).recorded.person).toBe('reject');
  });

  it('a stricter policy refuses the friday comment and the echo, naming its rules', async () => {
    const base = sys.policy.spec;
    const stricter = testPolicy(sys.baseDir, {
      escalation: sys.policy.spec.escalation,
      lightweight: { ...base.lightweight, deny: [...base.lightweight.deny, { name: 'no.friday', pattern: 'friday' }] },
      exec: { ...base.exec, allowlist: base.exec.allowlist.filter((e) => e.command !== 'echo') },
    });
    const before = await proposalRuns();
    const r = await replayUnder(stricter);
    expect(transitions(r)).toMatchObject({
      friday: 'APPROVE -> REJECT',
      echo: 'person -> REJECT',
      pay: 'person -> person',
    });
    expect(r.by(id.friday).candidate).toMatchObject({ rule: 'no.friday' });
    expect(r.by(id.echo).candidate).toMatchObject({ rule: 'exec.allowlist' });
    expect(r.result.matrix.APPROVE.REJECT).toBe(1);
    expect(r.result.metrics.candidate.approvalRate.value).toBeLessThan(r.result.metrics.recorded.approvalRate.value!);
    // Agrees with scott (he refused the echo): no override.
    expect(r.result.metrics.candidate.overrideRate).toMatchObject({ numerator: 0, denominator: 2 });
    expect(await proposalRuns()).toBe(before);
  });

  it('a looser policy approves the cat and the echo, and shows the echo scott refused first', async () => {
    const base = sys.policy.spec;
    const looser = testPolicy(sys.baseDir, {
      escalation: sys.policy.spec.escalation,
      exec: { ...base.exec, allowlist: [...base.exec.allowlist, { command: 'cat' }] },
      judge: { withoutModel: 'approve' },
    });
    const r = await replayUnder(looser);
    expect(transitions(r)).toMatchObject({
      cat: 'REJECT -> APPROVE',
      echo: 'person -> APPROVE',
      note: 'REJECT -> REJECT',
    });
    expect(r.result.changed.map((c) => c.proposal_id)).toEqual([id.echo, id.cat]);
    expect(r.by(id.echo).recorded).toMatchObject({ rule: 'judge.no-model.escalate', person: 'reject' });
    expect(r.by(id.echo).candidate).toMatchObject({ rule: 'judge.no-model.approve' });
    expect(r.result.metrics.candidate.overrideRate).toMatchObject({ numerator: 1, denominator: 2 });
    expect(r.result.metrics.candidate.escalationsPerDay.numerator).toBe(1);
    expect(r.result.metrics.recorded.escalationsPerDay.numerator).toBe(2);
  });
});

describe('replay with a scripted candidate model', () => {
  it('calls the model only for the proposal that reaches it, after saying how many', async () => {
    const fake = await startFakeOllama({ script: [{ content: answerJson('APPROVE', 0.95, 'a harmless greeting') }] });
    try {
      const plans: ModelPlan[] = [];
      const r = await replayUnder(sys.policy, {
        model: { client: createOllamaModel({ model: 'candidate-judge', host: fake.host }), pricePerMillionTokens: 2 },
        confirm: (plan) => {
          plans.push(plan);
          return Promise.resolve(true);
        },
      });
      expect(plans).toEqual([expect.objectContaining({ model: 'candidate-judge', proposals: 1 })]);
      fake.assertDone();
      expect(fake.calls).toHaveLength(1);
      expect(fake.calls[0]!.messages.at(-1)!.content).toContain(id.echo);
      expect(transitions(r)).toMatchObject({ echo: 'person -> APPROVE', cat: 'REJECT -> REJECT' });
      expect(r.by(id.echo).candidate).toMatchObject({ decided_by: 'judge', model: { called: 1 } });
      expect(r.result.model).toMatchObject({ confirmed: true, called: 1 });
    } finally {
      await fake.close();
    }
  });

  it('calls nothing when the caller declines, and counts the proposal as needing a model', async () => {
    const fake = await startFakeOllama({ script: [] });
    try {
      const r = await replayUnder(sys.policy, {
        model: { client: createOllamaModel({ model: 'candidate-judge', host: fake.host }) },
        confirm: () => Promise.resolve(false),
      });
      fake.assertDone();
      expect(fake.calls).toHaveLength(0);
      expect(r.by(id.echo).candidate.outcome).toBe('needs-model');
      expect(r.result.model).toMatchObject({ confirmed: false, called: 0, needs_model: 1 });
    } finally {
      await fake.close();
    }
  });
});

describe('agent-judge replay', () => {
  it('prints JSON, writes HTML, and exits 3 with --check when it approves what a person rejected', async () => {
    const file = join(sys.baseDir, 'looser.yaml');
    writeFileSync(
      file,
      'spec:\n  judge: { withoutModel: approve }\n  exec:\n    allowlist:\n' +
        '      - { command: echo, pathArgs: false }\n      - { command: cat }\n',
    );
    const html = join(sys.baseDir, 'replay.html');
    const args = ['replay', '--policy', file, '--since', '1h', '--base-dir', sys.baseDir, '--json', '--html', html];
    const ids = Object.values(id).flatMap((i) => ['--id', i]);
    const env = {
      ...process.env,
      AGENT_JUDGE_POLICY: undefined,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    };
    const out = await run(process.execPath, [BIN, ...args, ...ids, '--check'], { env }).then(
      () => ({ code: 0, stdout: '' }),
      (err: { code: number; stdout: string }) => err,
    );
    expect(out.code).toBe(3);
    const json = JSON.parse(out.stdout) as {
      replayed: number;
      matrix: Record<string, Record<string, number>>;
      changed: Array<{ proposal_id: string; candidate: { outcome: string } }>;
    };
    expect(json.replayed).toBe(6);
    expect(json.matrix.person!.APPROVE).toBe(1);
    expect(json.changed[0]).toMatchObject({ proposal_id: id.echo, candidate: { outcome: 'APPROVE' } });
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('approves 1 proposal(s) a person rejected');
    expect(page).toContain('Metric shifts');
  });
});
