/**
 * Policy tests (`agent-judge policy test <cases>`): a file of cases, each a proposal and what the policy must make
 * of it (tier, verdict or "person", optionally the rule), run like unit tests through the replay's decision
 * (src/replay/decide.ts: the gate's shell completion, tiers, the workflow's state class, the judge's rules) without a
 * model: a policy test is about the policy, so a rules-clean proposal in the full judge's tier gets what the policy's
 * `spec.judge.withoutModel` says. Each failure is a diff naming the case, its line and each field that differs.
 */
import { readFile } from 'node:fs/promises';
import { isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { z } from 'zod';
import { PolicyError } from '../contracts/errors';
import type { CompliancePolicy } from '../contracts/policy';
import { safeParseProposal } from '../contracts/proposal';
import { ClarificationSchema } from '../contracts/messages';
import { TierSchema } from '../contracts/verdict';
import { describeIssues } from '../contracts/zod-error';
import { decideAgain, decisionSummary, type DecisionSummary } from './decide';

const CaseSchema = z.strictObject({
  name: z.string().min(1).max(200),
  /** A proposal; proposal_id, agent_id and cited_evidence may be left out (a case id, `@policy-test`, none). */
  proposal: z.record(z.string(), z.unknown()),
  /** The actor's answers to CLARIFY rounds, in order. */
  clarifications: z.array(ClarificationSchema).max(10).optional(),
  expect: z.strictObject({
    tier: TierSchema.optional(),
    verdict: z.enum(['APPROVE', 'REJECT', 'person', 'CLARIFY']),
    rule: z.string().max(128).optional(),
  }),
});
export type PolicyCase = z.infer<typeof CaseSchema>;

const CasesFileSchema = z.strictObject({ cases: z.array(CaseSchema).min(1).max(10_000) });

/** A case as read, with the line it starts on. */
export interface LoadedCase extends PolicyCase {
  line: number | undefined;
}

/** Reads a cases file (YAML or JSON); a bad file throws {@link PolicyError} naming the file, line and field. */
export async function loadCases(path: string): Promise<LoadedCase[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PolicyError(`cases ${path}: cannot read the file (${(err as Error).message})`);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0)
    throw new PolicyError(`cases ${path}: not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  const items = doc.get('cases', true);
  const lineOf = (i: number | undefined): number | undefined => {
    if (i === undefined || !isSeq(items)) return undefined;
    const offset = (items.items[i] as Node | undefined)?.range?.[0];
    return offset === undefined ? undefined : lineCounter.linePos(offset).line;
  };
  const parsed = CasesFileSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const at = first?.path[0] === 'cases' && typeof first.path[1] === 'number' ? lineOf(first.path[1]) : undefined;
    throw new PolicyError(
      `cases ${path}${at === undefined ? '' : `:${at}`}: ${describeIssues('', parsed.error.issues)}`,
    );
  }
  return parsed.data.cases.map((c, i) => ({ ...c, line: lineOf(i) }));
}

/** One field that differs from what the case expects. */
export interface CaseDiff {
  field: 'tier' | 'verdict' | 'rule' | 'proposal';
  expected: string;
  actual: string;
}

export interface CaseResult {
  name: string;
  line: number | undefined;
  ok: boolean;
  diffs: CaseDiff[];
  /** What the policy decided (absent when the proposal itself is invalid). */
  decision?: DecisionSummary;
}

const NOW = '2026-01-01T00:00:00.000Z';

/** Runs every case against `policy`; pure but for the filesystem look-ups path rules need. */
export async function runCases(
  cases: readonly LoadedCase[],
  policy: CompliancePolicy,
  baseDir: string,
): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const [i, c] of cases.entries()) {
    const parsed = safeParseProposal({
      proposal_id: `case-${i + 1}`,
      agent_id: '@policy-test',
      cited_evidence: [],
      ...c.proposal,
    });
    if (!parsed.ok) {
      out.push({
        name: c.name,
        line: c.line,
        ok: false,
        diffs: [{ field: 'proposal', expected: 'a valid proposal', actual: parsed.refusal.reason }],
      });
      continue;
    }
    const d = await decideAgain(
      parsed.value,
      c.clarifications ?? [],
      [],
      { policy, baseDir },
      { client: undefined, missed: () => false, counts: () => ({ called: 0, reused: 0 }) },
      NOW,
    );
    const diffs: CaseDiff[] = [];
    if (c.expect.tier !== undefined && c.expect.tier !== d.tier)
      diffs.push({ field: 'tier', expected: c.expect.tier, actual: d.tier });
    if (c.expect.verdict !== d.outcome) diffs.push({ field: 'verdict', expected: c.expect.verdict, actual: d.outcome });
    if (c.expect.rule !== undefined && c.expect.rule !== d.rule)
      diffs.push({ field: 'rule', expected: c.expect.rule, actual: d.rule ?? '(none)' });
    out.push({
      name: c.name,
      line: c.line,
      ok: diffs.length === 0,
      diffs,
      decision: decisionSummary(d),
    });
  }
  return out;
}

/** The results as a test runner prints them: one line per case, a diff under each failure, a summary. */
export function renderCaseResults(file: string, results: readonly CaseResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    const where = `${file}${r.line === undefined ? '' : `:${r.line}`}`;
    if (r.ok) {
      lines.push(`ok   ${r.name}`);
      continue;
    }
    lines.push(`FAIL ${r.name} (${where})`);
    for (const d of r.diffs) lines.push(`     ${d.field}: expected ${d.expected}, got ${d.actual}`);
    if (r.decision) {
      const by = r.decision.gate ? `gate: ${r.decision.gate}` : r.decision.decided_by;
      lines.push(`     decided by ${by}${r.decision.rule ? `, rule ${r.decision.rule}` : ''}: ${r.decision.reason}`);
    }
  }
  const failed = results.filter((r) => !r.ok).length;
  lines.push('', `${results.length - failed} passed, ${failed} failed (${results.length} cases)`);
  return `${lines.join('\n')}\n`;
}
