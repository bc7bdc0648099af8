/**
 * Capability tokens (seed 000 §8: "unforgeable tokens per specific action, revoked after use"): the
 * claims a token carries, what a redemption sends and answers, and the action digests a token binds.
 * Pure JavaScript and schema-free (workflow code imports it; zod schemas at module level cost every
 * proposal run milliseconds). Signing and verification live in src/identity/.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { Proposal } from './proposal';
import { canonicalJson } from './canonical-json';
import { toHex, utf8 } from './encoding';

/** The claims of a capability token (PASETO v4.public payload). Times are RFC 3339, as PASETO requires. */
export interface CapabilityClaims {
  /** The agent the action was approved for. */
  sub: string;
  /** Who may perform it: `executor:<action type>` (agent-judge's executors, or the caller) or `mcp:<server>`. */
  aud: string;
  /** The token id: also the id of the Update that redeems it. */
  jti: string;
  iat: string;
  exp: string;
  /** The proposal's workflow id: the only workflow that redeems this token. */
  wid: string;
  /** SHA-256 of the canonical JSON of the policy in force when the action was approved. */
  policy_sha256: string;
  /** Digest of the exact action: {@link actionDigest} or {@link mcpToolCallDigest}. */
  action_sha256: string;
}

/** The footer of every capability token: the issuer's key id, so verifiers pick the key without guessing. */
export interface CapabilityFooter {
  kid: string;
}

/** What the workflow worker's issuing activity returns (recorded in history: nothing secret in it). */
export interface IssuedCapability {
  token: string;
  kid: string;
  claims: CapabilityClaims;
}

/** What the workflow asks its issuing activity to sign. */
export interface CapabilityRequest {
  workflow_id: string;
  sub: string;
  aud: string;
  action_sha256: string;
  policy_sha256: string;
  ttl_ms: number;
}

/**
 * The `awaitSettled` Update's optional argument, for an action its caller performs (the MCP proxy): when the run
 * settles approved, the same Update redeems the run's token for this audience and action and leases the one
 * performance, as `redeemCapability` with `lease: 'forwarding'` would, but without a round trip after the decision.
 * Nothing is leased when the run settles any other way, after `lease_before` (workflow time: the caller no longer
 * holds the call by then), or when the redemption would be refused (another audience or action, already leased);
 * the caller tells its own lease by its nonce in the returned status's redemption.
 */
export interface SettleLease {
  lease: 'forwarding';
  audience: string;
  action_sha256: string;
  redeemer: string;
  nonce: string;
  /** ISO 8601: a run that settles approved after this leases nothing. */
  lease_before: string;
}

/**
 * The `redeemCapability` Update's argument. `nonce` names one logical redemption: a retry of it
 * sends the same nonce (and the same Update id, the token id) and gets the same answer; anybody
 * else redeeming the same token learns it was redeemed by another nonce.
 */
export interface RedeemCapabilityInput {
  token: string;
  /** The audience the performer is: must equal the token's `aud`. */
  audience: string;
  /** Digest of the action about to be performed, computed by the performer from what it will do. */
  action_sha256: string;
  /** Who redeems, for the audit trail (`executor`, `cli`, `mcp-proxy`, ...). */
  redeemer: string;
  nonce: string;
  /**
   * `forwarding`: for an action its caller performs (the MCP proxy), redeeming also leases the one performance, as
   * the `callerOutcome` Update's `forwarding` does, in the same step (one round trip instead of two). Refused, with
   * nothing changed, when the action was already leased.
   */
  lease?: 'forwarding';
}

/** A redemption the workflow accepted. */
export interface CapabilityRedemption {
  token_id: string;
  audience: string;
  redeemer: string;
  nonce: string;
  redeemed_at: string;
}

/** What a proposal's status says about its token. */
export interface CapabilityRecord {
  token: string;
  token_id: string;
  kid: string;
  audience: string;
  action_sha256: string;
  issued_at: string;
  expires_at: string;
  /** True when agent-judge's executor performs the action; false when the caller does. */
  executed_by_agent_judge: boolean;
  redemption: CapabilityRedemption | null;
  /** Set when the token expired unredeemed (the workflow then closed). */
  expired_at: string | null;
}

/**
 * Who a redemption names when agent-judge's own executor performs the action: the workflow records it as it schedules
 * the execute activity (see `ProposalState.redeemForExecutor`), so that executor needs no redeeming Update.
 */
export const EXECUTOR_REDEEMER = 'agent-judge-executor';

/** Audience prefixes: agent-judge's (or the caller's) performer of an action type, and an MCP server. */
export const EXECUTOR_AUDIENCE_PREFIX = 'executor:';
export const MCP_AUDIENCE_PREFIX = 'mcp:';

/** The action fields a token binds for an ordinary proposal. */
export interface ProposalAction {
  action_type: string;
  target: unknown;
  parameters: unknown;
}

/** The parts of an MCP `tools/call` a token binds (the proxy computes it from the call it forwards). */
export interface McpToolCall {
  tool: string;
  /** Hash of the tool's definition as the upstream listed it. */
  tool_definition_hash: string;
  /** The call's arguments; `_agent_judge` (the justification the proxy adds) is left out. */
  arguments: Record<string, unknown>;
}

function sha256Hex(text: string): string {
  return toHex(sha256(utf8(text)));
}

/**
 * SHA-256 (hex) of the canonical JSON of `{action_type, target, parameters}`: what a token for an
 * ordinary proposal binds. Justification, evidence and scope are not part of the action; a
 * different target or parameter is a different action.
 */
export function actionDigest(action: ProposalAction): string {
  return sha256Hex(
    canonicalJson({ action_type: action.action_type, target: action.target, parameters: action.parameters }),
  );
}

/**
 * SHA-256 (hex) of the canonical JSON of `{tool, tool_definition_hash, arguments}` with the
 * `_agent_judge` argument removed: what a token for a proxied MCP tool call binds, so the proxy
 * can check the call it is about to forward against the token.
 */
export function mcpToolCallDigest(call: McpToolCall): string {
  const { _agent_judge: _ignored, ...args } = call.arguments;
  return sha256Hex(
    canonicalJson({ tool: call.tool, tool_definition_hash: call.tool_definition_hash, arguments: args }),
  );
}

/** SHA-256 (hex) of the canonical JSON of the policy in force (the `policy_sha256` claim). */
export function policyDigest(policy: unknown): string {
  return sha256Hex(canonicalJson(policy));
}

/** The audience of agent-judge's executor (or the caller performing it) for an action type. */
export function executorAudience(actionType: string): string {
  return `${EXECUTOR_AUDIENCE_PREFIX}${actionType}`;
}

/** What the workflow asks its worker to sign for this proposal's approved action. */
export function capabilityRequestFor(
  workflowId: string,
  p: Proposal,
  policySha256: string,
  ttlMs: number,
): CapabilityRequest {
  return {
    workflow_id: workflowId,
    sub: p.agent_id,
    ...capabilityBinding(p),
    policy_sha256: policySha256,
    ttl_ms: ttlMs,
  };
}

/** True when `issued` is a token for exactly `request`: its run, agent, audience, action, policy and lifetime. */
export function issuedFor(issued: IssuedCapability, request: CapabilityRequest): boolean {
  const c = issued.claims;
  return (
    c.wid === request.workflow_id &&
    c.sub === request.sub &&
    c.aud === request.aud &&
    c.action_sha256 === request.action_sha256 &&
    c.policy_sha256 === request.policy_sha256 &&
    Date.parse(c.exp) - Date.parse(c.iat) === request.ttl_ms
  );
}

/** The audience and action digest a token for this proposal binds (MCP tool calls bind the call itself). */
export function capabilityBinding(p: Proposal): { aud: string; action_sha256: string } {
  const target: Record<string, unknown> = p.target;
  const params: Record<string, unknown> = p.parameters;
  if (
    p.action_type === 'mcp_tool_call' &&
    typeof target.server === 'string' &&
    typeof target.tool === 'string' &&
    typeof params.tool_definition_hash === 'string' &&
    params.arguments !== null &&
    typeof params.arguments === 'object' &&
    !Array.isArray(params.arguments)
  ) {
    return {
      aud: `${MCP_AUDIENCE_PREFIX}${target.server}`,
      action_sha256: mcpToolCallDigest({
        tool: target.tool,
        tool_definition_hash: params.tool_definition_hash,
        arguments: params.arguments as Record<string, unknown>,
      }),
    };
  }
  return { aud: executorAudience(p.action_type), action_sha256: actionDigest(p) };
}
