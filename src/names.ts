/**
 * Every name that crosses a process boundary: task queues, Updates, Queries and search attribute
 * keys. Worker, client, bot and tests import these objects; nobody retypes a name as a string.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Clarification, HumanDecision } from './contracts/messages';
import type { ProposalStatus } from './contracts/status';

/**
 * ApplicationFailure types that cross processes (activity -> workflow -> client). Defined in
 * contracts (the error family there names them); listed here with every other crossing name.
 */
export { FailureType, NON_RETRYABLE_FAILURE_TYPES } from './contracts/lifecycle';

/** Task queues. Separate queues keep the judge process away from executor credentials. */
export interface TaskQueues {
  workflow: string;
  judge: string;
  execute: string;
}

export const DEFAULT_TASK_QUEUES: TaskQueues = {
  workflow: 'agent-judge',
  judge: 'agent-judge-judge',
  execute: 'agent-judge-execute',
};

/** Queue names for an isolated deployment (tests use one prefix each so runs never mix). */
export function taskQueuesFor(prefix?: string): TaskQueues {
  if (!prefix) return DEFAULT_TASK_QUEUES;
  return { workflow: prefix, judge: `${prefix}-judge`, execute: `${prefix}-execute` };
}

export const PROPOSAL_WORKFLOW_TYPE = 'proposalWorkflow';
export { PROPOSAL_WORKFLOW_ID_PREFIX } from './contracts/digest';

/**
 * A proposal_id's claim: a workflow id Temporal keeps unique, started (never run) before the
 * proposal itself, so two proposals racing in under one proposal_id cannot both start. See
 * `claimProposalId` in src/client/proposals.ts.
 */
export const PROPOSAL_ID_CLAIM_WORKFLOW_TYPE = 'proposalIdClaim';
export const PROPOSAL_ID_CLAIM_PREFIX = 'proposal-id-claim-';
/** Claims are never run: no worker polls this queue, and their start delay outlasts their timeout. */
export const PROPOSAL_ID_CLAIM_TASK_QUEUE = 'agent-judge-proposal-id-claims';

/** The actor answers a CLARIFY; returns the status after the proposal was judged again. */
export const clarifyUpdate = defineUpdate<ProposalStatus, [Clarification]>('clarify');
/** An approver decides an escalated proposal; returns the status after the decision took effect. */
export const humanDecisionUpdate = defineUpdate<ProposalStatus, [HumanDecision]>('humanDecision');
/** Returns once the proposal is finished or waiting on someone (what `propose --wait` waits for). */
export const awaitSettledUpdate = defineUpdate<ProposalStatus, []>('awaitSettled');
/** Stage, every verdict, clarify rounds, deadlines and the execution result. */
export const statusQuery = defineQuery<ProposalStatus>('status');

export const SA = {
  ProposalId: defineSearchAttributeKey('ProposalId', SearchAttributeType.KEYWORD),
  AgentId: defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD),
  ActionType: defineSearchAttributeKey('ActionType', SearchAttributeType.KEYWORD),
  Tier: defineSearchAttributeKey('Tier', SearchAttributeType.KEYWORD),
  Verdict: defineSearchAttributeKey('Verdict', SearchAttributeType.KEYWORD),
  Target: defineSearchAttributeKey('Target', SearchAttributeType.KEYWORD),
  Stage: defineSearchAttributeKey('Stage', SearchAttributeType.KEYWORD),
  AuditFlag: defineSearchAttributeKey('AuditFlag', SearchAttributeType.BOOL),
} as const;

/** `--search-attribute` flags for `temporal server start-dev`, and input for the operator API. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; type: 'Keyword' | 'Bool' }> = Object.values(
  SA,
).map((key) => ({ name: key.name, type: key.type === SearchAttributeType.BOOL ? 'Bool' : 'Keyword' }));
