/**
 * The KNOCK policy of seed 003 (PR2), as a pure function of the two registry records and the
 * allowlist. Signature, freshness and replay are checked before this runs (see `RegistryState`).
 *
 *   sub-agent:  peer is my parent, or peer is in my circle
 *   top-level:  peer is top-level in my organisation, or on my allowlist, or in my own circle
 */
import type { AgentRecord, KnockCode } from './types';

export interface PolicyDecision {
  allowed: boolean;
  code: KnockCode;
  reason: string;
}

const allow = (code: KnockCode, reason: string): PolicyDecision => ({ allowed: true, code, reason });
const deny = (code: KnockCode, reason: string): PolicyDecision => ({ allowed: false, code, reason });

/**
 * Decides whether `caller` may KNOCK `target`. `pairAllowed` says whether the two are an
 * allowlisted top-level pair; `targetParentOf` names the top-level agent that owns the target's
 * circle, so a denial can say where cross-circle traffic has to go instead.
 */
export function decideKnock(
  caller: AgentRecord,
  target: AgentRecord | undefined,
  pairAllowed: boolean,
  circleOwner: (circleId: string) => string | undefined = () => undefined,
): PolicyDecision {
  if (caller.status !== 'active') return deny('caller-retired', `caller ${caller.amid} is retired`);
  if (!target) return deny('unknown-target', 'target is not a registered agent');
  if (target.status !== 'active') return deny('target-retired', `target ${target.amid} is retired`);
  if (target.amid === caller.amid) return deny('self', 'an agent does not knock itself');

  if (caller.role === 'sub-agent') {
    if (target.amid === caller.parent_amid) return allow('parent', `${target.amid} is the caller's parent`);
    if (target.circle_id === caller.circle_id)
      return allow('same-circle', `both agents are in circle ${caller.circle_id}`);
    const owner = circleOwner(caller.circle_id);
    return deny(
      'cross-circle',
      `sub-agent ${caller.amid} may knock only its parent and its own circle ${caller.circle_id}; ` +
        `${target.amid} is in circle ${target.circle_id}. Cross-circle traffic goes through the parents` +
        (owner ? ` (request_cross_circle via ${owner})` : ''),
    );
  }

  // top-level caller
  if (target.circle_id === caller.circle_id)
    return allow('own-circle', `${target.amid} is in the caller's own circle ${caller.circle_id}`);
  if (target.role === 'top-level') {
    if (target.org === caller.org)
      return allow('top-level-peer', `top-level peers of organisation ${caller.org} interconnect`);
    if (pairAllowed)
      return allow('allowlisted-pair', `top-level pair ${caller.amid} / ${target.amid} is on the allowlist`);
    return deny(
      'not-allowlisted',
      `${caller.amid} (organisation ${caller.org}) and ${target.amid} (organisation ${target.org}) ` +
        'are not an allowlisted pair',
    );
  }
  const owner = circleOwner(target.circle_id);
  return deny(
    'cross-circle',
    `${target.amid} is a sub-agent of circle ${target.circle_id}; ` +
      "a top-level agent reaches another circle's sub-agents " +
      `only through that circle's parent${owner ? ` ${owner}` : ''}`,
  );
}

/** The key of an unordered pair in the allowlist. */
export function pairKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
