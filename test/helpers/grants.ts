/**
 * Grants as a person makes them in a test: `agent-judge decide <id> approve --approver scott --grant-for 1h
 * --grant-uses 5`, as the CLI does it (for the chat tests, Discord and Slack, whose "Revoke grant" button appears on
 * that proposal's message), and a grant of identical calls the workflow worker's index lists before the test goes on.
 */
import type { LiveGrants } from '../../src/activities/live-grants';
import { expect } from 'vitest';
import { createGrant, grantDefinitionFor, grantSessionFor, grantStatus } from '../../src/client/grants';
import { decide, getStatus } from '../../src/client/proposals';
import type { KeyFile } from '../../src/contracts/identity';
import { signGrant } from '../../src/identity/sign-grant';
import { statusQuery } from '../../src/names';
import type { ProposalRecord } from '../../src/contracts/status';
import type { TestSystem } from './system';

/**
 * Approves the escalated proposal of `workflowId` as scott, then grants identical calls for an hour, five uses (the
 * CLI's `decide ... --grant-for 1h --grant-uses 5`); its grant id.
 */
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

/**
 * scott's grant of calls identical to proposal `proposalId`'s (ten minutes, five uses; with `thisSession`, in its
 * session only; signed with `key` when the policy lists scott's key), once the index `grants` lists it for that call:
 * a grant not indexed yet is simply not used, so a test that expects the grant to cover the next call waits for it
 * here. Its grant id.
 */
export async function grantIdenticalCalls(
  system: TestSystem,
  grants: LiveGrants,
  proposalId: string,
  options: { thisSession?: boolean; key?: KeyFile } = {},
): Promise<string> {
  const { proposal } = await getStatus(system.client, proposalId);
  const definition = grantDefinitionFor(proposal, {
    approver: 'scott',
    lifetimeMs: 600_000,
    maxUses: 5,
    scope: { kind: 'identical' },
    sessionId: grantSessionFor(proposal, { thisSession: options.thisSession ?? false }),
    originWorkflowId: proposalId,
  });
  const request = options.key ? signGrant(definition, options.key) : { definition };
  await createGrant(system.client, request, { taskQueue: system.taskQueues.workflow });
  for (let i = 0; i < 300; i++) {
    await grants.refresh();
    if (grants.candidates(proposal).includes(definition.grant_id)) return definition.grant_id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`grant ${definition.grant_id} was never indexed for ${proposalId}`);
}

/** The status of the one proposal grant `grantId` covered so far (its verdict the grant's APPROVE). */
export async function onlyUseOf(system: TestSystem, grantId: string): Promise<ProposalRecord> {
  const { uses } = await grantStatus(system.client, grantId);
  expect(uses).toHaveLength(1);
  const status = await getStatus(system.client, uses[0]!.workflow_id);
  expect(status.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: `grant:${grantId}` });
  return status;
}
