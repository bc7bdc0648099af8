/**
 * memory_write's confinement (issue 21): an agent writes its own stores and the ones the policy names for it, never
 * another agent's. Pure, with no Node import: the workflow runs it for the no-judge and lightweight tiers, the judge
 * and the executor run it again through the hard rules (src/guards/rules.ts).
 */
import type { CompliancePolicy } from './policy';
import type { Proposal } from './proposal';
import type { RuleFinding } from './verdict';

/** The rule a refused store is named by. */
export const MEMORY_STORE_RULE = 'memory.store';
/** The key of `spec.memory.stores` whose stores every agent may write. */
export const EVERY_AGENT = '*';

/** True when `store` is the agent's own: its id without the `@`, or that followed by `.` or `:` and more. */
export function isOwnStore(agentId: string, store: string): boolean {
  const own = agentId.replace(/^@/, '');
  return store === own || store.startsWith(`${own}.`) || store.startsWith(`${own}:`);
}

/** The REJECT for a memory_write into a store that is not the agent's own nor named for it; null otherwise. */
export function memoryStoreFinding(proposal: Proposal, policy: CompliancePolicy): RuleFinding | null {
  if (proposal.action_type !== 'memory_write') return null;
  const store = (proposal.target as { store?: unknown }).store;
  if (typeof store !== 'string') return null;
  const agent = proposal.agent_id;
  if (isOwnStore(agent, store)) return null;
  const named = policy.spec.memory.stores ?? {};
  if ((named[agent] ?? []).includes(store) || (named[EVERY_AGENT] ?? []).includes(store)) return null;
  const own = agent.replace(/^@/, '');
  return {
    verdict: 'REJECT',
    rule: MEMORY_STORE_RULE,
    reason:
      `memory store ${JSON.stringify(store)} is not ${agent}'s: an agent writes its own stores ` +
      `(${own}, ${own}.<name>) and those spec.memory.stores names for it`,
  };
}
