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
    localActivities: count('markerRecordedEventAttributes'),
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
  it('lightweight approval: ONE workflow task, the policy snapshot a local activity in it, no activity', async () => {
    const { out, shape } = await run('vault_note_create');
    expect(out.status).toBe('approved');
    expect(shape).toMatchObject({ workflowTasks: 1, activities: [], failedTasks: 0 });
    // The policy snapshot (and the patch markers), all inside the one task.
    expect(shape.localActivities).toBeGreaterThanOrEqual(1);
  });

  // Executed actions: the executor redeems the action's capability token through the workflow before it acts
  // (seed 000 §8), an Update, hence one workflow task more than before tokens existed.
  it('no-judge with execution: one executor round trip, its token redemption, three workflow tasks', async () => {
    const { out, shape } = await run('memory_write');
    expect(out.status).toBe('executed');
    expect(shape).toMatchObject({ workflowTasks: 3, activities: ['execute'], failedTasks: 0 });
  });

  it('full-judge (rules) with execution: judge, executor and redemption round trips, four workflow tasks', async () => {
    const { out, shape } = await run('exec');
    expect(out.status).toBe('executed');
    expect(shape).toMatchObject({ workflowTasks: 4, activities: ['judge', 'execute'], failedTasks: 0 });
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
