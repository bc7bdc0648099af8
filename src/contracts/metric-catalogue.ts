/**
 * The live metrics' vocabulary (issue 11): every series name, its labels and their closed value
 * sets, and the bucket edges. Workflow code, activities, the worker that initialises each series at
 * zero, the rules generator and the dashboard all read this one table, so a name is spelled once.
 * No label value ever comes from agent-controlled text: free text maps onto the closed sets here.
 */
import { EXECUTION_STATUSES } from './lifecycle';
import { TIERS, type DecidedBy, type Tier, type Verdict } from './verdict';
import { LIMIT_NAMES } from './errors';
import { MCP_DROP_REASONS } from './mcp-drop-reasons';

/** Every metric of ours starts with this (Prometheus convention: one prefix per application). */
export const METRIC_PREFIX = 'agent_judge_';

/**
 * Histogram edges in seconds: the seed's thresholds (0.1 and 0.25 s lightweight, 2 and 5 s full
 * judge) sit exactly on edges, so `histogram_quantile` and `le` ratios are exact at the targets.
 */
export const LATENCY_BUCKETS_SECONDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300] as const;

export const VERDICT_LABELS = ['APPROVE', 'REJECT', 'CLARIFY'] as const;
/** `decided_by` collapsed: `human:<id>` becomes `human` (approver ids are never labels). */
export const DECIDED_BY_LABELS = ['policy', 'rules', 'judge', 'timeout', 'human', 'grant'] as const;
export type DecidedByLabel = (typeof DECIDED_BY_LABELS)[number];
/** What a proposal's judging came to: its last judge verdict that is not CLARIFY, as routed. */
export const JUDGED_LABELS = ['APPROVE', 'REJECT', 'ESCALATE'] as const;
export type JudgedLabel = (typeof JUDGED_LABELS)[number];
/** Why a proposal went to a person. */
export const ESCALATION_REASONS = [
  /** The tier is human-only (including every unknown action type). */
  'human_only',
  /** The judge's confidence was below `thresholds.human`. */
  'low_confidence',
  /** The judge approved but asked for human review (`constraints.require_human_review`). */
  'review_required',
  /** No model reviewed it and `spec.judge.withoutModel` is `escalate`. */
  'no_model',
  /** The judge activity failed or no judge worker answered. */
  'judge_unavailable',
] as const;
export type EscalationReason = (typeof ESCALATION_REASONS)[number];
export const HUMAN_DECISIONS = ['approve', 'reject'] as const;
/** The judge's verdict before a person decided; `none` for the human-only tier (no judge saw it). */
export const EARLIER_VERDICT_LABELS = ['APPROVE', 'REJECT', 'ESCALATE', 'none'] as const;
export type EarlierVerdictLabel = (typeof EARLIER_VERDICT_LABELS)[number];
export const CLOSED_STATUSES = ['executed', 'approved', 'rejected', 'failed', 'uncertain'] as const;
/** Executors by name; anything else (a custom executor) is `other`. */
export const EXECUTOR_LABELS = ['memory', 'file', 'exec', 'webhook', 'unreachable', 'other'] as const;
export const EXECUTION_STATUS_LABELS = EXECUTION_STATUSES;
/** How a model call failed (from the judge's audit record). */
export const MODEL_ERROR_KINDS = ['timeout', 'invalid_output', 'unavailable', 'error'] as const;
export type ModelErrorKind = (typeof MODEL_ERROR_KINDS)[number];
export const REVIEW_KINDS = ['weekly', 'spot_check'] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];
export const REVIEW_MARKS = ['correct', 'wrong'] as const;
/** Stages a running proposal can wait in (the open-proposals gauge). */
export const OPEN_STAGES = ['judging', 'awaiting_clarification', 'awaiting_human', 'executing'] as const;
/** The label for an action type the policy does not list (agents choose action types freely). */
export const OTHER_ACTION_TYPE = 'other';

/** One metric's shape: kind, help text and its labels with every value each may take. */
export interface MetricDefinition {
  name: string;
  kind: 'counter' | 'histogram' | 'gauge';
  help: string;
  /** Closed label sets; the worker creates each combination at zero. Absent: filled per policy. */
  labels: Record<string, readonly string[]>;
  /**
   * Where it is counted: workflow code, an activity, the worker (visibility, runtime), or whoever refuses a request
   * (the submitting process, such as the MCP proxy, and the executor).
   */
  source: 'workflow' | 'activity:judge' | 'worker' | 'refuser';
}

const tiers = TIERS as readonly string[];

/** The catalogue. `action_type` values come from the policy's risk matrix plus `other`. */
export const METRICS = {
  verdicts: {
    name: 'agent_judge_verdicts_total',
    kind: 'counter',
    help: 'Verdicts recorded, every one (CLARIFY rounds, human and timeout verdicts included)',
    labels: { tier: tiers, verdict: VERDICT_LABELS, decided_by: DECIDED_BY_LABELS },
    source: 'workflow',
  },
  judged: {
    name: 'agent_judge_judged_proposals_total',
    kind: 'counter',
    help: 'Proposals by their last judge (rules or model) verdict that is not CLARIFY, as routed: approvalRate',
    labels: { tier: ['lightweight-approval', 'full-judge-review'], verdict: JUDGED_LABELS },
    source: 'workflow',
  },
  finalVerdicts: {
    name: 'agent_judge_final_verdicts_total',
    kind: 'counter',
    help: 'The verdict each proposal ended with (once per proposal)',
    labels: { tier: tiers, verdict: VERDICT_LABELS, decided_by: DECIDED_BY_LABELS },
    source: 'workflow',
  },
  closed: {
    name: 'agent_judge_proposals_closed_total',
    kind: 'counter',
    help: 'Proposals finished, by final status and action type (unlisted types are "other")',
    labels: { tier: tiers, status: CLOSED_STATUSES },
    source: 'workflow',
  },
  decisionLatency: {
    name: 'agent_judge_decision_latency_seconds',
    kind: 'histogram',
    help: 'Workflow start to the first final or escalating verdict (APPROVE, REJECT, ESCALATE), workflow time',
    labels: { tier: tiers },
    source: 'workflow',
  },
  clarifyRequests: {
    name: 'agent_judge_clarify_requests_total',
    kind: 'counter',
    help: 'CLARIFY rounds: times the actor was asked to clarify',
    labels: { tier: tiers },
    source: 'workflow',
  },
  escalations: {
    name: 'agent_judge_escalations_total',
    kind: 'counter',
    help: 'Proposals sent to a person, by reason',
    labels: { tier: tiers, reason: ESCALATION_REASONS },
    source: 'workflow',
  },
  humanDecisions: {
    name: 'agent_judge_human_decisions_total',
    kind: 'counter',
    help: "Human decisions accepted (one per approver), by decision and the judge's earlier verdict",
    labels: { tier: tiers, decision: HUMAN_DECISIONS, judge_verdict: EARLIER_VERDICT_LABELS },
    source: 'workflow',
  },
  grantUses: {
    name: 'agent_judge_grant_uses_total',
    kind: 'counter',
    help: 'Proposals approved by a scoped grant instead of a judge or a person (docs/grants.md)',
    labels: { tier: tiers },
    source: 'workflow',
  },
  executions: {
    name: 'agent_judge_executions_total',
    kind: 'counter',
    help: 'Executions by executor and status (once per proposal, whatever the activity retries)',
    labels: { executor: EXECUTOR_LABELS, status: EXECUTION_STATUS_LABELS },
    source: 'workflow',
  },
  reviewMarks: {
    name: 'agent_judge_review_marks_total',
    kind: 'counter',
    help: 'Marks of closed reviews, counted when the review closes: falseNegativeRate, falseApprovalRate',
    labels: { review: REVIEW_KINDS, verdict: ['APPROVE', 'REJECT'], mark: REVIEW_MARKS },
    source: 'workflow',
  },
  judgeDuration: {
    name: 'agent_judge_judge_duration_seconds',
    kind: 'histogram',
    help: 'Time the judge activity took (rules, evidence checks and the model), per attempt',
    labels: { verdict: VERDICT_LABELS },
    source: 'activity:judge',
  },
  modelErrors: {
    name: 'agent_judge_model_errors_total',
    kind: 'counter',
    help: 'Model calls that gave no usable verdict, by kind',
    labels: { kind: MODEL_ERROR_KINDS },
    source: 'activity:judge',
  },
  open: {
    name: 'agent_judge_proposals_open',
    kind: 'gauge',
    help: "Running proposals on this worker's task queue by stage (from Temporal visibility)",
    labels: { stage: OPEN_STAGES },
    source: 'worker',
  },
  oldestEscalation: {
    name: 'agent_judge_escalation_oldest_age_seconds',
    kind: 'gauge',
    help: 'Age of the oldest proposal waiting for a person (since it started; 0 when none waits)',
    labels: {},
    source: 'worker',
  },
  retention: {
    name: 'agent_judge_namespace_retention_seconds',
    kind: 'gauge',
    help: 'How long the namespace keeps closed workflows (the audit trail) before deleting them',
    labels: {},
    source: 'worker',
  },
  reviewLastClosed: {
    name: 'agent_judge_review_last_closed_timestamp_seconds',
    kind: 'gauge',
    help: 'Unix time the last review of each kind closed (set by the reviews code)',
    labels: { review: REVIEW_KINDS },
    source: 'worker',
  },
  limitRefusals: {
    name: 'agent_judge_limit_refusals_total',
    kind: 'counter',
    help: 'Requests refused by a per-agent limit (spec.limits, spec.memory), by limit',
    labels: { limit: LIMIT_NAMES },
    source: 'refuser',
  },
  mcpMessagesDropped: {
    name: 'agent_judge_mcp_messages_dropped_total',
    kind: 'counter',
    help: 'Messages from an agent the MCP proxy dropped instead of relaying them to the upstream, by reason',
    labels: { reason: MCP_DROP_REASONS },
    source: 'refuser',
  },
  mcpSessionsRefused: {
    name: 'agent_judge_mcp_sessions_refused_total',
    kind: 'counter',
    help: 'MCP HTTP sessions refused because the agent had spec.limits.httpSessionsPerAgent open',
    labels: {},
    source: 'refuser',
  },
} as const satisfies Record<string, MetricDefinition>;

/** Histograms and their bucket overrides, for the SDK's exporter (keyed by metric name). */
export const HISTOGRAM_BUCKETS: Record<string, number[]> = {
  [METRICS.decisionLatency.name]: [...LATENCY_BUCKETS_SECONDS],
  [METRICS.judgeDuration.name]: [...LATENCY_BUCKETS_SECONDS],
};

/**
 * The name a counter is created under on the SDK meter: the Prometheus exporter runs with
 * `countersTotalSuffix` (so Temporal's own counters get their `_total` too) and adds the suffix; an
 * OTLP collector's Prometheus exporter adds it likewise. Other kinds keep their name.
 */
export function meterName(def: { name: string; kind: string }): string {
  return def.kind === 'counter' ? def.name.replace(/_total$/, '') : def.name;
}

/** `human:<id>` → `human`; the approver id never becomes a label. */
export function decidedByLabel(d: DecidedBy): DecidedByLabel {
  if (d.startsWith('human:')) return 'human';
  return d.startsWith('grant:') ? 'grant' : (d as DecidedByLabel);
}

/** An action type as a label: listed in the policy's matrix, or `other` (agents pick types freely). */
export function actionTypeLabel(actionType: string, listed: readonly string[]): string {
  return listed.includes(actionType) ? actionType : OTHER_ACTION_TYPE;
}

/** An executor name as a label. */
export function executorLabel(name: string): string {
  return (EXECUTOR_LABELS as readonly string[]).includes(name) ? name : 'other';
}

/**
 * Why a verdict sent a proposal to a person (null verdict: the human-only tier). Mirrors
 * `routeVerdict`: low confidence first, then the verdict's own escalation, then review required.
 */
export function escalationReasonOf(v: Verdict | null, humanThreshold: number): EscalationReason {
  if (v === null) return 'human_only';
  if (v.rule === 'judge.unavailable') return 'judge_unavailable';
  if (v.rule?.startsWith('judge.no-model')) return 'no_model';
  if (v.confidence < humanThreshold) return 'low_confidence';
  return 'review_required';
}

/**
 * What the judge said before a person decided, for the override rate: its APPROVE or REJECT as
 * given, `ESCALATE` when it gave neither (unsure, unavailable, no model), `none` when no judge saw it.
 */
export function earlierVerdictLabel(v: Verdict | null): EarlierVerdictLabel {
  if (v === null || (v.decided_by !== 'rules' && v.decided_by !== 'judge')) return 'none';
  return v.verdict === 'CLARIFY' ? 'ESCALATE' : v.verdict;
}

/** A judge audit's error text as a closed kind (the text itself is model output: never a label). */
export function modelErrorKind(error: string): ModelErrorKind {
  if (/did not answer within|aborted after/.test(error)) return 'timeout';
  if (error.startsWith('invalid model output')) return 'invalid_output';
  if (/is not there|not found|could not be reached/.test(error)) return 'unavailable';
  return 'error';
}

/** True for tiers whose verdicts the judge (rules or model) gives. */
export function isJudgedTier(tier: Tier): boolean {
  return tier === 'lightweight-approval' || tier === 'full-judge-review';
}

/** Every combination of a metric's closed label sets (the series the worker starts at zero). */
export function labelCombinations(labels: Record<string, readonly string[]>): Record<string, string>[] {
  let out: Record<string, string>[] = [{}];
  for (const [key, values] of Object.entries(labels)) {
    out = out.flatMap((partial) => values.map((v) => ({ ...partial, [key]: v })));
  }
  return out;
}
