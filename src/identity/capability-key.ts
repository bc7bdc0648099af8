/**
 * Capability tokens, issuing side (Node only). The signing key lives with the workflow worker
 * (`AGENT_JUDGE_CAPABILITY_KEY`); the judge worker never has it, and only public keys are in the
 * policy. A token is signed for one action, one workflow and one audience, with a fresh id.
 */
import { createPrivateKey, randomUUID, sign as nodeSign, type KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { CapabilityClaims, CapabilityRequest, IssuedCapability } from '../contracts/capability';
import { CapabilityKeyIdSchema } from '../contracts/capability-settings';
import type { CompliancePolicy } from '../contracts/policy';
import { canonicalJson } from '../contracts/canonical-json';
import { fromBase64Url, toBase64Url, utf8 } from '../contracts/encoding';
import { BadInputError } from '../contracts/errors';
import { refusal, type Refusal } from '../contracts/refusal';
import { generateIdentity } from './keys';
import { signV4Public } from './paseto';

/** A loaded capability signing key. */
export interface CapabilityKey {
  kid: string;
  /** Unpadded base64url, as `spec.capabilities.issuers` lists it. */
  publicKey: string;
  seed: Uint8Array;
}

/** What a capability key file holds: `circles keygen` output plus the key id tokens name it by. */
export interface CapabilityKeyFile {
  kid: string;
  public_key: string;
  private_key: string;
}

function keyFrom(kid: string, seedText: string, what: string): CapabilityKey {
  const idCheck = CapabilityKeyIdSchema.safeParse(kid);
  if (!idCheck.success)
    throw new BadInputError(`${what}: kid ${JSON.stringify(kid)}: ${idCheck.error.issues[0]?.message}`);
  const seed = fromBase64Url(seedText);
  if (!seed || seed.length !== 32)
    throw new BadInputError(`${what}: the private key must be a 32-byte Ed25519 seed as unpadded base64url`);
  return { kid, seed, publicKey: toBase64Url(ed25519.getPublicKey(seed)) };
}

/**
 * Reads `AGENT_JUDGE_CAPABILITY_KEY`: either `<kid>:<base64url seed>` inline, or the path of a key
 * file `{kid, public_key, private_key}` (a `circles keygen` file with a `kid` added; without one its
 * `amid` is the key id). The file's public key must belong to its private key.
 */
export async function loadCapabilityKey(value: string, what = 'AGENT_JUDGE_CAPABILITY_KEY'): Promise<CapabilityKey> {
  const inline = /^([A-Za-z0-9][A-Za-z0-9._:-]{0,99}):([A-Za-z0-9_-]{43})$/.exec(value);
  if (inline) return keyFrom(inline[1] as string, inline[2] as string, what);
  let text: string;
  try {
    text = await readFile(value, 'utf8');
  } catch (err) {
    throw new BadInputError(
      `${what}: expected <kid>:<base64url seed> or a key file path; cannot read ${value} (${(err as Error).message})`,
    );
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new BadInputError(`${what}: ${value} is not valid JSON (${(err as Error).message})`);
  }
  const kid = typeof json.kid === 'string' ? json.kid : typeof json.amid === 'string' ? json.amid : undefined;
  if (!kid) throw new BadInputError(`${what}: ${value} has no kid (or amid)`);
  if (typeof json.private_key !== 'string') throw new BadInputError(`${what}: ${value} has no private_key`);
  const key = keyFrom(kid, json.private_key, `${what} (${value})`);
  if (json.public_key !== undefined && json.public_key !== key.publicKey)
    throw new BadInputError(`${what}: ${value}: private_key does not belong to public_key`);
  return key;
}

/** A fresh capability key (for `dev` and tests); `kid` defaults to a name derived from the time. */
export function generateCapabilityKey(kid = `capability-${new Date().toISOString().slice(0, 10)}`): CapabilityKeyFile {
  const { public_key, private_key } = generateIdentity();
  return { kid, public_key, private_key };
}

/**
 * The key file at `path`, created (mode 0600) when missing: `dev` keeps its capability key in its
 * state folder, so tokens it issued still verify after a restart.
 */
export async function ensureCapabilityKeyFile(path: string): Promise<CapabilityKey> {
  try {
    await readFile(path);
  } catch {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `${JSON.stringify(generateCapabilityKey(), null, 2)}\n`, { mode: 0o600, flag: 'wx' }).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      },
    );
    await chmod(path, 0o600);
  }
  return loadCapabilityKey(path, `capability key ${path}`);
}

/** The policy with `key` listed among the capability issuers (what `dev` and in-process workers run with). */
export function withCapabilityIssuer(policy: CompliancePolicy, key: CapabilityKey): CompliancePolicy {
  return {
    ...policy,
    spec: {
      ...policy.spec,
      capabilities: {
        ...policy.spec.capabilities,
        issuers: { ...policy.spec.capabilities.issuers, [key.kid]: key.publicKey },
      },
    },
  };
}

/**
 * Null when the policy lists `key` as an issuer, else why a workflow worker must not start with it:
 * tokens it signed would verify nowhere, and every approved action would be refused.
 */
export function refuseIssuerKey(policy: CompliancePolicy, key: CapabilityKey): Refusal | null {
  const { issuers } = policy.spec.capabilities;
  const listed = Object.hasOwn(issuers, key.kid) ? issuers[key.kid] : undefined;
  if (listed === undefined)
    return refusal(
      'unknown-key',
      `capability key ${key.kid} is not listed in the policy's spec.capabilities.issuers ` +
        `(add ${key.kid}: ${key.publicKey})`,
    );
  if (listed !== key.publicKey)
    return refusal(
      'key-mismatch',
      `capability key ${key.kid}: the policy lists another public key for it ` +
        `(${listed}, this key is ${key.publicKey})`,
    );
  return null;
}

/** Claims for one request at `now`: a fresh token id, the policy's TTL. */
export function capabilityClaims(request: CapabilityRequest, now: Date, jti: string = randomUUID()): CapabilityClaims {
  return {
    sub: request.sub,
    aud: request.aud,
    jti,
    iat: now.toISOString(),
    exp: new Date(now.getTime() + request.ttl_ms).toISOString(),
    wid: request.workflow_id,
    policy_sha256: request.policy_sha256,
    action_sha256: request.action_sha256,
  };
}

/** PKCS#8 DER of an Ed25519 private key is this prefix followed by the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const nodeKeys = new WeakMap<Uint8Array, KeyObject>();

/** The seed as a node:crypto key (built once per seed): one token per executed action is signed natively. */
function nodeKeyOf(seed: Uint8Array): KeyObject {
  let key = nodeKeys.get(seed);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    nodeKeys.set(seed, key);
  }
  return key;
}

/** Signs claims as a v4.public token with the key id in the footer. The payload is canonical JSON. */
export function signCapability(claims: CapabilityClaims, key: CapabilityKey): string {
  const nodeKey = nodeKeyOf(key.seed);
  return signV4Public(utf8(canonicalJson(claims)), key.seed, utf8(canonicalJson({ kid: key.kid })), undefined, (m2) =>
    nodeSign(null, m2, nodeKey),
  );
}

/** Issues a token for one request (the workflow worker's issuing activity). */
export function issueCapability(request: CapabilityRequest, key: CapabilityKey, now = new Date()): IssuedCapability {
  const claims = capabilityClaims(request, now);
  return { token: signCapability(claims, key), kid: key.kid, claims };
}
