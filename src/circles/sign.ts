/**
 * Signing circle statements, for agent runtimes and the CLI. Node only (through identity's
 * node:crypto signer): the registry workflow verifies with `statements.ts` instead.
 */
import { signBytes } from '../identity/keys';
import { signingBytes, type StatementKind } from './statements';

/** Signs a statement of the given kind; the registry checks it with `verifyStatement`. */
export function signStatement(kind: StatementKind, statement: object, privateKey: string): string {
  return signBytes(signingBytes(kind, statement), privateKey);
}
