/**
 * Signs human decisions, for the CLI (`decide --key`) and the Discord bot. Node only (node:crypto
 * through `keys.ts`); the proposal workflow verifies with `decision.ts`.
 */
import type { KeyFile } from '../contracts/identity';
import type { HumanDecision } from '../contracts/messages';
import { decisionSigningBytes } from './decision';
import { newNonce, signBytes } from './keys';

/**
 * Signs a decision for one workflow with a key file (from `agent-judge circles keygen`). The
 * policy's `escalation.approverKeys` (and `discordBotKey`) say whose decisions must carry one; the
 * workflow verifies it with {@link import('./decision').refuseDecisionSignature}.
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
