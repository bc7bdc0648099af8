/**
 * What both server commands (`dev`, `worker`) read besides the policy, and how they say it: the capability tokens,
 * the circle registry's operator keys, the judge, and the passkey registry the workflow worker re-reads.
 */
import { resolve } from 'node:path';
import type { Env } from '../config/env';
import { processEnv } from '../config/process-env';
import { BadInputError } from '../contracts/errors';
import { PublicKeySchema } from '../contracts/identity';
import type { Logger } from '../contracts/logger';
import type { ApproverPasskeys } from '../contracts/passkey';
import type { CompliancePolicy } from '../contracts/policy';
import type { CapabilityKey } from '../identity/capability-key';
import { PasskeyRegistryReader } from '../identity/passkey-registry';
import { resolveJudge, type ResolvedJudge } from '../judge/discover';

/** The capability tokens the workflow worker signs, in words: with which key, or which issuers, and how long. */
export function describeCapabilities(policy: CompliancePolicy, key: CapabilityKey | undefined): string {
  const ttl = String(policy.spec.capabilities.ttl);
  return key
    ? `tokens signed with key ${key.kid} (public ${key.publicKey}), valid ${ttl}`
    : `${Object.keys(policy.spec.capabilities.issuers).length} issuer key(s) in the policy, valid ${ttl}`;
}

/** `AGENT_JUDGE_CIRCLE_OPERATOR_KEYS`: comma-separated public keys allowed to sign registry operator actions. */
export function circleOperatorKeys(env: Env): string[] {
  const keys = env.AGENT_JUDGE_CIRCLE_OPERATOR_KEYS ?? [];
  for (const k of keys) {
    if (!PublicKeySchema.safeParse(k).success) {
      throw new BadInputError(
        `AGENT_JUDGE_CIRCLE_OPERATOR_KEYS: ${JSON.stringify(k)} is not an Ed25519 public key (unpadded base64url)`,
      );
    }
  }
  return keys;
}

/** The circle registry's operator keys, in words. */
export function describeCircles(keys: readonly string[]): string {
  return keys.length > 0
    ? `registry operator actions need a signature by one of ${keys.length} operator key(s)`
    : 'registry operator actions are unsigned (anyone with namespace access may register or retire agents); ' +
        'set AGENT_JUDGE_CIRCLE_OPERATOR_KEYS';
}

/**
 * Which model judges, or why none does and what then happens to full-judge-review proposals
 * (`spec.judge.withoutModel`). Probes Ollama for at most 1.5 s.
 */
export function describeJudge(policy: CompliancePolicy): Promise<ResolvedJudge> {
  return resolveJudge(policy, processEnv(), { probeTimeoutMs: 1500 });
}

/** The workflow worker's view of the passkey registry file: re-read when it changes (docs/inbox.md). */
export function passkeyReader(path: string, logger: Logger): () => ApproverPasskeys {
  const reader = new PasskeyRegistryReader(resolve(path), logger);
  return () => reader.current();
}
