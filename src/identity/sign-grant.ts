/** Signs grants, for the CLI (`grants create --key`, `decide --grant --key`). Node only; verification is grant.ts. */
import type { KeyFile } from '../contracts/identity';
import type { GrantDefinition, GrantRequest } from '../contracts/grant';
import { grantSigningBytes } from './grant';
import { newNonce, signBytes } from './keys';

/** The grant workflow's input: the definition signed by the approver's key file. */
export function signGrant(definition: GrantDefinition, key: KeyFile, now = new Date()): GrantRequest {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  const value = signBytes(grantSigningBytes(definition, signedAt, nonce), key.private_key);
  return { definition, signature: { signed_at: signedAt, nonce, value } };
}
