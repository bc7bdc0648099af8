/**
 * Redeeming capability tokens (seed 000 §8), for whoever performs an approved action: the MCP
 * proxy before it forwards a tool call, agent-judge's executors before they act, the CLI
 * (`capability verify --redeem`) and any external performer. A token is redeemed once, through its
 * proposal's workflow: an Update whose id is the token id, so a retry of the same redemption gets
 * the same answer, while any other redemption of the same token is refused.
 */
import { randomUUID } from 'node:crypto';
import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import {
  actionDigest,
  executorAudience,
  mcpToolCallDigest,
  type CapabilityClaims,
  type CapabilityRedemption,
  type McpToolCall,
  type ProposalAction,
  type RedeemCapabilityInput,
} from '../contracts/capability';
import { AgentJudgeError, BadInputError, NotFoundError } from '../contracts/errors';
import { FailureType } from '../contracts/lifecycle';
import { unverifiedClaims, verifyCapability } from '../identity/capability';
import { redeemCapabilityUpdate, statusQuery } from '../names';
import { grpcCode, GrpcStatus } from './grpc';

/** A token that must not be used: bad signature, expired, another audience, action or workflow, or already redeemed. */
export class CapabilityRefusedError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.Refused;

  constructor(
    message: string,
    /** Stable reason: a verification code (`expired`, `action`, ...), `redeemed` or `closed`. */
    readonly code: string,
  ) {
    super(message);
  }
}

/** The action a token is checked against: an ordinary proposal's action, an MCP tool call, or its digest. */
export type CapabilityAction = ProposalAction | McpToolCall | { action_sha256: string };

/** The digest a token must bind for `action`. */
export function digestOfAction(action: CapabilityAction): string {
  if ('action_sha256' in action) return action.action_sha256;
  if ('tool' in action) return mcpToolCallDigest(action);
  return actionDigest(action);
}

export interface RedeemCapabilityOptions {
  token: string;
  /** Exactly what the caller is about to perform. */
  action: CapabilityAction;
  /** The audience the caller is (`executor:<type>`, `mcp:<server>`); default `executor:<action_type>`. */
  audience?: string;
  /** Who redeems, for the audit trail (default `client`). */
  redeemer?: string;
  /**
   * Names this redemption: pass the same value when retrying it (a retry then gets the same answer).
   * Default: a fresh one, i.e. a new redemption.
   */
  nonce?: string;
  /**
   * `spec.capabilities.issuers`: when given, the signature, expiry, audience and action are checked
   * here first, so a bad token never reaches Temporal. The workflow checks them again in any case.
   */
  issuers?: Readonly<Record<string, string>>;
  /** Also lease the caller's one performance of the action (see {@link RedeemCapabilityInput.lease}). */
  lease?: 'forwarding';
}

function audienceOf(options: RedeemCapabilityOptions): string {
  if (options.audience) return options.audience;
  if ('action_type' in options.action) return executorAudience(options.action.action_type);
  throw new BadInputError(
    'audience: required unless the action is a proposal action (action_type, target, parameters)',
  );
}

function isClosedRunError(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || grpcCode(err) === GrpcStatus.NOT_FOUND;
}

/**
 * Redeems `token` for the action about to be performed; resolves to the accepted redemption, or
 * throws {@link CapabilityRefusedError} (nothing changed) and the caller must not act.
 */
export async function redeemCapability(
  client: Client,
  options: RedeemCapabilityOptions,
): Promise<CapabilityRedemption> {
  const audience = audienceOf(options);
  const action_sha256 = digestOfAction(options.action);
  let claims: Partial<CapabilityClaims> | null;
  if (options.issuers) {
    const check = verifyCapability(options.token, {
      issuers: options.issuers,
      nowMs: Date.now(),
      audience,
      actionSha256: action_sha256,
    });
    if (!check.ok) throw new CapabilityRefusedError(`capability refused: ${check.refusal.reason}`, check.refusal.code);
    claims = check.value.claims;
  } else {
    claims = unverifiedClaims(options.token);
  }
  if (!claims || typeof claims.wid !== 'string' || typeof claims.jti !== 'string')
    throw new CapabilityRefusedError('capability refused: not a capability token (no wid or jti claim)', 'malformed');
  const input: RedeemCapabilityInput = {
    token: options.token,
    audience,
    action_sha256,
    redeemer: options.redeemer ?? 'client',
    nonce: options.nonce ?? randomUUID(),
    ...(options.lease ? { lease: options.lease } : {}),
  };
  const handle = client.workflow.getHandle(claims.wid);
  let redemption: CapabilityRedemption;
  try {
    redemption = await handle.executeUpdate(redeemCapabilityUpdate, { args: [input], updateId: claims.jti });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      // A retry of a redemption that already went through is ours, whatever the validator says now.
      const own = await recordedRedemption(client, claims.wid).catch(() => null);
      if (own?.nonce === input.nonce) return own;
      throw new CapabilityRefusedError(`capability refused: ${err.cause?.message ?? err.message}`, 'refused');
    }
    if (!isClosedRunError(err)) throw err;
    // The run has closed: after this very redemption (a retry), after another, or on expiry.
    redemption = await closedRunRedemption(client, claims.wid);
  }
  if (redemption.nonce !== input.nonce)
    throw new CapabilityRefusedError(
      `capability refused: the token ${redemption.token_id} was already redeemed at ${redemption.redeemed_at} ` +
        `by ${redemption.redeemer}`,
      'redeemed',
    );
  return redemption;
}

async function recordedRedemption(client: Client, workflowId: string): Promise<CapabilityRedemption | null> {
  return (await client.workflow.getHandle(workflowId).query(statusQuery)).capability?.redemption ?? null;
}

/** The redemption a closed run recorded, or the refusal that says why there is none. */
async function closedRunRedemption(client: Client, workflowId: string): Promise<CapabilityRedemption> {
  let status;
  try {
    status = await client.workflow.getHandle(workflowId).query(statusQuery);
  } catch (err) {
    if (isClosedRunError(err)) throw new NotFoundError(`capability refused: no proposal workflow ${workflowId}`);
    throw err;
  }
  const c = status.capability;
  if (c?.redemption) return c.redemption;
  if (c?.expired_at)
    throw new CapabilityRefusedError(`capability refused: the token expired at ${c.expires_at}`, 'expired');
  throw new CapabilityRefusedError(`capability refused: proposal ${status.proposal_id} is closed`, 'closed');
}
