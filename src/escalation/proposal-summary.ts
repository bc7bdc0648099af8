/**
 * What every chat channel says about a proposal, whatever its markup: the target on one line, and the judge's checks
 * of the cited evidence with the marks that show them (Discord's render.ts and slack-render.ts share these).
 */
import type { EvidenceStatus } from '../contracts/lifecycle';
import type { Evidence, Proposal } from '../contracts/proposal';
import type { EscalationNotice } from './notifier';

/** An evidence item, with the judge's verification result when one is known. */
export type EvidenceView = Evidence & { verified?: boolean | null };

export type { EvidenceStatus } from '../contracts/lifecycle';
export interface EvidenceCheckView {
  index: number;
  status: EvidenceStatus;
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v == null) return String(v);
  try {
    // JSON.stringify gives undefined for functions and symbols, which JSON proposals never carry.
    return JSON.stringify(v) ?? `[${typeof v}]`;
  } catch {
    return `[${typeof v}]`;
  }
}

/** `repo: acme/api, branch: fix-1`: the target on one short line. */
export function describeTarget(proposal: Proposal): string {
  const entries = Object.entries(proposal.target ?? {});
  if (entries.length === 0) return '(no target)';
  return entries.map(([k, v]) => `${k}: ${describeValue(v)}`).join(', ');
}

export const EVIDENCE_MARK: Record<EvidenceStatus, string> = {
  verified: '✅',
  failed: '❌ check failed:',
  'other-repo': '❌ other repository:',
  unverifiable: '❔ unverifiable:',
};

/**
 * The judge's evidence checks when the notice carries them: `evidence_checks` on the notice, or
 * `verdict.judge.evidence.checks`. Read defensively: an unknown shape means "not known".
 */
export function evidenceChecksOf(notice: EscalationNotice): Map<number, EvidenceStatus> {
  const source =
    (notice as { evidence_checks?: unknown }).evidence_checks ??
    notice.verdict?.evidence_checks ??
    (notice.verdict?.judge as { evidence?: { checks?: unknown } } | undefined)?.evidence?.checks;
  const out = new Map<number, EvidenceStatus>();
  if (!Array.isArray(source)) return out;
  for (const c of source as Array<Partial<EvidenceCheckView>>) {
    if (typeof c?.index === 'number' && typeof c.status === 'string' && c.status in EVIDENCE_MARK)
      out.set(c.index, c.status);
  }
  return out;
}
