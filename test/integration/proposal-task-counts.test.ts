/**
 * Fewest workflow tasks and round trips per tier, read from real histories (issue 12). Every workflow task and every
 * activity on another task queue is a dispatch by the server and a round trip to a worker: a regression here costs
 * latency on every proposal, so the counts are pinned. Behaviour, not timing.
 */
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitAndWait } from '../../src/client/proposals';
import { SA } from '../../src/names';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({ spec: { judge: { withoutModel: 'approve' } } });
});
afterAll(async () => sys?.stop());

/** What a run's history holds: workflow tasks, activities (with their types), local activities, search attributes. */
async function shapeOf(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const count = (attr: string) => events.filter((e) => (e as Record<string, unknown>)[attr] != null).length;
  return {
    workflowTasks: count('workflowTaskScheduledEventAttributes'),
    activities: events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name): name is string => typeof name === 'string'),
    // Local activities only (patch markers are markers too).
    localActivities: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
    // What the markers recorded (local activity results), decoded: where a capability token would show.
    recorded: events
      .flatMap((e) => e.markerRecordedEventAttributes?.details?.result?.payloads ?? [])
      .map((payload) => new TextDecoder().decode(payload.data ?? new Uint8Array()))
      .join('\n'),
    // Ours only: each patched() also upserts the SDK's own TemporalChangeVersion.
    searchAttributeUpserts: events.filter((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).some(
        (key) => key !== 'TemporalChangeVersion',
      ),
    ).length,
    failedTasks: count('workflowTaskFailedEventAttributes') + count('workflowTaskTimedOutEventAttributes'),
  };
}

async function run(actionType: string, overrides: Record<string, unknown> = {}) {
  const out = await submitAndWait(sys.client, proposal(actionType, overrides), { taskQueue: sys.taskQueues.workflow });
  return { out, shape: await shapeOf(sys.client, out.workflow_id) };
}

describe('workflow tasks and round trips per tier', () => {
  // The policy snapshot signs the token of a proposal the policy alone approves: one local activity in all.
  it('lightweight approval: ONE workflow task, ONE local activity, no activity', async () => {
    const { out, shape } = await run('vault_note_create');
    expect(out.status).toBe('approved');
    expect(out.capability?.token).toMatch(/^v4\.public\./);
    expect(shape).toMatchObject({ workflowTasks: 1, activities: [], localActivities: 1, failedTasks: 0 });
    // Signed in the snapshot's local activity: its recorded result holds the token.
    expect(shape.recorded).toContain(out.capability?.token);
  });

  it('lightweight refusal: one local activity, and no capability token recorded anywhere', async () => {
    const { out, shape } = await run('issue_comment', { parameters: { body: 'key AKIAABCDEFGHIJKLMNOP' } });
    expect(out.status).toBe('rejected');
    expect(shape).toMatchObject({ localActivities: 1, failedTasks: 0 });
    // Tokens are PASETO v4.public strings; the snapshot's result is there, without one.
    expect(shape.recorded).toContain('policy_sha256');
    expect(shape.recorded).not.toContain('v4.public.');
  });

  // Executed actions: the workflow records its executor's redemption of the action's capability token as it
  // schedules the execute activity (seed 000 §8), so the executor sends no Update and no workflow task answers one.
  it('no-judge with execution: one executor round trip, two workflow tasks, no redeeming Update', async () => {
    const { out, shape } = await run('memory_write');
    expect(out.status).toBe('executed');
    expect(shape).toMatchObject({ workflowTasks: 2, activities: ['execute'], localActivities: 1, failedTasks: 0 });
  });

  it('full-judge (rules) with execution: judge and executor round trips, three workflow tasks', async () => {
    const { out, shape } = await run('exec');
    expect(out.status).toBe('executed');
    // A judged proposal's token is signed after the verdict: its own local activity.
    expect(shape).toMatchObject({
      workflowTasks: 3,
      activities: ['judge', 'execute'],
      localActivities: 2,
      failedTasks: 0,
    });
  });
});

describe('search attribute writes', () => {
  it('lightweight approval: tier, final stage and verdict in one upsert', async () => {
    const { out, shape } = await run('vault_note_create');
    // Changes are written right before the run first blocks (here: waiting for the token's redemption), so the
    // local activity that signs the token does not split them.
    expect(shape.searchAttributeUpserts).toBe(1);
    const described = await sys.client.workflow.getHandle(out.workflow_id).describe();
    const sa = described.typedSearchAttributes;
    expect(sa.get(SA.Tier)).toBe('lightweight-approval');
    expect(sa.get(SA.Stage)).toBe('approved');
    expect(sa.get(SA.Verdict)).toBe('APPROVE');
  });

  it('no-judge with execution: one upsert per workflow task at most, final stage executed', async () => {
    const { out, shape } = await run('memory_write');
    expect(shape.searchAttributeUpserts).toBeLessThanOrEqual(shape.workflowTasks);
    const sa = (await sys.client.workflow.getHandle(out.workflow_id).describe()).typedSearchAttributes;
    expect(sa.get(SA.Stage)).toBe('executed');
    expect(sa.get(SA.Verdict)).toBe('APPROVE');
  });
});
