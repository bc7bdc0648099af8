/**
 * Circle statements (membership, KNOCK, bridge request and decision): their domain tags and the
 * check the registry runs on each. Verification itself is identity's; this module only says what
 * a circle signature is over. Pure, so the registry workflow imports it; signing is in `sign.ts`.
 */
import { statementBytes, verifySignature } from '../identity/verify';

/** What a signature is for. Part of the signed bytes, so a signature for one kind never passes as another. */
export type StatementKind = 'membership' | 'knock' | 'bridge-request' | 'bridge-decision';

/** The exact bytes that get signed: a domain tag naming the kind, a newline, the canonical JSON. */
export function signingBytes(kind: StatementKind, statement: object): Uint8Array {
  return statementBytes(`agent-judge/circles/v1/${kind}`, statement);
}

/**
 * True when `signature` is a valid signature by `publicKey` over the statement of that kind. The
 * registry passes the key it holds, never one sent with the request. Never throws.
 */
export function verifyStatement(kind: StatementKind, statement: object, signature: string, publicKey: string): boolean {
  return verifySignature(signingBytes(kind, statement), signature, publicKey);
}
