/**
 * Every name that crosses a process boundary: task queues, Updates, Queries and search attribute
 * keys. Worker, client, bot and tests import these objects; nobody retypes a name as a string.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Clarification, HumanDecision } from './contracts/messages';
import type { ProposalRecord } from './contracts/status';
import type { ReviewCandidate, ReviewMark, ReviewStatus } from './contracts/review';
import type { CapabilityRedemption, RedeemCapabilityInput, SettleLease } from './contracts/capability';
import type { CallerOutcome } from './contracts/caller-outcome';
import type { PolicyPublication, PolicyPublished } from './contracts/policy-in-force';
import type { GrantRevocation, GrantStatus, GrantUse, GrantUsed } from './contracts/grant';

/** The `withdraw` Update's argument: why the run's chosen proposal_id cannot be its own. */
export interface WithdrawInput {
  reason: string;
}
import { GRANT_MESSAGE_NAMES, PROPOSAL_SEARCH_ATTRIBUTE_NAMES, PROPOSAL_MESSAGE_NAMES as M } from './wire-names';

/**
 * ApplicationFailure types that cross processes (activity -> workflow -> client). Defined in
 * contracts (the error family there names them); listed here with every other crossing name.
 */
export { FailureType, NON_RETRYABLE_FAILURE_TYPES } from './contracts/lifecycle';

export {
  GRANT_MEMO_KEY,
  GRANT_WORKFLOW_ID_PREFIX,
  GRANT_WORKFLOW_TYPE,
  grantWorkflowId,
  POLICY_IN_FORCE_WORKFLOW_TYPE,
  policyInForceWorkflowId,
  archiveScheduleId,
  archiveTaskQueue,
  DEFAULT_TASK_QUEUES,
  HISTORY_ARCHIVE_WORKFLOW_TYPE,
  PROPOSAL_ID_RESERVATION_PREFIX,
  PROPOSAL_ID_RESERVATION_WORKFLOW_TYPE,
  PROPOSAL_WORKFLOW_ID_PREFIX,
  PROPOSAL_WORKFLOW_TYPE,
  taskQueuesFor,
  type TaskQueues,
} from './wire-names';

/** The actor answers a CLARIFY; returns the status after the proposal was judged again. */
export const clarifyUpdate = defineUpdate<ProposalRecord, [Clarification]>(M.clarify);
/** An approver decides an escalated proposal; returns the status after the decision took effect. */
export const humanDecisionUpdate = defineUpdate<ProposalRecord, [HumanDecision]>(M.humanDecision);
/**
 * Returns once the proposal is finished or waiting on someone (what `propose --wait` waits for). The MCP proxy passes
 * a {@link SettleLease}: an approval then comes back already redeemed and leased for its one forwarding.
 */
export const awaitSettledUpdate = defineUpdate<ProposalRecord, [settleLease?: SettleLease]>(M.awaitSettled);
/**
 * A performer redeems an approved action's capability token, once (seed 000 §8). The Update id is the
 * token id, so a retried redemption gets the same answer; the validator refuses a second, an expired
 * or a mismatched one without changing anything.
 */
export const redeemCapabilityUpdate = defineUpdate<CapabilityRedemption, [RedeemCapabilityInput]>(M.redeemCapability);
/**
 * The performer of a caller-performed proposal (the MCP proxy) leases the approved call (`forwarding`, once) and
 * reports its outcome; returns the status after it was recorded.
 */
export const callerOutcomeUpdate = defineUpdate<ProposalRecord, [CallerOutcome]>(M.callerOutcome);
/**
 * The submitting client found the run's chosen proposal_id held by other content (its reservation ran beside the
 * start): the run ends refused with this reason, whatever it was doing, and fails (so the same content may be
 * submitted again under another proposal_id). Refused for a proposal_id that names its content.
 */
export const withdrawUpdate = defineUpdate<void, [WithdrawInput]>(M.withdraw);
/** Stage, every verdict, clarify rounds, deadlines and the execution result. */
export const statusQuery = defineQuery<ProposalRecord>(M.status);

/** The review workflow (one per period, see contracts/review.ts) and its memo key. */
export { REVIEW_WORKFLOW_TYPE } from './contracts/workflow-ids';
export const REVIEW_MEMO_KEY = 'review';
/** A reviewer marks one proposal of a review; returns the review after the mark. */
export const reviewMarkUpdate = defineUpdate<ReviewStatus, [ReviewMark]>('reviewMark');
/** A weekly review takes in what `audit export` shows now (new REJECTs and escalations of its week). */
export const reviewRefreshUpdate = defineUpdate<ReviewStatus, [ReviewCandidate[]]>('reviewRefresh');
/** Closes a review (a weekly review refreshed one last time first); returns the closed review with its rates. */
export const reviewCloseUpdate = defineUpdate<ReviewStatus, [ReviewCandidate[] | null]>('reviewClose');
/** The review: seed, candidates, sample, marks, figures. */
export const reviewStatusQuery = defineQuery<ReviewStatus>('reviewStatus');

/** A workflow worker publishes the policy it judges with (src/workflows/policy-in-force.ts). */
/** A proposal run uses a grant (its activity sends this); answers with the grant's count after the use. */
export const useGrantUpdate = defineUpdate<GrantUsed, [GrantUse]>(GRANT_MESSAGE_NAMES.use);
/** Revokes a live grant; answers with its status. */
export const revokeGrantUpdate = defineUpdate<GrantStatus, [GrantRevocation]>(GRANT_MESSAGE_NAMES.revoke);
export const grantStatusQuery = defineQuery<GrantStatus>(GRANT_MESSAGE_NAMES.status);

export const publishPolicyUpdate = defineUpdate<PolicyPublished, [PolicyPublication]>('publishPolicy');
/** The memo key of the policy-in-force workflow: the record (`PolicyInForce`), readable without a worker. */
export const POLICY_MEMO_KEY = 'policy';

const N = PROPOSAL_SEARCH_ATTRIBUTE_NAMES;
export const SA = {
  ProposalId: defineSearchAttributeKey(N.ProposalId, SearchAttributeType.KEYWORD),
  AgentId: defineSearchAttributeKey(N.AgentId, SearchAttributeType.KEYWORD),
  ActionType: defineSearchAttributeKey(N.ActionType, SearchAttributeType.KEYWORD),
  Tier: defineSearchAttributeKey(N.Tier, SearchAttributeType.KEYWORD),
  Verdict: defineSearchAttributeKey(N.Verdict, SearchAttributeType.KEYWORD),
  Target: defineSearchAttributeKey(N.Target, SearchAttributeType.KEYWORD),
  Stage: defineSearchAttributeKey(N.Stage, SearchAttributeType.KEYWORD),
  AuditFlag: defineSearchAttributeKey(N.AuditFlag, SearchAttributeType.BOOL),
} as const;

/** `--search-attribute` flags for `temporal server start-dev`, and input for the operator API. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; type: 'Keyword' | 'Bool' }> = Object.values(
  SA,
).map((key) => ({ name: key.name, type: key.type === SearchAttributeType.BOOL ? 'Bool' : 'Keyword' }));
