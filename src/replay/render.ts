/**
 * A replay as a person reads it on a terminal, and as JSON (`--json`): what was replayed, the transition matrix, the
 * metrics under both, the changed proposals with the rule or the judge's reason on both sides (approvals of what a
 * person rejected first), and what the model did. Recorded text (reasons, agent ids) is untrusted: control
 * characters are shown escaped so nothing in a proposal can move the terminal's cursor.
 */
import { formatValue } from '../audit/report';
import { cutDisplayText } from '../contracts/untrusted-text';
import { OUTCOMES } from './decide';
import { approvesWhatAPersonRejected, REPLAY_METRICS, type ReplayMetric, type ReplayRow } from './compare';
import type { ReplayResult } from './run';

/** Who the replay compared: the candidate policy's file and the candidate model, for headings. */
export interface ReplayLabels {
  candidate: string;
  recorded: string;
  window: string;
}

export const METRIC_TEXT: Record<ReplayMetric, { label: string; unit: 'ratio' | 'per-day' }> = {
  approvalRate: { label: 'Judge approval rate', unit: 'ratio' },
  escalationsPerDay: { label: 'Escalations to a person per day', unit: 'per-day' },
  clarifyCyclesPerApproval: { label: 'Clarify cycles per approval', unit: 'ratio' },
  overrideRate: { label: "Override rate vs people's decisions", unit: 'ratio' },
};

/** One metric value as the report prints it. */
export function metricText(name: ReplayMetric, v: number | null): string {
  return formatValue(METRIC_TEXT[name].unit, v, name === 'clarifyCyclesPerApproval' ? name : undefined);
}

/** The change between two values: points for rates, plain difference otherwise. */
export function shiftText(name: ReplayMetric, from: number | null, to: number | null): string {
  if (from === null || to === null) return '–';
  const d = to - from;
  const sign = d > 0 ? '+' : d < 0 ? '−' : '±';
  if (METRIC_TEXT[name].unit === 'ratio' && name !== 'clarifyCyclesPerApproval')
    return `${sign}${Math.abs(d * 100).toFixed(1)} pts`;
  return `${sign}${Math.abs(d).toFixed(2)}`;
}

/** Untrusted text on one line, every invisible or control character named (`⟨U+001B⟩`), clipped. */
export function clean(s: string | null | undefined, max = 240): string {
  return cutDisplayText(s ?? '–', max);
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

function sideText(r: ReplayRow, side: 'recorded' | 'candidate'): string {
  const s = r[side];
  const how =
    side === 'candidate' && r.candidate.gate ? `gate: ${r.candidate.gate}` : `${s.decided_by}, ${s.tier ?? '–'}`;
  return `${s.outcome} (${how}${s.rule ? `, rule ${s.rule}` : ''}): ${clean(s.reason)}`;
}

/** The changed proposal as a few lines. */
function changedText(r: ReplayRow): string[] {
  const flag = approvesWhatAPersonRejected(r) ? '! approves what a person rejected: ' : '';
  const person = r.recorded.person ? `; a person ${r.recorded.person === 'approve' ? 'approved' : 'rejected'} it` : '';
  return [
    `  ${flag}${clean(r.proposal_id, 80)}  ${clean(r.action_type, 40)}  ${clean(r.agent_id, 60)}  ${r.started_at}`,
    `      recorded:  ${sideText(r, 'recorded')}${person}`,
    `      candidate: ${sideText(r, 'candidate')}`,
  ];
}

/** The replay for a terminal. */
export function renderText(result: ReplayResult, labels: ReplayLabels, limit = 50): string {
  const out: string[] = [];
  const archive = result.from_archive > 0 ? ` (${result.from_archive} from the archive)` : '';
  out.push(
    `Replayed ${result.replayed} recorded proposal${result.replayed === 1 ? '' : 's'}${archive}, ${labels.window}`,
    `  recorded:  ${labels.recorded}`,
    `  candidate: ${labels.candidate}`,
    'Nothing was executed, escalated, notified or signalled; no workflow was started and no grant was used.',
    '',
    'Recorded (rows) -> candidate (columns):',
  );
  const w = 12;
  out.push(`  ${pad('', w)}${OUTCOMES.map((o) => lpad(o, w)).join('')}`);
  for (const from of OUTCOMES) {
    const row = OUTCOMES.map((to) => result.matrix[from][to]);
    if (row.every((n) => n === 0)) continue;
    out.push(`  ${pad(from, w)}${row.map((n) => lpad(String(n), w)).join('')}`);
  }
  out.push('', `Metrics (seed 000 §6) over ${result.days.toFixed(result.days < 2 ? 2 : 1)} days:`);
  out.push(`  ${pad('', 38)}${lpad('recorded', 12)}${lpad('candidate', 12)}${lpad('shift', 12)}`);
  for (const name of REPLAY_METRICS) {
    const a = result.metrics.recorded[name];
    const b = result.metrics.candidate[name];
    out.push(
      `  ${pad(METRIC_TEXT[name].label, 38)}${lpad(metricText(name, a.value), 12)}` +
        `${lpad(metricText(name, b.value), 12)}${lpad(shiftText(name, a.value, b.value), 12)}`,
    );
  }
  const m = result.model;
  out.push('', 'Model:');
  if (m.plan) {
    const cost = m.plan.estimated_cost === null ? '' : `, estimated cost ${m.plan.estimated_cost.toFixed(4)}`;
    const tokens = m.plan.estimated_tokens === null ? 'unknown tokens' : `~${m.plan.estimated_tokens} tokens`;
    out.push(
      `  ${m.plan.proposals} proposal(s) needed the candidate model ${clean(m.plan.model)} (${tokens}${cost}); ` +
        (m.confirmed ? `${m.called} conversation(s) made.` : 'not called (not confirmed).'),
    );
  }
  out.push(`  ${m.reused} recorded model answer(s) reused for unchanged prompts.`);
  if (m.needs_model > 0)
    out.push(`  ${m.needs_model} proposal(s) need a model (their prompt changed): re-run with --model to decide them.`);
  if (result.unreadable.length > 0) {
    out.push('', `Not replayed (${result.unreadable.length}):`);
    for (const u of result.unreadable.slice(0, 10)) out.push(`  ${clean(u.workflow_id, 80)}: ${clean(u.error)}`);
  }
  out.push('', `Changed (${result.changed.length}):`);
  if (result.changed.length === 0) out.push('  (none: the candidate decides every replayed proposal as recorded)');
  for (const r of result.changed.slice(0, limit)) out.push(...changedText(r));
  if (result.changed.length > limit) out.push(`  … ${result.changed.length - limit} more (--json or --html lists all)`);
  return `${out.join('\n')}\n`;
}

/** The replay as plain JSON: each row without the records it was computed from. */
export function toJson(result: ReplayResult, labels: ReplayLabels): unknown {
  const row = ({ recordedRecord: _r, candidateVerdicts: _v, ...rest }: ReplayRow) => rest;
  return {
    ...labels,
    replayed: result.replayed,
    from_archive: result.from_archive,
    days: result.days,
    matrix: result.matrix,
    metrics: result.metrics,
    model: result.model,
    unreadable: result.unreadable,
    changed: result.changed.map(row),
    proposals: result.rows.map(row),
  };
}
