/**
 * Issue 11, live metrics: each tier and escalation path increments exactly the expected series,
 * once, as seen on the process's `/metrics` (the SDK's Prometheus exporter) over HTTP, with a
 * workflow worker that replays every task (`maxCachedWorkflows: 0`) and across a worker restart.
 */
import { increases, scrape, type Sample } from '../helpers/metrics';
import { silentLogger } from '../helpers/logger';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, getStatus, submitAndWait, submitProposal } from '../../src/client/proposals';
import { taskQueuesFor, type TaskQueues } from '../../src/names';
import { startWorkersInProcess, type InProcessWorkers } from '../../src/worker';
import { performApproved, proposal, testPolicy, workflowBundle } from '../helpers/system';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { createJudgeDepsFromEnv } from '../../src/judge';
import { closeReview, markReview, openReview } from '../../src/client/reviews';
import { startFakeOllama } from '../helpers/fake-ollama';
import { toolPath } from '../helpers/tools';

const spec = {
  escalation: { timeout: '1m', approvers: ['scott'], reminderAt: 0 },
  clarify: { maxRounds: 2, timeout: '1m' },
};

describe('live metrics on /metrics', () => {
  let baseDir: string;
  let policy: CompliancePolicy;
  let queues: TaskQueues;
  let sys: InProcessWorkers;
  const start = async (p: CompliancePolicy, q: TaskQueues) =>
    startWorkersInProcess(inject('temporalAddress'), {
      namespace: inject('temporalNamespace'),
      taskQueues: q,
      policy: p,
      logger: pino({ level: 'silent' }),
      baseDir,
      workflowBundle: await workflowBundle(),
      maxCachedWorkflows: 0,
    });

  beforeAll(async () => {
    baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-metrics-'));
    policy = testPolicy(baseDir, spec);
    queues = taskQueuesFor(`test-${randomUUID()}`);
    sys = await start(policy, queues);
  });
  afterAll(async () => {
    await sys?.stop();
    rmSync(baseDir, { recursive: true, force: true });
  });

  const ours = () => [queues.workflow, queues.judge];
  /** Runs `act`, then scrapes until our series show `expected` (a recorded metric lands just after the task). */
  const expectIncreases = async (act: () => Promise<unknown>, expected: Record<string, number>) => {
    const before = (await scrape()).samples;
    await act();
    let diff: Record<string, number> = {};
    for (let i = 0; i < 100; i++) {
      diff = increases(before, (await scrape()).samples, ours());
      if (JSON.stringify(sortKeys(diff)) === JSON.stringify(sortKeys(expected))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(sortKeys(diff)).toEqual(sortKeys(expected));
  };
  const finish = (workflowId: string) => sys.client.workflow.getHandle(workflowId).result();

  it('every counter series exists at zero before any event', async () => {
    const { samples } = await scrape();
    const mine = (name: string, labels: Record<string, string>) =>
      samples.find(
        (s) =>
          s.name === name &&
          ours().includes(s.labels.taskQueue ?? '') &&
          Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      );
    expect(
      mine('agent_judge_verdicts_total', { tier: 'human-only', verdict: 'REJECT', decided_by: 'timeout' }),
    ).toMatchObject({ value: 0, labels: { workflowType: 'proposalWorkflow' } });
    expect(mine('agent_judge_escalations_total', { tier: 'full-judge-review', reason: 'low_confidence' })?.value).toBe(
      0,
    );
    expect(mine('agent_judge_proposals_closed_total', { action_type: 'other', status: 'rejected' })?.value).toBe(0);
    expect(mine('agent_judge_model_errors_total', { kind: 'timeout' })).toMatchObject({
      value: 0,
      labels: { activityType: 'judge' },
    });
    // No label ever names an approver.
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes('scott')))).toBe(false);
  });

  it('no-judge: one policy APPROVE, executed by the memory executor', async () => {
    await expectIncreases(
      async () => {
        const out = await submitAndWait(sys.client, proposal('memory_write'), { taskQueue: queues.workflow });
        expect(out.status).toBe('executed');
        await finish(out.workflow_id);
      },
      {
        'agent_judge_verdicts_total{decided_by=policy,tier=no-judge,verdict=APPROVE}': 1,
        'agent_judge_final_verdicts_total{decided_by=policy,tier=no-judge,verdict=APPROVE}': 1,
        'agent_judge_executions_total{executor=memory,status=succeeded}': 1,
        'agent_judge_proposals_closed_total{action_type=memory_write,status=executed,tier=no-judge}': 1,
        'agent_judge_decision_latency_seconds_count{tier=no-judge}': 1,
      },
    );
    // The series started at zero is the one the workflow counted on: same labels, one series, value 1.
    const same = (await scrape()).samples.filter(
      (s) =>
        s.name === 'agent_judge_verdicts_total' &&
        s.labels.taskQueue === queues.workflow &&
        s.labels.tier === 'no-judge' &&
        s.labels.verdict === 'APPROVE' &&
        s.labels.decided_by === 'policy',
    );
    expect(same).toHaveLength(1);
    expect(same[0]!.value).toBe(1);
  });

  it('lightweight: a rules APPROVE and a rules REJECT, each judged once', async () => {
    await expectIncreases(
      async () => {
        const ok = await submitAndWait(sys.client, proposal('vault_note_create'), { taskQueue: queues.workflow });
        expect(ok.status).toBe('approved');
        const bad = proposal('issue_comment', { parameters: { body: 'ping @everyone now' } });
        const no = await submitAndWait(sys.client, bad, { taskQueue: queues.workflow });
        expect(no.status).toBe('rejected');
        // The caller performs the approved note itself: it redeems the token, and the run closes.
        await performApproved(sys, ok);
        await Promise.all([finish(ok.workflow_id), finish(no.workflow_id)]);
      },
      {
        'agent_judge_verdicts_total{decided_by=rules,tier=lightweight-approval,verdict=APPROVE}': 1,
        'agent_judge_verdicts_total{decided_by=rules,tier=lightweight-approval,verdict=REJECT}': 1,
        'agent_judge_judged_proposals_total{tier=lightweight-approval,verdict=APPROVE}': 1,
        'agent_judge_judged_proposals_total{tier=lightweight-approval,verdict=REJECT}': 1,
        'agent_judge_final_verdicts_total{decided_by=rules,tier=lightweight-approval,verdict=APPROVE}': 1,
        'agent_judge_final_verdicts_total{decided_by=rules,tier=lightweight-approval,verdict=REJECT}': 1,
        [closedKey('vault_note_create', 'approved', 'lightweight-approval')]: 1,
        'agent_judge_proposals_closed_total{action_type=issue_comment,status=rejected,tier=lightweight-approval}': 1,
        'agent_judge_decision_latency_seconds_count{tier=lightweight-approval}': 2,
      },
    );
  });

  it('full judge, no model: escalated (no_model), a person approves, exec runs', async () => {
    const p = proposal('exec', { parameters: { command: ['echo', 'metrics'] } });
    await expectIncreases(
      async () => {
        const out = await submitAndWait(sys.client, p, { taskQueue: queues.workflow });
        expect(out.status).toBe('awaiting_human');
        const decided = await decide(sys.client, String(p.proposal_id), {
          decision: 'approve',
          approver: 'scott',
          via: 'cli',
        });
        expect(decided.status).toBe('executed');
        await finish(out.workflow_id);
      },
      {
        'agent_judge_verdicts_total{decided_by=rules,tier=full-judge-review,verdict=CLARIFY}': 1,
        'agent_judge_verdicts_total{decided_by=human,tier=full-judge-review,verdict=APPROVE}': 1,
        'agent_judge_judged_proposals_total{tier=full-judge-review,verdict=ESCALATE}': 1,
        'agent_judge_escalations_total{reason=no_model,tier=full-judge-review}': 1,
        'agent_judge_human_decisions_total{decision=approve,judge_verdict=ESCALATE,tier=full-judge-review}': 1,
        'agent_judge_final_verdicts_total{decided_by=human,tier=full-judge-review,verdict=APPROVE}': 1,
        'agent_judge_executions_total{executor=exec,status=succeeded}': 1,
        'agent_judge_proposals_closed_total{action_type=exec,status=executed,tier=full-judge-review}': 1,
        'agent_judge_decision_latency_seconds_count{tier=full-judge-review}': 1,
        'agent_judge_judge_duration_seconds_count{verdict=CLARIFY}': 1,
      },
    );
  });

  it('full judge, no evidence: a CLARIFY request, then the clarify round ends in a REJECT by the rules', async () => {
    const p = proposal('exec', { cited_evidence: [], parameters: { command: ['echo', 'clarify'] } });
    await expectIncreases(
      async () => {
        const out = await submitAndWait(sys.client, p, { taskQueue: queues.workflow });
        expect(out.status).toBe('awaiting_clarification');
        await sys.client.workflow.getHandle(out.workflow_id).terminate('test: stop waiting');
      },
      {
        'agent_judge_verdicts_total{decided_by=rules,tier=full-judge-review,verdict=CLARIFY}': 1,
        'agent_judge_clarify_requests_total{tier=full-judge-review}': 1,
        'agent_judge_judge_duration_seconds_count{verdict=CLARIFY}': 1,
      },
    );
  });

  it('human-only (and an unlisted type): escalated, a person rejects; the approver id is no label', async () => {
    const known = proposal('financial_op');
    const unknown = proposal('teleport_money', { target: { to: 'moon' } });
    await expectIncreases(
      async () => {
        for (const p of [known, unknown]) {
          const out = await submitAndWait(sys.client, p, { taskQueue: queues.workflow });
          expect(out.status).toBe('awaiting_human');
          const decided = await decide(sys.client, String(p.proposal_id), {
            decision: 'reject',
            approver: 'scott',
            reason: 'no',
            via: 'cli',
          });
          expect(decided.status).toBe('rejected');
          await finish(out.workflow_id);
        }
      },
      {
        'agent_judge_escalations_total{reason=human_only,tier=human-only}': 2,
        'agent_judge_human_decisions_total{decision=reject,judge_verdict=none,tier=human-only}': 2,
        'agent_judge_verdicts_total{decided_by=human,tier=human-only,verdict=REJECT}': 2,
        'agent_judge_final_verdicts_total{decided_by=human,tier=human-only,verdict=REJECT}': 2,
        'agent_judge_proposals_closed_total{action_type=financial_op,status=rejected,tier=human-only}': 1,
        'agent_judge_proposals_closed_total{action_type=other,status=rejected,tier=human-only}': 1,
        'agent_judge_decision_latency_seconds_count{tier=human-only}': 2,
      },
    );
    const { text } = await scrape();
    expect(text).not.toContain('teleport_money');
  });

  it('a closed weekly review counts each latest mark once and sets the last-closed time', async () => {
    // A past week, so no other test's review of the current week shares the id; the candidate is the real REJECT.
    const week = '2025-W10';
    const bad = proposal('exec', { parameters: { command: ['rm', '-rf', '/'] } });
    const rejected = await submitAndWait(sys.client, bad, { taskQueue: queues.workflow });
    expect(rejected.status).toBe('rejected');
    const candidate = {
      workflow_id: rejected.workflow_id,
      proposal_id: String(bad.proposal_id),
      verdict: 'REJECT' as const,
      decided_by: 'rules',
      escalated: false,
      tier: 'full-judge-review',
      action_type: 'exec',
      started_at: '2025-03-05T12:00:00.000Z',
    };
    const review = await openReview(sys.client, 'weekly', week, [candidate], { taskQueue: queues.workflow });
    const before = (await scrape()).samples;
    await markReview(sys.client, review.review_id, {
      proposal: rejected.workflow_id,
      mark: 'correct',
      reviewer: 'scott',
    });
    // The reviewer changes their mind: only the latest mark counts.
    await markReview(sys.client, review.review_id, {
      proposal: rejected.workflow_id,
      mark: 'wrong',
      should_be: 'approve',
      reviewer: 'scott',
    });
    await closeReview(sys.client, review.review_id, [candidate]);
    await sys.client.workflow.getHandle(review.review_id).result();
    const key = 'agent_judge_review_marks_total{mark=wrong,review=weekly,verdict=REJECT}';
    let diff: Record<string, number> = {};
    for (let i = 0; i < 100 && diff[key] === undefined; i++) {
      diff = increases(before, (await scrape()).samples, ours());
      if (diff[key] === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    const counted = Object.fromEntries(Object.entries(diff).filter(([k]) => k.startsWith('agent_judge_review_marks')));
    expect(counted).toEqual({ [key]: 1 });
    const closedAt = (await scrape()).samples.find(
      (x) =>
        x.name === 'agent_judge_review_last_closed_timestamp_seconds' &&
        x.labels.review === 'weekly' &&
        x.labels.taskQueue === queues.workflow,
    );
    expect(closedAt?.value).toBeGreaterThan(Date.now() / 1000 - 600);
  });

  it('a worker restart: the waiting proposal is replayed by the new worker and nothing counts twice', async () => {
    const p = proposal('financial_op', { parameters: { amount: 5, currency: 'EUR' } });
    let workflowId = '';
    await expectIncreases(
      async () => {
        workflowId = (await submitProposal(sys.client, p, { taskQueue: queues.workflow })).workflow_id;
        for (
          let i = 0;
          i < 100 && (await getStatus(sys.client, String(p.proposal_id))).status !== 'awaiting_human';
          i++
        )
          await new Promise((r) => setTimeout(r, 100));
      },
      {
        'agent_judge_escalations_total{reason=human_only,tier=human-only}': 1,
        'agent_judge_decision_latency_seconds_count{tier=human-only}': 1,
      },
    );
    await sys.stop();
    sys = await start(policy, queues);
    await expectIncreases(
      async () => {
        const decided = await decide(sys.client, String(p.proposal_id), {
          decision: 'approve',
          approver: 'scott',
          via: 'cli',
        });
        expect(decided.status).toBe('approved');
        await performApproved(sys, decided);
        await finish(workflowId);
      },
      {
        'agent_judge_human_decisions_total{decision=approve,judge_verdict=none,tier=human-only}': 1,
        'agent_judge_verdicts_total{decided_by=human,tier=human-only,verdict=APPROVE}': 1,
        'agent_judge_final_verdicts_total{decided_by=human,tier=human-only,verdict=APPROVE}': 1,
        'agent_judge_proposals_closed_total{action_type=financial_op,status=approved,tier=human-only}': 1,
      },
    );
  });

  it('the visibility gauges: open proposals by stage, oldest escalation, retention', async () => {
    const gauges = (await import('../../src/metrics/gauges')).startVisibilityGauges({
      client: sys.client,
      namespace: inject('temporalNamespace'),
      taskQueue: queues.workflow,
      meter: (await import('@temporalio/worker')).Runtime.instance().metricMeter,
      logger: silentLogger,
      intervalMs: 3_600_000,
    });
    try {
      const p = proposal('financial_op', { parameters: { amount: 7, currency: 'EUR' } });
      const out = await submitAndWait(sys.client, p, { taskQueue: queues.workflow });
      expect(out.status).toBe('awaiting_human');
      let samples: Sample[] = [];
      const gauge = (name: string, labels: Record<string, string> = {}) =>
        samples.find(
          (s) =>
            s.name === name &&
            (s.labels.taskQueue === queues.workflow || name.includes('retention')) &&
            Object.entries(labels).every(([k, v]) => s.labels[k] === v),
        )?.value;
      // Visibility is eventually consistent (on the cluster, records land through history's visibility
      // queue): read until the new proposal shows and the earlier tests' closed proposals have left.
      for (let i = 0; i < 100; i++) {
        await gauges.refresh();
        samples = (await scrape()).samples;
        if (
          gauge('agent_judge_proposals_open', { stage: 'awaiting_human' }) === 1 &&
          gauge('agent_judge_proposals_open', { stage: 'judging' }) === 0
        )
          break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(gauge('agent_judge_proposals_open', { stage: 'awaiting_human' })).toBe(1);
      expect(gauge('agent_judge_proposals_open', { stage: 'judging' })).toBe(0);
      expect(gauge('agent_judge_escalation_oldest_age_seconds')).toBeGreaterThan(0);
      expect(gauge('agent_judge_namespace_retention_seconds')).toBeGreaterThan(0);
      await sys.client.workflow.getHandle(out.workflow_id).terminate('test done');
    } finally {
      gauges.stop();
    }
  });

  it('promtool check metrics: a live scrape parses; its only lint notes are on the SDK meters labels', async () => {
    const { text } = await scrape();
    const res = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // Exit 1 is a parse error; 3 is lint only. The SDK's workflow and activity meters add `taskQueue`,
    // `workflowType`, `activityType` (camelCase, SDK 1.24); every name, type and help text of ours is clean.
    expect(res.status === 0 || res.status === 3).toBe(true);
    const notes = (res.stdout + res.stderr).split('\n').filter((l) => l.trim() !== '');
    const other = notes.filter((l) => !l.endsWith("label names should be written in 'snake_case' not 'camelCase'"));
    expect(other).toEqual([]);
    // And with the SDK's labels renamed as the scrape config in docs/metrics.md does, nothing is left to note.
    const renamed = text.replace(
      /\b(taskQueue|workflowType|activityType)=/g,
      (_, l: string) => `${l.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}=`,
    );
    const clean = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: renamed, encoding: 'utf8' });
    expect(clean.stdout + clean.stderr).toBe('');
    expect(clean.status).toBe(0);
  });
});

describe('model errors, counted in the judge activity', () => {
  it('a model that talks nonsense twice: one invalid_output error, escalated for low confidence', async () => {
    const fake = await startFakeOllama({ respond: () => ({ content: 'I think it is fine.' }) });
    const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-metrics-model-'));
    const q = taskQueuesFor(`test-${randomUUID()}`);
    const p = testPolicy(baseDir, {
      ...spec,
      judge: { model: 'judge-test:latest', host: fake.host, timeoutMs: 5_000 },
    });
    const sys = await startWorkersInProcess(inject('temporalAddress'), {
      namespace: inject('temporalNamespace'),
      taskQueues: q,
      policy: p,
      logger: pino({ level: 'silent' }),
      baseDir,
      workflowBundle: await workflowBundle(),
      judge: { ...createJudgeDepsFromEnv(p, {}), baseDir },
    });
    try {
      const before = (await scrape()).samples;
      const out = await submitAndWait(sys.client, proposal('exec', { parameters: { command: ['echo', 'm'] } }), {
        taskQueue: q.workflow,
      });
      expect(out.status).toBe('awaiting_human');
      expect(out.verdict?.judge?.error).toContain('invalid model output twice');
      let diff: Record<string, number> = {};
      for (
        let i = 0;
        i < 50 && !diff['agent_judge_escalations_total{reason=low_confidence,tier=full-judge-review}'];
        i++
      ) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        diff = increases(before, (await scrape()).samples, [q.workflow, q.judge]);
      }
      expect(diff).toMatchObject({
        'agent_judge_model_errors_total{kind=invalid_output}': 1,
        'agent_judge_escalations_total{reason=low_confidence,tier=full-judge-review}': 1,
        'agent_judge_judged_proposals_total{tier=full-judge-review,verdict=ESCALATE}': 1,
      });
      expect(Object.keys(diff).filter((k) => k.startsWith('agent_judge_model_errors_total'))).toHaveLength(1);
      await sys.client.workflow.getHandle(out.workflow_id).terminate('test done');
    } finally {
      await sys.stop();
      await fake.close();
      rmSync(baseDir, { recursive: true, force: true });
    }
  });
});

function closedKey(actionType: string, status: string, tier: string): string {
  return `agent_judge_proposals_closed_total{action_type=${actionType},status=${status},tier=${tier}}`;
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
