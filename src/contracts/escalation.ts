/** What escalation channels are told: plain JSON that crosses the workflow/activity boundary. */
import type { Proposal } from './proposal';
import type { DecisionRecord, ExecutionResult, OutcomeStatus } from './status';
import type { Dispute, Tier, Verdict } from './verdict';

/** Everything a person needs to decide an escalated proposal. Plain JSON (it is an activity input). */
export interface EscalationNotice {
  workflow_id: string;
  proposal: Proposal;
  tier: Tier;
  /** The verdict that caused the escalation (null for the human-only tier). */
  verdict: Verdict | null;
  dispute: Dispute;
  deadline: string;
  approvers: string[];
  approvals_needed: number;
}

/**
 * Where a notice was delivered (e.g. a Discord channel and message id), kept in workflow state so
 * a later activity can edit it: the notifier itself keeps no state a restart could lose.
 */
export interface AnnouncementRef {
  notifier: string;
  [key: string]: unknown;
}

export interface ResolutionNotice {
  workflow_id: string;
  proposal_id: string;
  status: OutcomeStatus;
  verdict: Verdict | null;
  decisions: DecisionRecord[];
  refs: AnnouncementRef[];
}

export interface ReminderNotice {
  notice: EscalationNotice;
  refs: AnnouncementRef[];
  approvals: DecisionRecord[];
}

/**
 * An approved action whose outcome nobody knows: an executor died while performing it, and it is
 * not idempotent, so it was not run again. It counts as an escalation: a person checks the target.
 */
export interface UncertainExecutionNotice {
  workflow_id: string;
  proposal: Proposal;
  execution: ExecutionResult;
  /** One line: what to check. */
  explanation: string;
  /** Who is told (the policy's approvers). */
  approvers: string[];
}

/**
 * A grant made while deciding an escalated proposal (its `origin_workflow_id`), now live: the channels that showed that
 * proposal add the grant, with a way to revoke it, to its message. Plain JSON (it is an activity input).
 */
export interface GrantNotice {
  grant_id: string;
  /** The proposal workflow whose escalation message gets the grant. */
  origin_workflow_id: string;
  approver: string;
  agent_id: string;
  action_type: string;
  /** `identical` or `pattern`: what the grant covers, in words. */
  covers: string;
  max_uses: number;
  expires_at: string;
  /** The policy's approvers: where DMs went. */
  approvers: string[];
  /** Set once the grant has ended: the message then says how, and loses its button. */
  ended?: GrantEnding;
}

/** How a grant ended, for the message that showed it. */
export interface GrantEnding {
  state: 'expired' | 'used_up' | 'revoked';
  uses: number;
  /** When revoked: who, and when. */
  by?: string;
  at?: string;
}
