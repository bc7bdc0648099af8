/**
 * Activity signatures, imported by workflow code as types only. Three groups, one per task queue:
 * the judge worker registers only judge activities, so it can never reach an executor.
 */
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { ExecutionResult } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import type {
  AnnouncementRef,
  EscalationNotice,
  ReminderNotice,
  ResolutionNotice,
  UncertainExecutionNotice,
} from '../contracts/escalation';
import type { JudgeInput } from '../judge';
import type { TaskQueues } from '../names';

export interface PolicySnapshot {
  policy: CompliancePolicy;
  taskQueues: TaskQueues;
  /**
   * Action types the executor worker performs. Others end `approved` without a round trip to the
   * executor queue (the caller performs them).
   */
  executable: string[];
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
  /** The policy in force and the queue names, recorded in history so replay sees the same. */
  policySnapshot(): Promise<PolicySnapshot>;
  announceEscalation(notice: EscalationNotice): Promise<AnnouncementRef[]>;
  announceReminder(notice: ReminderNotice): Promise<void>;
  announceResolution(notice: ResolutionNotice): Promise<void>;
  /** An approved action may or may not have run (its executor died mid-action): people must check. */
  announceUncertainExecution(notice: UncertainExecutionNotice): Promise<void>;
  /** Counts recent rejections on the target; true when this one raises the audit flag. */
  recordRejection(input: RejectionInput): Promise<{ recent: number; flag: boolean }>;
}

/** On the judge task queue. */
export interface JudgeActivities {
  judge(input: JudgeInput): Promise<Verdict>;
}

/** On the executor task queue. */
export interface ExecutorActivities {
  execute(input: ExecuteInput): Promise<ExecutionResult>;
}

export type Activities = WorkflowActivities & JudgeActivities & ExecutorActivities;
