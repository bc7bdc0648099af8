/**
 * Operator authority over the circle registry. Registering a top-level agent, retiring agents and
 * editing the cross-organisation allowlist are operator actions; without a check, any agent that
 * reaches the namespace could register a fresh key as top-level and leave its circle. When the
 * workers are given operator public keys (`AGENT_JUDGE_CIRCLE_OPERATOR_KEYS`), the registry
 * accepts these actions only with a fresh Ed25519 signature by one of them, and each signature
 * only once (the registry records its nonce). Pure, so the registry workflow verifies it itself.
 */
import { refusal, type Refusal } from '../contracts/refusal';
import { checkSignature, staleness, statementBytes } from '../identity/verify';

export type OperatorAction = 'register' | 'retire' | 'allow-pair' | 'revoke-pair';

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
  return statementBytes('agent-judge/circles-operator/v1', { action, input: rest, signed_at: signedAt, nonce });
}

/**
 * Why an operator action is not authorised, or null. With no operator keys configured every
 * caller is accepted (namespace access is then the only gate, as the worker logs at start).
 * Replays within the window are the registry state's to refuse (it holds the nonces).
 */
export function refuseOperatorAction(
  action: OperatorAction,
  input: { operator?: OperatorSignature },
  operatorKeys: readonly string[],
  nowMs: number,
): Refusal | null {
  if (operatorKeys.length === 0) return null;
  const notOperator = (reason: string) => refusal('not-operator', reason);
  const op = input.operator;
  if (!op) return notOperator(`${action} is an operator action: sign it with an operator key (--operator-key)`);
  if (!operatorKeys.includes(op.public_key))
    return notOperator(`${action}: the signing key is not an operator key of this registry`);
  if (staleness(op.signed_at, nowMs) !== null)
    return notOperator(`${action}: the operator signature is stale or from the future; sign it again`);
  const check = checkSignature(
    operatorSigningBytes(action, input, op.signed_at, op.nonce),
    op.signature,
    op.public_key,
  );
  if (check === 'malformed') return notOperator(`${action}: the operator signature is malformed`);
  return check === 'ok' ? null : notOperator(`${action}: the operator signature does not verify`);
}
