/** Builders for signed circle statements, so tests read like the protocol. */
import { randomUUID } from 'node:crypto';
import { amidFromPublicKey } from '../../src/identity/verify';
import { generateIdentity, newNonce } from '../../src/identity/keys';
import { signStatement } from '../../src/circles/sign';
import type { KeyFile } from '../../src/contracts/identity';
import type { SignedKnock, SignedMembership } from '../../src/circles/schemas';
import { RegistryState } from '../../src/circles/state';
import type { RegistryConfig } from '../../src/circles/config';
import type { GovernanceEvent } from '../../src/circles/types';

export function knockBy(key: KeyFile, to: string, opts: { time?: number; nonce?: string } = {}): SignedKnock {
  const statement = { from: key.amid, to, time: opts.time ?? Date.now(), nonce: opts.nonce ?? newNonce() };
  return { statement, signature: signStatement('knock', statement, key.private_key) };
}

export function membershipBy(
  parent: KeyFile,
  childPublicKey: string,
  circleId: string,
  opts: { time?: number; childAmid?: string; parentAmid?: string } = {},
): SignedMembership {
  const statement = {
    child_amid: opts.childAmid ?? amidFromPublicKey(childPublicKey),
    child_public_key: childPublicKey,
    circle_id: circleId,
    parent_amid: opts.parentAmid ?? parent.amid,
    time: opts.time ?? Date.now(),
  };
  return { statement, signature: signStatement('membership', statement, parent.private_key) };
}

/** A pure registry plus helpers to grow a tree in it. */
export function newState(config: Partial<RegistryConfig> = {}) {
  const events: GovernanceEvent[] = [];
  const state = new RegistryState(config, { newCircleId: randomUUID, onEvent: (e) => events.push(e) });
  const now = Date.now();
  const top = (org?: string) => {
    const key = generateIdentity();
    const r = state.registerTopLevel({ public_key: key.public_key, ...(org ? { org } : {}) }, now);
    if (!r.ok) throw new Error(r.refusal.reason);
    return { key, circle: r.value.circle_id };
  };
  const sub = (parent: { key: KeyFile; circle: string }) => {
    const key = generateIdentity();
    const r = state.spawnSubAgent(membershipBy(parent.key, key.public_key, parent.circle, { time: now }), now);
    if (!r.ok) throw new Error(r.refusal.reason);
    return { key, circle: r.value.circle_id };
  };
  return { state, events, now, top, sub };
}
