/**
 * Capability tokens, verification side (seed 000 §8): checks that a token was signed by an issuer
 * the policy lists, for this audience, this workflow and this exact action, and has not expired.
 * Node only (node:crypto verifies; it runs in executors, the CLI and the MCP proxy alike). Single
 * use is not decided here: the proposal's workflow redeems a token once (the `redeemCapability`
 * Update, or its own record for agent-judge's executor). Issuing is in `capability-key.ts`.
 */
import { createPublicKey, verify as nodeVerify, type KeyObject } from 'node:crypto';
import type { CapabilityClaims, CapabilityFooter } from '../contracts/capability';
import { decodePublicKey } from '../contracts/identity';
import { refused, type Checked } from '../contracts/refusal';
import { parseV4Public, verifyV4Public, type Ed25519Verify, type PasetoError } from './paseto-verify';

/** The DER (SubjectPublicKeyInfo) prefix of an Ed25519 public key: RFC 8410 §4. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** Issuers' keys as node:crypto key objects, by their raw bytes (a policy lists a handful). */
const keyObjects = new Map<string, KeyObject>();

/**
 * Ed25519 verification by node:crypto (OpenSSL): ~0.4 ms against ~2.4 ms for the pure-JavaScript default on this
 * project's 2-core machine (docs/capabilities.md), on every executed action and every redemption that checks. The
 * keys are the policy's own issuers, never the token's, so the two agree: test/unit/paseto.test.ts runs the
 * official vectors and tampered tokens through both.
 */
export const nodeEd25519Verify: Ed25519Verify = (signature, message, publicKey) => {
  const id = Buffer.from(publicKey).toString('base64');
  try {
    let key = keyObjects.get(id);
    if (!key) {
      key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
      if (keyObjects.size >= 64) keyObjects.clear();
      keyObjects.set(id, key);
    }
    return nodeVerify(null, message, key, signature);
  } catch {
    // Not a key OpenSSL accepts, or a malformed signature: not verified.
    return false;
  }
};

/** What a verifier expects; each field left out is not checked (signature and expiry always are). */
export interface CapabilityExpectation {
  /** Key id -> public key: `spec.capabilities.issuers`. */
  issuers: Readonly<Record<string, string>>;
  nowMs: number;
  audience?: string;
  workflowId?: string;
  actionSha256?: string;
}

/** A token that verified: its claims, and the key id that signed it. */
export interface VerifiedCapability {
  claims: CapabilityClaims;
  kid: string;
}

export type CapabilityCheck = Checked<VerifiedCapability>;

/** The codes of a refused token, stable for callers (the CLI maps them to one-line errors). */
export type CapabilityRefusal =
  | 'malformed'
  | 'unsupported'
  | 'unknown-key'
  | 'signature'
  | 'claims'
  | 'expired'
  | 'audience'
  | 'workflow'
  | 'action';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const HEX64 = /^[0-9a-f]{64}$/;
const CLAIM_NAMES = ['sub', 'aud', 'jti', 'iat', 'exp', 'wid', 'policy_sha256', 'action_sha256'] as const;

function decodeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The footer's key id, or null when the footer is not exactly `{"kid": "..."}`. */
function footerKid(footer: Uint8Array): string | null {
  const parsed = decodeJson(footer);
  if (!isRecord(parsed)) return null;
  const keys = Object.keys(parsed);
  if (keys.length !== 1 || keys[0] !== 'kid' || typeof parsed.kid !== 'string') return null;
  return (parsed as unknown as CapabilityFooter).kid;
}

/** The claims, or why they are not a capability's (missing, wrong type, bad time or digest). */
function readClaims(value: unknown): CapabilityClaims | string {
  if (!isRecord(value)) return 'the payload is not a JSON object';
  for (const name of CLAIM_NAMES) {
    const claim = value[name];
    if (typeof claim !== 'string' || claim.length === 0) return `claim ${name} is missing or not a string`;
  }
  const claims = value as unknown as CapabilityClaims;
  for (const name of ['iat', 'exp'] as const) {
    if (!RFC3339.test(claims[name]) || !Number.isFinite(Date.parse(claims[name])))
      return `claim ${name} is not an RFC 3339 time`;
  }
  for (const name of ['policy_sha256', 'action_sha256'] as const) {
    if (!HEX64.test(claims[name])) return `claim ${name} is not 64 lowercase hex characters`;
  }
  return claims;
}

const refuse = (code: CapabilityRefusal, reason: string): CapabilityCheck => refused(code, reason);

/**
 * Verifies a capability token. The key comes from the policy by the footer's `kid` (own keys only);
 * the signature is checked before any claim is read, and the claims are compared with what the
 * caller is about to do. Never throws.
 */
export function verifyCapability(token: string, expect: CapabilityExpectation): CapabilityCheck {
  let footer: Uint8Array;
  try {
    footer = parseV4Public(token).footer;
  } catch (err) {
    const e = err as PasetoError;
    return refuse(e.code === 'unsupported' ? 'unsupported' : 'malformed', e.message);
  }
  const kid = footerKid(footer);
  if (kid === null) return refuse('malformed', 'the token footer is not {"kid": "<key id>"}');
  const publicKey = Object.hasOwn(expect.issuers, kid) ? expect.issuers[kid] : undefined;
  if (typeof publicKey !== 'string')
    return refuse('unknown-key', `key id ${JSON.stringify(kid)} is not in the policy's capabilities.issuers`);
  const raw = decodePublicKey(publicKey);
  if (!raw) return refuse('unknown-key', `the policy's key for ${JSON.stringify(kid)} is not an Ed25519 public key`);
  let message: Uint8Array;
  try {
    message = verifyV4Public(token, raw, undefined, nodeEd25519Verify).message;
  } catch (err) {
    const e = err as PasetoError;
    return refuse(e.code === 'signature' ? 'signature' : 'malformed', `${e.message} (key ${kid})`);
  }
  const claims = readClaims(decodeJson(message));
  if (typeof claims === 'string') return refuse('claims', claims);
  if (Date.parse(claims.exp) <= expect.nowMs) return refuse('expired', `the token expired at ${claims.exp}`);
  if (expect.audience !== undefined && claims.aud !== expect.audience)
    return refuse('audience', `the token is for ${claims.aud}, not ${expect.audience}`);
  if (expect.workflowId !== undefined && claims.wid !== expect.workflowId)
    return refuse('workflow', `the token belongs to workflow ${claims.wid}, not ${expect.workflowId}`);
  if (expect.actionSha256 !== undefined && claims.action_sha256 !== expect.actionSha256)
    return refuse(
      'action',
      `the token was issued for another action (sha256 ${claims.action_sha256.slice(0, 16)}…, ` +
        `this one is ${expect.actionSha256.slice(0, 16)}…)`,
    );
  return { ok: true, value: { claims, kid } };
}

/** The claims of a token whose signature was NOT checked: for naming the workflow to redeem at. */
export function unverifiedClaims(token: string): Partial<CapabilityClaims> | null {
  try {
    const parsed = decodeJson(parseV4Public(token).message);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
