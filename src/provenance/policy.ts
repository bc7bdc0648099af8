/**
 * What `spec.provenance` makes of a session and a call: whether a tool's result is untrusted (recorded), and the
 * provenance a consequential call's proposal carries (its taints, the session's injection-scan hits). The proposal
 * then never passes on rules alone: its tier is at least full-judge-review (src/policy/classify.ts), the judge's rules
 * send it to a person when no model reviews it (src/judge/combine.ts), and no grant covers it unless the grant says
 * so (src/policy/grants.ts). Pure.
 */
import { globMatches } from '../contracts/mcp';
import type { ProvenanceSettings } from '../contracts/provenance';
import { MAX_PROPOSAL_TAINTS, type ProposalProvenance } from '../contracts/provenance';
import type { SessionProvenance } from './store';

/** The name a tool's results are recorded under, which `spec.provenance.untrusted` matches. */
export const sourceName = (runtime: string, server: string, tool: string): string => `${runtime}:${server}/${tool}`;

/** True when results from `source` are untrusted under the policy (`trusted` wins over `untrusted`). */
export function isUntrustedSource(settings: ProvenanceSettings, source: string): boolean {
  if (!settings.enabled) return false;
  if (settings.trusted.some((g) => globMatches(g, source))) return false;
  return settings.untrusted.some((g) => globMatches(g, source));
}

/** True when a tainted call of this action type may not pass on rules alone. */
export const isConsequential = (settings: ProvenanceSettings, actionType: string): boolean =>
  settings.enabled && settings.consequential.includes(actionType);

/**
 * The provenance a proposal of this action type carries, or undefined when the call is not tainted, not
 * consequential, or provenance is off.
 */
export function provenanceFor(
  settings: ProvenanceSettings,
  session: SessionProvenance | undefined,
  actionType: string,
  args: Record<string, unknown>,
): ProposalProvenance | undefined {
  if (!session || !isConsequential(settings, actionType)) return undefined;
  const taints = session.taintsOf(args).filter((t) => settings.kinds.includes(t.kind));
  if (taints.length === 0) return undefined;
  return {
    taints: taints.slice(0, MAX_PROPOSAL_TAINTS),
    taints_total: taints.length,
    scan_hits: session.scanHits.slice(-8).map(({ source, marker }) => ({ source, marker })),
  };
}

/** True when the proposal carries taints: it never passes on rules alone. */
export const isTainted = (p: { provenance?: ProposalProvenance | undefined }): boolean =>
  (p.provenance?.taints.length ?? 0) > 0;

export { describeTaints } from '../contracts/provenance';
