/**
 * A replay from start to end: read the recorded proposals, re-decide each under the candidate (src/replay/decide.ts),
 * and compare (src/replay/compare.ts). With a candidate model, a first pass with a probe finds which proposals reach
 * the model at all; the caller is told how many and what they are estimated to cost, and the model is called only
 * when the caller agrees, and only for those.
 */
import type { ModelClient } from '../judge/model';
import type { CompliancePolicy } from '../contracts/policy';
import { decideAgain, decisionSummary, type Candidate, type CandidateDecision, type ReplayModel } from './decide';
import type { RecordedProposal } from './history';
import { ModelProbe, RecordedModel, recordedAnswers } from './recorded-model';
import {
  changedRows,
  recordedSide,
  sideMetrics,
  spanDays,
  transitionMatrix,
  type ReplayMetrics,
  type ReplayRow,
  type TransitionMatrix,
} from './compare';

type Thresholds = CompliancePolicy['spec']['thresholds'];

/** What calling the candidate model would take, shown before any call. */
export interface ModelPlan {
  model: string;
  /** Proposals whose replay reaches the model (each one conversation per judgement round). */
  proposals: number;
  /** Estimated tokens: the recorded conversations' mean, times the proposals (null when nothing was recorded). */
  estimated_tokens: number | null;
  /** Estimated cost in the unit of `pricePerMillionTokens` (null without a price). */
  estimated_cost: number | null;
}

export interface ReplayOptions {
  candidate: Candidate;
  /** The thresholds the recorded proposals were routed with (the policy in force when they were decided). */
  recordedThresholds: Thresholds;
  /** Recorded outcomes to keep (APPROVE, REJECT, person, CLARIFY); all when empty. */
  outcomes?: readonly string[];
  /** The candidate judge model; without one, recorded answers are reused where the prompt is unchanged. */
  model?: { client: ModelClient; timeoutMs?: number; pricePerMillionTokens?: number };
  /** Asked once before the candidate model is called; false leaves those proposals at "needs-model". */
  confirm?: (plan: ModelPlan) => Promise<boolean>;
  /** The window the selection spans (for escalations per day); the rows' own span when absent. */
  windowMs?: number;
}

export interface ReplayResult {
  replayed: number;
  from_archive: number;
  /** Runs whose recorded proposal could not be read back (not replayed). */
  unreadable: Array<{ workflow_id: string; error: string }>;
  days: number;
  rows: ReplayRow[];
  matrix: TransitionMatrix;
  changed: ReplayRow[];
  metrics: { recorded: ReplayMetrics; candidate: ReplayMetrics };
  model: { plan: ModelPlan | null; confirmed: boolean; called: number; reused: number; needs_model: number };
}

/** A model client that counts the conversations it carries. */
class CountingModel implements ModelClient {
  calls = 0;
  constructor(private readonly inner: ModelClient) {}
  get model() {
    return this.inner.model;
  }
  get schemaInPrompt() {
    return this.inner.schemaInPrompt;
  }
  chat(...args: Parameters<ModelClient['chat']>) {
    this.calls += 1;
    return this.inner.chat(...args);
  }
}

/**
 * Without a candidate model the recorded judge decides again: when it had a model (some recorded verdict carries a
 * model's audit), its recorded answers are reused where the prompt is unchanged; when it had none, the judge runs
 * without one again (the candidate policy's `spec.judge.withoutModel`).
 */
const recordedReplayModel = (p: RecordedProposal, hadModel: boolean): ReplayModel => {
  if (!hadModel) return { client: undefined, missed: () => false, counts: () => ({ called: 0, reused: 0 }) };
  const client = new RecordedModel(recordedAnswers(p.record.verdicts));
  return { client, missed: () => client.missed, counts: () => ({ called: 0, reused: client.reused }) };
};

const decide = (p: RecordedProposal, candidate: Candidate, model: ReplayModel) =>
  decideAgain(p.proposal!, p.clarifications, p.record.verdicts, candidate, model, p.record.started_at);

/** One replayed proposal: the recorded side read from its record, the candidate's from its decision. */
export function rowOf(p: RecordedProposal, d: CandidateDecision, thresholds: Thresholds): ReplayRow {
  const r = p.record;
  return {
    proposal_id: r.proposal_id,
    workflow_id: r.workflow_id,
    agent_id: r.agent_id,
    action_type: r.action_type,
    started_at: r.started_at,
    source: r.source,
    recorded: recordedSide(r, thresholds),
    candidate: { ...decisionSummary(d), clarify_rounds: d.clarify_rounds, model: d.model },
    recordedRecord: r,
    candidateVerdicts: d.verdicts,
  };
}

/** The mean recorded tokens of one model conversation, or null when no verdict recorded any. */
function meanTokens(recorded: readonly RecordedProposal[]): number | null {
  const sizes = recorded.flatMap((p) =>
    p.record.verdicts.flatMap((v) =>
      v.judge && v.judge.prompt_tokens !== null ? [v.judge.prompt_tokens + (v.judge.completion_tokens ?? 0)] : [],
    ),
  );
  return sizes.length === 0 ? null : sizes.reduce((a, b) => a + b, 0) / sizes.length;
}

/** Replays `source` under the candidate; nothing is started, signalled, notified or executed. */
export async function replay(source: AsyncIterable<RecordedProposal>, options: ReplayOptions): Promise<ReplayResult> {
  const { candidate, recordedThresholds: thresholds } = options;
  const keep = options.outcomes && options.outcomes.length > 0 ? options.outcomes : null;
  const recorded: RecordedProposal[] = [];
  const unreadable: ReplayResult['unreadable'] = [];
  for await (const p of source) {
    if (keep && !keep.includes(recordedSide(p.record, thresholds).outcome)) continue;
    if (p.proposal) recorded.push(p);
    else unreadable.push({ workflow_id: p.record.workflow_id, error: p.unreadable ?? 'no proposal in the history' });
  }

  const hadModel = recorded.some((p) => p.record.verdicts.some((v) => v.judge !== undefined));
  const decisions: CandidateDecision[] = [];
  const needModel: number[] = [];
  for (const [i, p] of recorded.entries()) {
    if (options.model) {
      // First pass: a probe in the model's place finds the proposals whose replay reaches the model.
      const probe = new ModelProbe(options.model.client.model);
      const d = await decide(p, candidate, {
        client: probe,
        missed: () => probe.asked,
        counts: () => ({ called: 0, reused: 0 }),
      });
      if (probe.asked) needModel.push(i);
      decisions.push(d);
    } else decisions.push(await decide(p, candidate, recordedReplayModel(p, hadModel)));
  }

  let plan: ModelPlan | null = null;
  let confirmed = false;
  let called = 0;
  if (options.model && needModel.length > 0) {
    const mean = meanTokens(recorded);
    const tokens = mean === null ? null : Math.round(mean * needModel.length);
    const price = options.model.pricePerMillionTokens;
    plan = {
      model: options.model.client.model,
      proposals: needModel.length,
      estimated_tokens: tokens,
      estimated_cost: tokens === null || price === undefined ? null : (tokens / 1e6) * price,
    };
    confirmed = options.confirm ? await options.confirm(plan) : false;
    if (confirmed) {
      for (const i of needModel) {
        const client = new CountingModel(options.model.client);
        decisions[i] = await decide(recorded[i]!, candidate, {
          client,
          missed: () => false,
          counts: () => ({ called: client.calls, reused: 0 }),
          timeoutMs: options.model.timeoutMs,
        });
        called += client.calls;
      }
    }
  }

  const rows = recorded.map((p, i) => rowOf(p, decisions[i]!, thresholds));
  const days = spanDays(rows, options.windowMs);
  return {
    replayed: rows.length,
    from_archive: rows.filter((r) => r.source === 'archive').length,
    unreadable,
    days,
    rows,
    matrix: transitionMatrix(rows),
    changed: changedRows(rows),
    metrics: {
      recorded: sideMetrics(rows, 'recorded', thresholds, days),
      candidate: sideMetrics(rows, 'candidate', candidate.policy.spec.thresholds, days),
    },
    model: {
      plan,
      confirmed,
      called,
      reused: rows.reduce((n, r) => n + r.candidate.model.reused, 0),
      needs_model: rows.filter((r) => r.candidate.outcome === 'needs-model').length,
    },
  };
}
