/**
 * Names of the A2A front that cross a process: where each top-level agent is served, the metadata
 * keys a caller puts on its message, and the extension the cards declare. Callers and the front
 * import these; never retype them as strings.
 */

/** Path prefix of every agent the front serves: `/agents/<amid>` (JSON-RPC) and its `.well-known` card. */
export const A2A_AGENTS_PATH = '/agents';

/**
 * The A2A extension every card declares as required: each message carries a signed KNOCK (or a
 * signed cross-circle request) in `message.metadata`, checked by the circle registry.
 */
export const KNOCK_EXTENSION_URI = 'urn:agent-judge:a2a:knock:v1';

/** Keys of `message.metadata` the front reads and writes. */
export const A2A_METADATA = {
  /** A `SignedKnock` whose `to` is the addressed agent and whose nonce is the message digest. */
  knock: 'agent-judge/knock',
  /** A `SignedBridgeRequest` (a sub-agent's `request_cross_circle`) whose `to` is the addressed agent. */
  bridgeRequest: 'agent-judge/bridge-request',
  /** Set by the front (any caller's value is dropped): the AMID the registry verified. */
  verifiedFrom: 'agent-judge/from',
} as const;

/** Keys of a refused or bridged task's `metadata`, for scripts. */
export const A2A_TASK_METADATA = {
  /** The registry's stable code (`cross-circle`, `replay`, `top-level-peer`, ...). */
  code: 'agent-judge/code',
  /** The bridge request id (`bridge-12`) of a cross-circle message. */
  bridgeRequestId: 'agent-judge/bridge-request-id',
} as const;

/**
 * The agent's base URL under the front's public URL. It ends with a slash: the SDK's client
 * resolves `.well-known/agent-card.json` against it as a relative URL.
 */
export function agentUrl(publicUrl: string, amid: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${A2A_AGENTS_PATH}/${amid}/`;
}
