import { z } from 'zod';
import type { CompliancePolicy } from '../contracts/policy';
import { safeParseProposal, type Proposal } from '../contracts/proposal';
import { VerdictKindSchema, type Verdict, type VerdictKind } from '../contracts/verdict';
import { BadInputError } from '../contracts/errors';
import { refusalError } from '../contracts/refusal';
import { routeVerdict, type VerdictRoute } from '../contracts/lifecycle';
import { proposalTier } from '../policy/classify';
import { judgeProposal, type JudgeDeps } from './index';

/** One line of an evaluation corpus: a proposal and the verdict a good judge gives it. */
export interface EvalCase {
  proposal: Proposal;
  expected: VerdictKind;
  tags: string[];
  /** 1-based line in the corpus file. */
  line: number;
}

const CorpusLine = z.strictObject({
  proposal: z.unknown(),
  expected: VerdictKindSchema,
  tags: z.array(z.string().max(64)).max(32).default([]),
});

/** Parses a JSONL corpus; any bad line is bad input naming the line and the field. */
export function parseCorpus(text: string, source = 'corpus'): EvalCase[] {
  const cases: EvalCase[] = [];
  const ids = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '' || raw.trimStart().startsWith('//')) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new BadInputError(`${source}:${line}: not valid JSON (${(err as Error).message})`);
    }
    const parsed = CorpusLine.safeParse(value);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((x) => `${x.path.join('.') || 'line'}: ${x.message}`);
      throw new BadInputError(`${source}:${line}: ${problems.join('; ')}`);
    }
    const proposal = safeParseProposal(parsed.data.proposal);
    if (!proposal.ok) throw refusalError(proposal.refusal, `${source}:${line}: `);
    if (ids.has(proposal.value.proposal_id)) {
      throw new BadInputError(`${source}:${line}: proposal_id ${proposal.value.proposal_id} appears twice`);
    }
    ids.add(proposal.value.proposal_id);
    cases.push({ proposal: proposal.value, expected: parsed.data.expected, tags: parsed.data.tags, line });
  });
  if (cases.length === 0) throw new BadInputError(`${source}: no cases`);
  return cases;
}

/** Where a verdict leads once the workflow's thresholds apply; HUMAN means a person decides. */
export type Outcome = VerdictKind | 'HUMAN';
export const OUTCOMES: readonly Outcome[] = ['APPROVE', 'REJECT', 'CLARIFY', 'HUMAN'];

const ROUTE_OUTCOME: Record<VerdictRoute, Outcome> = {
  escalate: 'HUMAN',
  reject: 'REJECT',
  clarify: 'CLARIFY',
  execute: 'APPROVE',
};

/**
 * The outcome the user sees: the proposal workflow's own routing rule (one function, in
 * contracts/lifecycle), named as the verdict a user would end with.
 */
export function outcomeOf(v: Verdict, policy: CompliancePolicy): Outcome {
  return ROUTE_OUTCOME[routeVerdict(v, policy.spec.thresholds)];
}

export interface CaseResult {
  id: string;
  line: number;
  tags: string[];
  expected: VerdictKind;
  outcome: Outcome;
  verdict: Verdict;
  latencyMs: number;
  /** The proposal carried the user's task (`user_task`): the cases where goal hijacking can be seen. */
  userTask: boolean;
}

export interface ClassStats {
  /** Cases expected to be this verdict. */
  support: number;
  /** Cases that ended as this verdict. */
  predicted: number;
  truePositives: number;
  /** null when nothing ended as this verdict. */
  precision: number | null;
  /** null when nothing was expected to be this verdict. */
  recall: number | null;
}

export interface EvalReport {
  cases: number;
  model: string | null;
  accuracy: number;
  /** confusion[expected][outcome] = count. */
  confusion: Record<VerdictKind, Record<Outcome, number>>;
  perVerdict: Record<VerdictKind, ClassStats>;
  /** Share of cases that should not be approved but were (the number that matters most). */
  falseApproveRate: number | null;
  falseApproves: string[];
  /** Cases where the judge model failed (timeout, unreachable, invalid output twice). */
  judgeFailures: number;
  decidedBy: Record<string, number>;
  latencyMs: { p50: number; p95: number; max: number };
  mismatches: Array<{ id: string; expected: VerdictKind; outcome: Outcome; rule?: string; reason: string }>;
  results: CaseResult[];
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx] as number;
}

const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 1000) / 1000);

/** Confusion matrix, per-verdict precision and recall, false-approve rate and latency. Pure. */
export function summarizeEval(results: readonly CaseResult[], model: string | null = null): EvalReport {
  const kinds = VerdictKindSchema.options;
  const confusion = Object.fromEntries(
    kinds.map((k) => [k, Object.fromEntries(OUTCOMES.map((o) => [o, 0]))]),
  ) as EvalReport['confusion'];
  for (const r of results) confusion[r.expected][r.outcome] += 1;
  const perVerdict = Object.fromEntries(
    kinds.map((k) => {
      const support = results.filter((r) => r.expected === k).length;
      const predicted = results.filter((r) => r.outcome === k).length;
      const tp = results.filter((r) => r.expected === k && r.outcome === k).length;
      return [
        k,
        { support, predicted, truePositives: tp, precision: ratio(tp, predicted), recall: ratio(tp, support) },
      ];
    }),
  ) as EvalReport['perVerdict'];
  const shouldNotApprove = results.filter((r) => r.expected !== 'APPROVE');
  const falseApproves = shouldNotApprove.filter((r) => r.outcome === 'APPROVE');
  const latencies = results.map((r) => r.latencyMs).sort((a, b) => a - b);
  const decidedBy: Record<string, number> = {};
  for (const r of results) decidedBy[r.verdict.decided_by] = (decidedBy[r.verdict.decided_by] ?? 0) + 1;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    cases: results.length,
    model,
    accuracy: ratio(results.filter((r) => r.expected === r.outcome).length, results.length) ?? 0,
    confusion,
    perVerdict,
    falseApproveRate: ratio(falseApproves.length, shouldNotApprove.length),
    falseApproves: falseApproves.map((r) => r.id),
    judgeFailures: results.filter((r) => r.verdict.judge?.error !== undefined).length,
    decidedBy,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      max: round(latencies.at(-1) ?? Number.NaN),
    },
    mismatches: results
      .filter((r) => r.expected !== r.outcome)
      .map((r) => ({
        id: r.id,
        expected: r.expected,
        outcome: r.outcome,
        rule: r.verdict.rule,
        reason: r.verdict.reason,
      })),
    results: [...results],
  };
}

export interface RunEvalOptions {
  policy: CompliancePolicy;
  deps: JudgeDeps;
  /** Cases judged at once (default 1: latency figures then mean one call at a time). */
  concurrency?: number;
  /** Called after each case, in completion order. */
  onResult?: (result: CaseResult, done: number) => void;
}

/** `  (a, b, c, +N more)` for a list of case ids, or nothing when it is empty. */
function listSome(ids: readonly string[], shown = 8): string {
  if (ids.length === 0) return '';
  const more = ids.length > shown ? `, +${ids.length - shown} more` : '';
  return `  (${ids.slice(0, shown).join(', ')}${more})`;
}

/** Runs every case through the full judge (rules, evidence, model) exactly as the judge worker does. */
export async function runEval(cases: readonly EvalCase[], options: RunEvalOptions): Promise<EvalReport> {
  const results = new Array<CaseResult>(cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const c = cases[i] as EvalCase;
      const started = performance.now();
      const verdict = await judgeProposal(
        {
          proposal: c.proposal,
          tier: proposalTier(options.policy, c.proposal),
          round: 0,
          policy: options.policy,
        },
        options.deps,
      );
      const result: CaseResult = {
        id: c.proposal.proposal_id,
        line: c.line,
        tags: c.tags,
        expected: c.expected,
        outcome: outcomeOf(verdict, options.policy),
        verdict,
        latencyMs: performance.now() - started,
        userTask: c.proposal.user_task !== undefined,
      };
      results[i] = result;
      done += 1;
      options.onResult?.(result, done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, cases.length)) }, worker));
  return summarizeEval(results, options.deps.model?.model ?? null);
}

/** At most `shown` mismatch lines (a benchmark can have a hundred); `--json` has them all. */
function mismatchLines(mismatches: EvalReport['mismatches'], shown = 25): string[] {
  const lines = mismatches
    .slice(0, shown)
    .map((m) => `  ${m.id}: expected ${m.expected}, got ${m.outcome}${m.rule ? ` [${m.rule}]` : ''}`);
  if (mismatches.length > shown) lines.push(`  ... and ${mismatches.length - shown} more (--json lists them all)`);
  return lines;
}

const pct = (v: number | null) => (v === null ? '   -' : `${(v * 100).toFixed(1)}%`.padStart(6));

/** The report as text for people: confusion matrix, per-verdict figures, headline numbers. */
export function formatEvalReport(r: EvalReport): string {
  const kinds = VerdictKindSchema.options;
  const w = 9;
  const lines = [
    `judge evaluation: ${r.cases} cases, model ${r.model ?? '(none: rules only)'}`,
    '',
    `confusion matrix (rows: expected, columns: outcome)`,
    `${''.padEnd(w)}${OUTCOMES.map((o) => o.padStart(w)).join('')}`,
    ...kinds.map((k) => `${k.padEnd(w)}${OUTCOMES.map((o) => String(r.confusion[k][o]).padStart(w)).join('')}`),
    '',
    `${'verdict'.padEnd(w)}${'support'.padStart(w)}${'precision'.padStart(11)}${'recall'.padStart(9)}`,
    ...kinds.map((k) => {
      const s = r.perVerdict[k];
      const cells = [String(s.support).padStart(w), pct(s.precision).padStart(11), pct(s.recall).padStart(9)];
      return `${k.padEnd(w)}${cells.join('')}`;
    }),
    '',
    `accuracy            ${pct(r.accuracy)}`,
    `false-approve rate  ${pct(r.falseApproveRate)}${listSome(r.falseApproves)}`,
    `judge failures      ${r.judgeFailures}`,
    `decided by          ${Object.entries(r.decidedBy)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `latency             p50 ${r.latencyMs.p50} ms, p95 ${r.latencyMs.p95} ms, max ${r.latencyMs.max} ms`,
  ];
  if (r.mismatches.length > 0) lines.push('', 'mismatches:', ...mismatchLines(r.mismatches));
  return `${lines.join('\n')}\n`;
}

/**
 * The rules-only baseline and the model on the same corpus, with the cases only a model can decide
 * (the rules found nothing to object to) reported apart: that subset is what the model adds.
 */
export interface EvalComparison {
  rules: EvalReport;
  model: EvalReport;
  /** Cases the rules passed (rule `judge.no-model.approve` in the baseline): only a model can judge them. */
  modelOnly: { ids: string[]; rules: EvalReport; model: EvalReport };
  /** Cases that carried the user's task: where a hijacked agent's action can be told from the task it was given. */
  userTask: { ids: string[]; rules: EvalReport; model: EvalReport };
}

/** Pairs two runs over the same cases. Pure. */
export function compareEval(rules: EvalReport, model: EvalReport): EvalComparison {
  const subset = (ids: string[]) => {
    const only = new Set(ids);
    return {
      ids,
      rules: summarizeEval(
        rules.results.filter((r) => only.has(r.id)),
        rules.model,
      ),
      model: summarizeEval(
        model.results.filter((r) => only.has(r.id)),
        model.model,
      ),
    };
  };
  return {
    rules,
    model,
    modelOnly: subset(rules.results.filter((r) => r.verdict.rule === 'judge.no-model.approve').map((r) => r.id)),
    userTask: subset(rules.results.filter((r) => r.userTask).map((r) => r.id)),
  };
}

function sideBySide(title: string, a: EvalReport, b: EvalReport): string[] {
  const kinds = VerdictKindSchema.options;
  const w = 9;
  const matrix = (r: EvalReport, k: VerdictKind) => OUTCOMES.map((o) => String(r.confusion[k][o]).padStart(w)).join('');
  const gap = '   |';
  const header = OUTCOMES.map((o) => o.padStart(w)).join('');
  const prHeader = `${'precision'.padStart(11)}${'recall'.padStart(9)}`;
  return [
    `${title}: ${a.cases} cases`,
    `${''.padEnd(w)}${'rules only'.padStart(w * 4)}${gap}${'with the model'.padStart(w * 4)}`,
    `${'expected'.padEnd(w)}${header}${gap}${header}`,
    ...kinds.map((k) => `${k.padEnd(w)}${matrix(a, k)}${gap}${matrix(b, k)}`),
    '',
    `${'verdict'.padEnd(w)}${prHeader}${gap}${prHeader}`,
    ...kinds.map((k) => {
      const x = a.perVerdict[k];
      const y = b.perVerdict[k];
      const pr = (s: typeof x) => `${pct(s.precision).padStart(11)}${pct(s.recall).padStart(9)}`;
      return `${k.padEnd(w)}${pr(x)}${gap}${pr(y)}`;
    }),
    `${'accuracy'.padEnd(w)}${pct(a.accuracy).padStart(20)}${gap}${pct(b.accuracy).padStart(20)}`,
    `${'false-approve rate'.padEnd(20)}${pct(a.falseApproveRate).padStart(w)}${gap}` +
      `${pct(b.falseApproveRate).padStart(20)}`,
  ];
}

/** The comparison as text: whole corpus, then the model-only cases, then the model run's details. */
export function formatEvalComparison(c: EvalComparison): string {
  const lines = [
    'judge evaluation: rules only (as if spec.judge.withoutModel: approve) ' +
      `and model ${c.model.model ?? '(none)'}, side by side`,
    '',
    ...sideBySide('whole corpus', c.rules, c.model),
    '',
    ...(c.modelOnly.ids.length > 0
      ? sideBySide('cases only a model can judge (the rules found nothing)', c.modelOnly.rules, c.modelOnly.model)
      : ['cases only a model can judge: none (the rules decided every case)']),
    ...(c.userTask.ids.length === 0
      ? []
      : c.userTask.ids.length === c.rules.cases
        ? ['', "every case carries the user's task: the tables above are the goal-hijacking figures"]
        : [
            '',
            ...sideBySide(
              "cases with the user's task in view (goal hijacking shows here)",
              c.userTask.rules,
              c.userTask.model,
            ),
          ]),
    '',
    `judge failures (model run)  ${c.model.judgeFailures}`,
    `decided by (model run)      ${Object.entries(c.model.decidedBy)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `latency (model run)         p50 ${c.model.latencyMs.p50} ms, p95 ${c.model.latencyMs.p95} ms, ` +
      `max ${c.model.latencyMs.max} ms`,
  ];
  if (c.model.mismatches.length > 0) lines.push('', 'mismatches (model run):', ...mismatchLines(c.model.mismatches));
  return `${lines.join('\n')}\n`;
}
