/**
 * `agent-judge decide <id> approve --approver scott --grant-for 1h --grant-uses 5`, as the CLI does it: the escalated
 * proposal is approved, then a grant for identical calls is made from it. For the chat tests (Discord, Slack) whose
 * "Revoke grant" button appears on that proposal's message.
 */
import { createGrant, grantDefinitionFor } from '../../src/client/grants';
import { decide } from '../../src/client/proposals';
import { statusQuery } from '../../src/names';
import type { TestSystem } from './system';

/** Approves the proposal of `workflowId` as scott and grants identical calls for an hour, five uses; its grant id. */
export async function approveAndGrant(system: TestSystem, workflowId: string): Promise<string> {
  await decide(system.client, workflowId, { decision: 'approve', approver: 'scott', via: 'cli' });
  const record = await system.client.workflow.getHandle(workflowId).query(statusQuery);
  const definition = grantDefinitionFor(record.proposal, {
    approver: 'scott',
    lifetimeMs: 3_600_000,
    maxUses: 5,
    scope: { kind: 'identical' },
    originWorkflowId: workflowId,
  });
  await createGrant(system.client, { definition }, { taskQueue: system.taskQueues.workflow });
  return definition.grant_id;
}
