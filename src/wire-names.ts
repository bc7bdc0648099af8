/**
 * The names in src/names.ts as plain strings, with no Temporal SDK import. The SDK's `defineQuery` /
 * `defineUpdate` / `defineSearchAttributeKey` only hold a name, but importing them loads `@temporalio/workflow` and
 * `@temporalio/common`; the CLI's `status` path (src/client/status-rpc.ts) speaks gRPC with these strings alone, so
 * it starts without the SDK. src/names.ts builds its definitions from these, so each name is still written once.
 */

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
/** Defined with the content digest that follows it in every proposal's workflow id. */
export { PROPOSAL_ID_RE, PROPOSAL_WORKFLOW_ID_PREFIX, workflowIdNamedBy } from './contracts/workflow-ids';

/**
 * A proposal_id's reservation: a workflow id Temporal keeps unique, started beside the proposal's own start (and run
 * by the workflow worker a moment later, only to complete), so of two proposals racing in under one proposal_id only
 * one holds it (the other's run is withdrawn, nothing of it performed). See `reserveProposalId` and `startReserved`
 * in src/client/proposals/ (reservation.ts, submit.ts).
 */
export const PROPOSAL_ID_RESERVATION_WORKFLOW_TYPE = 'proposalIdReservation';
export const PROPOSAL_ID_RESERVATION_PREFIX = 'proposal-id-reservation-';

/** The proposal workflow's Update and Query names. */
export const PROPOSAL_MESSAGE_NAMES = {
  clarify: 'clarify',
  humanDecision: 'humanDecision',
  awaitSettled: 'awaitSettled',
  status: 'status',
  redeemCapability: 'redeemCapability',
  callerOutcome: 'callerOutcome',
  withdraw: 'withdraw',
} as const;

/** Scoped grants (docs/grants.md): one workflow per grant, `grant-<grant_id>`, on the workflow task queue. */
export const GRANT_WORKFLOW_TYPE = 'grantWorkflow';
export const GRANT_WORKFLOW_ID_PREFIX = 'grant-';
/** The memo key holding a grant's definition: the workers' index of live grants reads it from visibility. */
export const GRANT_MEMO_KEY = 'grant';
export const GRANT_MESSAGE_NAMES = { use: 'useGrant', revoke: 'revokeGrant', status: 'grantStatus' } as const;

/** The workflow id of a grant. */
export function grantWorkflowId(grantId: string): string {
  return `${GRANT_WORKFLOW_ID_PREFIX}${grantId}`;
}

/** The search attribute holding a proposal's proposal_id (what `status <proposal_id>` looks up). */
export const PROPOSAL_ID_SEARCH_ATTRIBUTE = 'ProposalId';

/**
 * The proposal workflow's search attributes by name (names.ts types them as the SDK's keys, `SA`): plain strings, so
 * the read-only gRPC path of `status` and `list` (src/client/status-rpc.ts) needs no SDK module to name them.
 */
export const PROPOSAL_SEARCH_ATTRIBUTE_NAMES = {
  ProposalId: PROPOSAL_ID_SEARCH_ATTRIBUTE,
  AgentId: 'AgentId',
  ActionType: 'ActionType',
  Tier: 'Tier',
  Verdict: 'Verdict',
  Target: 'Target',
  Stage: 'Stage',
  AuditFlag: 'AuditFlag',
} as const;

/** The workflow that copies closed proposal histories into the archive folder (started by the archive Schedule). */
export const HISTORY_ARCHIVE_WORKFLOW_TYPE = 'historyArchiveWorkflow';

/**
 * The task queue of the archive activities: only a worker with the `archive` role polls it, because the archive
 * folder is local to that worker's host (the archive workflow itself runs on the workflow queue).
 */
export function archiveTaskQueue(taskQueues: TaskQueues): string {
  return `${taskQueues.workflow}-archive`;
}

/** The id of the Temporal Schedule that archives one deployment's proposals (one per workflow task queue). */
export function archiveScheduleId(taskQueues: TaskQueues): string {
  return `${taskQueues.workflow}-history-archive`;
}

/** The workflow holding the policy in force on a workflow task queue (src/workflows/policy-in-force.ts). */
export const POLICY_IN_FORCE_WORKFLOW_TYPE = 'policyInForceWorkflow';

/** Its workflow id: one per workflow task queue, so deployments with their own prefix keep their own. */
export function policyInForceWorkflowId(workflowTaskQueue: string): string {
  return `agent-judge-policy-in-force-${workflowTaskQueue}`;
}

/** The circle registry workflow (src/workflows/circle-registry.ts): one per namespace. */
export const CIRCLE_REGISTRY_WORKFLOW_TYPE = 'circleRegistryWorkflow';
/** Its workflow id. Tests pass their own id so they never share one. */
export const CIRCLE_REGISTRY_WORKFLOW_ID = 'circle-registry';

/** The circle registry's messages (src/circles/names.ts defines them with their types). */
export const CIRCLE_MESSAGES = {
  operatorKeysChanged: 'circles.operatorKeysChanged',
  register: 'circles.register',
  spawn: 'circles.spawn',
  knock: 'circles.knock',
  retire: 'circles.retire',
  allowPair: 'circles.allowPair',
  revokePair: 'circles.revokePair',
  requestCrossCircle: 'circles.requestCrossCircle',
  decideCrossCircle: 'circles.decideCrossCircle',
  agent: 'circles.agent',
  discover: 'circles.discover',
  tree: 'circles.tree',
  events: 'circles.events',
  bridge: 'circles.bridge',
  stats: 'circles.stats',
  runInfo: 'circles.runInfo',
  dump: 'circles.dump',
} as const;
