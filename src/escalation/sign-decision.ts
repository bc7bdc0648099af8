import { newNonce, signBytes } from '../circles/keys';
import type { KeyFile } from '../circles/schemas';
import type { HumanDecision } from '../contracts/messages';
import { decisionSigningBytes } from './signing';

/**
 * Signs a decision for one workflow with a key file (from `agent-judge circles keygen`). The
 * policy's `escalation.approverKeys` (and `discordBotKey`) say whose decisions must carry one; the
 * workflow verifies it with {@link import('./signing').refuseDecisionSignature}.
 */
export function signDecision(
  workflowId: string,
  decision: HumanDecision,
  key: KeyFile,
  now = new Date(),
): HumanDecision {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  const value = signBytes(decisionSigningBytes(workflowId, decision, signedAt, nonce), key.private_key);
  return { ...decision, signature: { signed_at: signedAt, nonce, value } };
}
