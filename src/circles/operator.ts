/**
 * Operator authority over the circle registry. Registering a top-level agent, retiring agents and
 * editing the cross-organisation allowlist are operator actions; without a check, any agent that
 * reaches the namespace could register a fresh key as top-level and leave its circle. When the
 * workers are given operator public keys (`AGENT_JUDGE_CIRCLE_OPERATOR_KEYS`), the registry
 * accepts these actions only with a fresh Ed25519 signature by one of them. Pure JavaScript, so
 * the registry workflow verifies it itself.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalJson } from './crypto';
import { fromBase64Url, utf8 } from './encoding';

export type OperatorAction = 'register' | 'retire' | 'allow-pair' | 'revoke-pair';

/** How far an operator signature's time may be from registry time. */
export const OPERATOR_SIGNATURE_WINDOW_MS = 5 * 60_000;

export interface OperatorSignature {
  public_key: string;
  signed_at: number;
  nonce: string;
  signature: string;
}

/** The exact bytes an operator signs: a domain tag, the action, and its input without the signature. */
export function operatorSigningBytes(
  action: OperatorAction,
  input: object,
  signedAt: number,
  nonce: string,
): Uint8Array {
  const { operator: _drop, ...rest } = input as { operator?: unknown };
  return utf8(`agent-judge/circles-operator/v1\n${canonicalJson({ action, input: rest, signed_at: signedAt, nonce })}`);
}

/**
 * Why an operator action is not authorised, or null. With no operator keys configured every
 * caller is accepted (namespace access is then the only gate, as the worker logs at start).
 */
export function refuseOperatorAction(
  action: OperatorAction,
  input: { operator?: OperatorSignature },
  operatorKeys: readonly string[],
  nowMs: number,
): string | null {
  if (operatorKeys.length === 0) return null;
  const op = input.operator;
  if (!op) return `${action} is an operator action: sign it with an operator key (--operator-key)`;
  if (!operatorKeys.includes(op.public_key))
    return `${action}: the signing key is not an operator key of this registry`;
  if (!Number.isFinite(op.signed_at) || Math.abs(nowMs - op.signed_at) > OPERATOR_SIGNATURE_WINDOW_MS) {
    return `${action}: the operator signature is stale or from the future; sign it again`;
  }
  try {
    const sig = fromBase64Url(op.signature);
    const key = fromBase64Url(op.public_key);
    if (!sig || sig.length !== 64 || !key || key.length !== 32) return `${action}: the operator signature is malformed`;
    const ok = ed25519.verify(sig, operatorSigningBytes(action, input, op.signed_at, op.nonce), key, { zip215: false });
    return ok ? null : `${action}: the operator signature does not verify`;
  } catch {
    return `${action}: the operator signature is malformed`;
  }
}
