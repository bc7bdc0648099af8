/**
 * Discovery filter of seed 003 (PR3): an agent is shown the peers it may KNOCK, nobody else.
 * A sub-agent sees its parent and the rest of its circle; a top-level agent sees the top-level
 * agents it may reach (its organisation, plus allowlisted pairs) and its own sub-tree.
 */
import type { AgentRecord, DiscoveredAgent } from './types';

export function toDiscovered(agent: AgentRecord): DiscoveredAgent {
  return { amid: agent.amid, role: agent.role, circle_id: agent.circle_id, parent_amid: agent.parent_amid };
}

/** Whom `requester` can see among `agents`; retired agents (and a retired requester) see nobody. */
export function discoverFor(
  requester: AgentRecord,
  agents: Iterable<AgentRecord>,
  pairAllowed: (a: string, b: string) => boolean,
): DiscoveredAgent[] {
  if (requester.status !== 'active') return [];
  const seen: DiscoveredAgent[] = [];
  for (const agent of agents) {
    if (agent.amid === requester.amid || agent.status !== 'active') continue;
    const sameCircle = agent.circle_id === requester.circle_id;
    const visible =
      requester.role === 'sub-agent'
        ? sameCircle
        : sameCircle ||
          (agent.role === 'top-level' && (agent.org === requester.org || pairAllowed(requester.amid, agent.amid)));
    if (visible) seen.push(toDiscovered(agent));
  }
  return seen;
}
