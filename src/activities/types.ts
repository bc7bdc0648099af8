/**
 * Activity signatures, imported by workflow code as types only. Three groups, one per task queue:
 * the judge worker registers only judge activities, so it can never reach an executor.
 */
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { ExecutionResult } from '../contracts/status';
import type { RuleFinding, Verdict } from '../contracts/verdict';
import type {
  AnnouncementRef,
  EscalationNotice,
  GrantNotice,
  ReminderNotice,
  ResolutionNotice,
  UncertainExecutionNotice,
} from '../contracts/escalation';
import type { JudgeInput } from '../judge';
import type { CapabilityRequest, IssuedCapability } from '../contracts/capability';
import type { TaskQueues } from '../names';
import type { GrantUse, GrantUsed } from '../contracts/grant';

export interface PolicySnapshot {
  policy: CompliancePolicy;
  taskQueues: TaskQueues;
  /**
   * Action types the executor worker performs. Others end `approved` without a round trip to the
   * executor queue (the caller performs them).
   */
  executable: string[];
  /** SHA-256 of the policy's canonical JSON (what a capability token binds), computed once per worker. */
  policy_sha256: string;
  /**
   * The capability token of a proposal the policy alone sends to execution (`executesOnPolicyAlone`), signed in this
   * same local activity so the run needs no second one. Absent for every other proposal (and for a snapshot taken
   * without a run): the workflow then asks `issueCapability` when it executes.
   */
  capability?: IssuedCapability;
  /**
   * Live grants the workers' index says may cover this proposal (grant ids, at most a few), for a proposal the policy
   * alone does not approve and whose tier the policy lets grants cover. Only candidates: each grant's own workflow
   * decides a use (`useGrant`). Absent when there are none.
   */
  grant_candidates?: string[];
}

/** What a grant run needs at start: the policy in force and whether its id ran before. */
export interface GrantPolicySnapshot {
  policy: CompliancePolicy;
  /** Closed runs under the grant's workflow id: a grant id starts once. */
  earlierRuns: number;
}

/** A proposal run asks a grant to approve it. */
export interface UseGrantInput {
  grant_id: string;
  use: GrantUse;
}

/** The run a policy snapshot is taken for: its workflow id and its validated proposal. */
export interface PolicySnapshotRun {
  workflow_id: string;
  proposal: Proposal;
}

export interface RejectionInput {
  workflow_id: string;
  target: string;
}

export interface ExecuteInput {
  workflow_id: string;
  proposal: Proposal;
  verdict: Verdict;
  shadow: boolean;
  policy: CompliancePolicy;
  /**
   * The capability token for exactly this action (seed 000 §8). The workflow recorded it as redeemed by this executor
   * when it scheduled this activity (in the workflow task that issued it, so nobody redeemed it first and nobody can
   * after): the executor verifies the token and that Temporal says the token's own proposal run scheduled the
   * activity, and acts; it sends no redeeming Update.
   */
  capability: string;
}

/**
 * What an execute attempt last told Temporal in its heartbeat, read by the next attempt (on any
 * host): where it ran (host and ledger), whether the action had started (and its pid), and the
 * result once finished.
 */
export interface ExecutionProgress {
  phase: 'not_started' | 'started' | 'finished';
  host: string;
  pid?: number;
  result?: ExecutionResult;
}

/** On the workflow task queue, in the workflow worker process. */
export interface WorkflowActivities {
  /**
   * The policy in force and the queue names, recorded in history so replay sees the same; with `run` (a proposal's
   * run; a review passes none), also the capability token when the policy alone approves the proposal.
   */
  policySnapshot(run?: PolicySnapshotRun): Promise<PolicySnapshot>;
  announceEscalation(notice: EscalationNotice): Promise<AnnouncementRef[]>;
  announceReminder(notice: ReminderNotice): Promise<void>;
  announceResolution(notice: ResolutionNotice): Promise<void>;
  /** An approved action may or may not have run (its executor died mid-action): people must check. */
  announceUncertainExecution(notice: UncertainExecutionNotice): Promise<void>;
  /** A grant made while deciding an escalated proposal is live: show it on that proposal's message. Never throws. */
  announceGrant(notice: GrantNotice): Promise<void>;
  /** Counts recent rejections on the target; true when this one raises the audit flag. */
  recordRejection(input: RejectionInput): Promise<{ recent: number; flag: boolean }>;
  /**
   * Signs the capability token of one approved action with the workflow worker's key (a local
   * activity: the token lands in history as its result; the key never leaves the worker).
   */
  issueCapability(request: CapabilityRequest): Promise<IssuedCapability>;
  /** A grant run's start: the policy in force, and how many runs its id had before (see GrantPolicySnapshot). */
  grantPolicySnapshot(run: { workflow_id: string }): Promise<GrantPolicySnapshot>;
  /**
   * Asks one grant to approve a proposal (its `useGrant` Update): the grant's answer, or null when the grant refused
   * (expired, used up, revoked, not covering) or could not be reached. Never throws for a refusal.
   */
  useGrant(input: UseGrantInput): Promise<GrantUsed | null>;
}

/** On the judge task queue. */
export interface JudgeActivities {
  judge(input: JudgeInput): Promise<Verdict>;
  /**
   * The deterministic rules alone (hard rules, then deny patterns) on an action a person edited before approving it
   * (docs/edits.md): the finding that refuses it, or null when it passes. No model, no evidence lookups.
   */
  checkRules(input: CheckRulesInput): Promise<RuleFinding | null>;
}

/** An edited action to check by the rules, under the run's policy. */
export interface CheckRulesInput {
  proposal: Proposal;
  policy: CompliancePolicy;
}

/** On the executor task queue. */
export interface ExecutorActivities {
  execute(input: ExecuteInput): Promise<ExecutionResult>;
}

export type Activities = WorkflowActivities & JudgeActivities & ExecutorActivities;
