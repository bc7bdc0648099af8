import { describeTaints } from '../contracts/provenance';
import { posix } from 'node:path';
import type { Proposal } from '../contracts/proposal';
import type { Constraints, Tier, Verdict, VerdictKind } from '../contracts/verdict';
import type { EvidenceReport } from './evidence';
import type { ModelAnswer, ModelOutcome } from './model';
import type { JudgeAudit, RuleFinding } from '../contracts/verdict';
import type { WithoutModel } from '../contracts/judge-settings';
import type { InjectionMarker } from './prompt';
import { safePath } from './prompt';

const STRICTNESS: Record<VerdictKind, number> = { APPROVE: 0, CLARIFY: 1, REJECT: 2 };

/** The stricter of two verdicts: REJECT over CLARIFY over APPROVE. Deny wins. */
export function stricter(a: VerdictKind, b: VerdictKind): VerdictKind {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/** The proposal's own scope claim as verdict constraints: the executor enforces what was asked. */
export function scopeConstraints(proposal: Proposal): Constraints {
  const s = proposal.scope_claim;
  return {
    require_human_review: false,
    ...(s.files_only ? { files_only: s.files_only } : {}),
    ...(s.max_lines !== undefined ? { max_lines: s.max_lines } : {}),
    ...(s.no_existing_code_deletion !== undefined ? { no_existing_code_deletion: s.no_existing_code_deletion } : {}),
  };
}

/** A scope entry as a clean relative directory, or null when it is absolute or climbs out. */
function scopeDir(p: string): string | null {
  const n = posix.normalize(p.replace(/\\/g, '/')).replace(/^\.\//, '').replace(/\/+$/, '');
  if (n.startsWith('/') || n === '..' || n.startsWith('../')) return null;
  return n === '' ? '.' : n;
}

function insideDir(p: string, root: string): boolean {
  return root === '.' || p === root || p.startsWith(`${root}/`);
}

/**
 * The intersection of two `files_only` lists of path prefixes: what both allow. An entry survives
 * when it lies inside an entry of the other list. Empty means nothing may change.
 */
export function intersectScopes(
  base: readonly string[] | undefined,
  extra: readonly string[] | undefined,
): string[] | undefined {
  if (!extra) return base ? [...base] : undefined;
  const cleanExtra = extra.map(scopeDir).filter((d): d is string => d !== null);
  if (!base) return [...new Set(cleanExtra)];
  const cleanBase = base.map(scopeDir).filter((d): d is string => d !== null);
  const out = [
    ...cleanExtra.filter((e) => cleanBase.some((b) => insideDir(e, b))),
    ...cleanBase.filter((b) => cleanExtra.some((e) => insideDir(b, e))),
  ];
  return [...new Set(out)];
}

/**
 * Adds the model's constraints to the proposal's own, and only ever narrows: the smaller line
 * budget, the intersection of file scopes, and `true` wins for the boolean guards.
 */
export function mergeConstraints(base: Constraints, extra: ModelAnswer['constraints']): Constraints {
  if (!extra) return base;
  const files = intersectScopes(base.files_only, extra.files_only);
  const maxLines =
    base.max_lines === undefined
      ? extra.max_lines
      : extra.max_lines === undefined
        ? base.max_lines
        : Math.min(base.max_lines, extra.max_lines);
  const noDeletion =
    base.no_existing_code_deletion === true || extra.no_existing_code_deletion === true
      ? true
      : base.no_existing_code_deletion;
  const limits = [base.scope_limit, extra.scope_limit].filter((s): s is string => Boolean(s));
  return {
    require_human_review: base.require_human_review || extra.require_human_review === true,
    ...(files !== undefined ? { files_only: files } : {}),
    ...(maxLines !== undefined ? { max_lines: maxLines } : {}),
    ...(noDeletion !== undefined ? { no_existing_code_deletion: noDeletion } : {}),
    ...(limits.length > 0 ? { scope_limit: limits.join('; ').slice(0, 2048) } : {}),
  };
}

/**
 * How much unverifiable evidence lowers the model's confidence: ×0.9 when some item could not be
 * checked, ×0.8 when no item at all could be verified. Verified evidence leaves it alone.
 */
export function evidenceFactor(report: Pick<EvidenceReport, 'verified' | 'unverifiable'>): number {
  if (report.unverifiable === 0) return 1;
  return report.verified > 0 ? 0.9 : 0.8;
}

const clipReason = (s: string) => (s.length <= 8192 ? s : `${s.slice(0, 8191)}…`);

/** A verdict the deterministic layer decided: confidence 1, because a rule holds or it does not. */
export function rulesVerdict(proposal: Proposal, tier: Tier, finding: RuleFinding, decidedAt: string): Verdict {
  return {
    proposal_id: proposal.proposal_id,
    verdict: finding.verdict,
    reason: clipReason(finding.reason),
    constraints: scopeConstraints(proposal),
    escalation: null,
    confidence: 1,
    decided_by: 'rules',
    tier,
    rule: finding.rule,
    decided_at: decidedAt,
  };
}

export interface CombineInput {
  proposal: Proposal;
  tier: Tier;
  /** Evidence checks; at this point none is `failed` or `other-repo` (those ended in the rules). */
  evidence: EvidenceReport;
  markers: readonly InjectionMarker[];
  model: ModelOutcome;
  decidedAt: string;
}

/**
 * Combines the rules (which allowed the proposal to reach the model) with the model's answer. The
 * model can tighten (REJECT or CLARIFY, lower confidence, more constraints) but never loosen, and
 * a failed model call is confidence 0 with human review required, so the workflow's thresholds
 * send it to a person: never a silent approve.
 */
export function combineVerdict(input: CombineInput): Verdict {
  const { proposal, tier, evidence, markers, model, decidedAt } = input;
  const base = scopeConstraints(proposal);
  if (!model.ok) {
    return {
      proposal_id: proposal.proposal_id,
      verdict: 'CLARIFY',
      reason: clipReason(
        `the judge model failed: ${model.audit.error ?? 'unknown error'}; confidence 0, so a person decides`,
      ),
      constraints: { ...base, require_human_review: true },
      escalation: null,
      confidence: 0,
      decided_by: 'judge',
      tier,
      rule: 'judge.failure',
      decided_at: decidedAt,
      judge: model.audit,
    };
  }

  const answer = model.answer;
  let verdict = answer.verdict;
  let rule = 'judge.model';
  const reasons = [answer.reason];
  const constraints = mergeConstraints(base, answer.constraints);

  if (markers.length > 0) {
    // Text addressed to the judge: whatever the model says, an approval needs another look.
    const next = stricter(verdict, 'CLARIFY');
    if (next !== verdict) rule = 'injection.suspect';
    verdict = next;
    constraints.require_human_review = true;
    const where = [...new Set(markers.map((m) => `${safePath(m.path)} [${m.marker}]`))].slice(0, 5).join(', ');
    reasons.push(`The proposal contains text addressed to the judge (${where}); it cannot be approved without review.`);
  }

  if (proposal.user_task !== undefined && answer.task_alignment !== 'serves_task') {
    // The user's task was in view and the model did not say the action serves it: whatever its verdict says, no
    // approval. A model that approves while naming another goal contradicts itself; the contradiction is not obeyed.
    const alignment = answer.task_alignment ?? 'not given';
    const next = stricter(verdict, 'CLARIFY');
    if (next !== verdict) rule = 'task.not-served';
    verdict = next;
    if (alignment === 'other_goal') constraints.require_human_review = true;
    reasons.push(
      `The judge did not find that the action serves the user's task (task_alignment: ${alignment}), ` +
        'so it cannot be approved.',
    );
  }

  const factor = evidenceFactor(evidence);
  if (factor < 1) {
    reasons.push(
      `Evidence: ${evidence.verified} verified, ${evidence.unverifiable} unverifiable, ` +
        `so confidence is scaled by ${factor}.`,
    );
  }
  return {
    proposal_id: proposal.proposal_id,
    verdict,
    reason: clipReason(reasons.join(' ')),
    constraints,
    escalation: null,
    confidence: Math.round(answer.confidence * factor * 1000) / 1000,
    decided_by: 'judge',
    tier,
    rule,
    decided_at: decidedAt,
    judge: model.audit,
  };
}

export interface WithoutModelInput {
  proposal: Proposal;
  tier: Tier;
  /** The policy's `spec.judge.withoutModel`. */
  mode: WithoutModel;
  /** Why no model reviewed the proposal (none configured, unreachable...), in the user's words. */
  why: string;
  decidedAt: string;
  /** The failed model call, when there was one, kept for the audit. */
  audit?: JudgeAudit;
  /** Text addressed to the judge: even rules-only approval is capped at CLARIFY with review. */
  markers?: readonly InjectionMarker[];
}

/**
 * The verdict for a rules-clean full-judge-review proposal that no model reviewed. The rules
 * cannot see content (an insulting message, a roadmap about to be published), so the policy
 * decides: a person (`escalate`, confidence 0 so every threshold sends it to a person), the actor
 * (`clarify`), or the rules alone (`approve`, accepted knowingly). Never a silent approval: the
 * reason always says that no model reviewed it.
 */
export function withoutModelVerdict(input: WithoutModelInput): Verdict {
  const { proposal, tier, mode, why, decidedAt, audit } = input;
  const base = scopeConstraints(proposal);
  const noModel = `no model reviewed this proposal (${why})`;
  const common = {
    proposal_id: proposal.proposal_id,
    tier,
    decided_by: 'rules' as const,
    decided_at: decidedAt,
    ...(audit ? { judge: audit } : {}),
  };
  const markers = input.markers ?? [];
  // Rule of two: untrusted input and a consequential action never pass on rules alone, whatever `withoutModel` says.
  if (proposal.provenance && proposal.provenance.taints.length > 0) {
    return {
      ...common,
      verdict: 'CLARIFY',
      reason: clipReason(
        `${noModel}; values in this call came from untrusted content (${describeTaints(proposal.provenance)}), ` +
          'so a person decides (spec.provenance)',
      ),
      constraints: { ...base, require_human_review: true },
      escalation: { to: 'human', reason: clipEscalation(`tainted call: ${describeTaints(proposal.provenance)}`) },
      confidence: 0,
      rule: 'provenance.tainted',
    };
  }
  if (mode === 'approve' && markers.length > 0) {
    const where = [...new Set(markers.map((m) => `${safePath(m.path)} [${m.marker}]`))].slice(0, 5).join(', ');
    return {
      ...common,
      verdict: 'CLARIFY',
      reason: clipReason(
        `${noModel}; the proposal contains text addressed to the judge (${where}); ` +
          'it cannot be approved on the rules alone',
      ),
      constraints: { ...base, require_human_review: true },
      escalation: null,
      confidence: 1,
      rule: 'injection.suspect',
    };
  }
  switch (mode) {
    case 'approve':
      return {
        ...common,
        verdict: 'APPROVE',
        reason: clipReason(
          `no rule objects: scope, allowlist and paths are within policy; ${noModel}, ` +
            'and the policy approves on the rules alone (spec.judge.withoutModel: approve)',
        ),
        constraints: base,
        escalation: null,
        confidence: 1,
        rule: 'judge.no-model.approve',
      };
    case 'clarify':
      return {
        ...common,
        verdict: 'CLARIFY',
        reason: clipReason(
          `${noModel}; the rules passed, but the policy asks the agent to clarify ` +
            'instead of approving on the rules alone (spec.judge.withoutModel: clarify)',
        ),
        constraints: base,
        escalation: null,
        confidence: 1,
        rule: 'judge.no-model.clarify',
      };
    case 'escalate':
      return {
        ...common,
        verdict: 'CLARIFY',
        reason: clipReason(
          `${noModel}; the rules passed, but they cannot judge content, ` +
            'so a person decides (spec.judge.withoutModel: escalate)',
        ),
        constraints: { ...base, require_human_review: true },
        escalation: { to: 'human', reason: clipEscalation(`no model reviewed this proposal: ${why}`) },
        confidence: 0,
        rule: 'judge.no-model.escalate',
      };
  }
}

const clipEscalation = (s: string) => (s.length <= 4096 ? s : `${s.slice(0, 4095)}…`);
