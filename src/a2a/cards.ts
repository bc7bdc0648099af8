/**
 * Agent cards from the circle registry: one per active top-level agent, nothing about sub-agents
 * (not their AMIDs, not how many there are, not the circle id). The registry knows an agent's
 * AMID and organisation; that and how to reach it through the front is what a card says.
 */
import type { AgentCard } from '@a2a-js/sdk';
import type { AgentRecord } from '../circles/types';
import type { RegistryTree } from '../circles/state';
import { A2A_METADATA, agentUrl, KNOCK_EXTENSION_URI } from './names';

/** A top-level agent as the front may show it. */
export interface TopLevelAgent {
  amid: string;
  org: string;
}

/** The active top-level agents of a registry tree (the roots of its circles). */
export function topLevelAgents(tree: RegistryTree): TopLevelAgent[] {
  return tree.circles
    .filter((c) => c.root.role === 'top-level' && c.root.status === 'active')
    .map((c) => ({ amid: c.root.amid, org: c.org }));
}

/** True when `record` may be addressed from outside: an active top-level agent. */
export function isReachable(record: AgentRecord | null): record is AgentRecord {
  return record !== null && record.role === 'top-level' && record.status === 'active';
}

/** The A2A card of one top-level agent, served at `<url>/.well-known/agent-card.json`. */
export function agentCard(agent: TopLevelAgent, publicUrl: string, version: string): AgentCard {
  return {
    name: `agent ${agent.amid}`,
    description:
      `Top-level agent ${agent.amid} of organisation ${agent.org}, reached through agent-judge's A2A front. ` +
      `Every message carries a signed KNOCK in metadata["${A2A_METADATA.knock}"], checked by the circle registry; ` +
      `a sub-agent of another circle sends a cross-circle request in metadata["${A2A_METADATA.bridgeRequest}"].`,
    supportedInterfaces: [
      { url: agentUrl(publicUrl, agent.amid), protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: { organization: agent.org, url: publicUrl },
    version,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extensions: [
        {
          uri: KNOCK_EXTENSION_URI,
          description:
            'each message is admitted only with a KNOCK signed by a registered agent (nonce = message digest), ' +
            'or as a cross-circle request that both parents decide',
          required: true,
          params: undefined,
        },
      ],
      extendedAgentCard: false,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'message',
        name: 'message',
        description: `a text message to ${agent.amid}, admitted when the registry allows the caller's KNOCK`,
        tags: ['knock', `org:${agent.org}`],
        examples: [],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
      {
        id: 'cross-circle-request',
        name: 'cross-circle request',
        description:
          `a sub-agent's request_cross_circle to ${agent.amid}: it waits for the sender's parent to forward it ` +
          'and this agent to deliver it',
        tags: ['bridge'],
        examples: [],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
