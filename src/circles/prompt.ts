/**
 * The Trust Circle paragraph for a sub-agent's system prompt (seed 003, PR3). The registry
 * enforces the rule at KNOCK time; the paragraph keeps the model from planning around it, which is
 * what caused the routing bug the seed mentions.
 */
import type { DiscoveredAgent } from './types';

export interface TrustCirclePromptInput {
  /** The sub-agent the prompt is for. */
  self: { amid: string; circle_id: string; parent_amid: string };
  /** Its siblings in the circle (e.g. the `discover` answer without the parent). */
  peers: ReadonlyArray<Pick<DiscoveredAgent, 'amid'> & { name?: string }>;
  /** Optional readable names, keyed by AMID. */
  names?: Readonly<Record<string, string>>;
}

function label(amid: string, names?: Readonly<Record<string, string>>, name?: string): string {
  const n = name ?? names?.[amid];
  return n ? `${n} (${amid})` : amid;
}

/** Returns the paragraph; deterministic for the same input, so it is safe to snapshot in tests. */
export function trustCirclePrompt(input: TrustCirclePromptInput): string {
  const { self, names } = input;
  const peers = input.peers.filter((p) => p.amid !== self.amid && p.amid !== self.parent_amid);
  const parent = label(self.parent_amid, names);
  const peerText =
    peers.length === 0
      ? 'You have no other peers in your circle right now.'
      : `The other agents of your circle are: ${peers.map((p) => label(p.amid, names, p.name)).join(', ')}.`;
  return [
    `Trust Circle: you are a sub-agent in trust circle ${self.circle_id}. Your parent is ${parent}.`,
    peerText,
    'You may contact (KNOCK) only your parent and the agents of your own circle; ' +
      'every other contact is refused by the registry and reported as a governance event.',
    'If your task needs an agent outside your circle, do not try to reach it directly: ' +
      'use request_cross_circle(target, message), which goes to your parent, ' +
      "who decides whether to forward it to the other circle's parent.",
  ].join(' ');
}
