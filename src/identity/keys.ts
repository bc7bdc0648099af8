/**
 * Signing side of identities (agents, operators, approvers, the Discord bot), for agent runtimes,
 * the CLI and the bot. Node only (node:crypto): workflow code must never import this module; it
 * verifies with `verify.ts`.
 *
 * Key format: both keys are the raw 32 bytes as unpadded base64url (the `x` and `d` of an Ed25519
 * JWK). A key file is the JSON that `circles keygen` prints: `{ amid, public_key, private_key }`.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BadInputError } from '../contracts/errors';
import { describeIssues } from '../contracts/zod-error';
import { KeyFileSchema, type KeyFile } from '../contracts/identity';
import { amidFromPublicKey } from './verify';
import { jsonSyntaxProblem } from '../contracts/syntax-position';

// PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows it.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A fresh agent identity; print it or save it as a key file (keep the file private). */
export function generateIdentity(): KeyFile {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'jwk' }).x as string;
  const priv = privateKey.export({ format: 'jwk' }).d as string;
  return { amid: amidFromPublicKey(pub), public_key: pub, private_key: priv };
}

function privateKeyObject(privateKey: string): KeyObject {
  const seed = Buffer.from(privateKey, 'base64url');
  if (seed.length !== 32) throw new BadInputError('private_key: expected 32 bytes as unpadded base64url');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** Signs raw bytes (a domain-tagged statement, see `statementBytes`) with a key file's private key. */
export function signBytes(bytes: Uint8Array, privateKey: string): string {
  return sign(null, bytes, privateKeyObject(privateKey)).toString('base64url');
}

/** 128 random bits: one per signed statement, so its verifier can refuse replays. */
export function newNonce(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Checks that a key file is internally consistent (the private key produces the public key, the
 * AMID is derived from it) and returns it. A mismatched file would sign as someone else.
 */
export function parseKeyFile(value: unknown, what = 'key file'): KeyFile {
  const parsed = KeyFileSchema.safeParse(value);
  if (!parsed.success) throw new BadInputError(describeIssues(what, parsed.error.issues));
  const key = parsed.data;
  let derivedPublic: string;
  try {
    derivedPublic = createPublicKey(privateKeyObject(key.private_key)).export({ format: 'jwk' }).x as string;
  } catch (err) {
    if (err instanceof BadInputError) throw new BadInputError(`${what}: ${err.message}`);
    throw new BadInputError(`${what}: private_key is not an Ed25519 key`);
  }
  if (derivedPublic !== key.public_key) throw new BadInputError(`${what}: private_key does not belong to public_key`);
  const amid = amidFromPublicKey(key.public_key);
  if (amid !== key.amid)
    throw new BadInputError(`${what}: amid ${key.amid} does not match public_key (expected ${amid})`);
  return key;
}

/** Reads and checks a key file written from `circles keygen` output. */
export async function loadKeyFile(path: string): Promise<KeyFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new BadInputError(`key file ${path}: cannot read (${(err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new BadInputError(`key file ${path}: not valid JSON (${jsonSyntaxProblem(text, err)})`);
  }
  return parseKeyFile(json, `key file ${path}`);
}
