/**
 * With operator keys configured on the worker, registering, retiring and editing the allowlist
 * need an operator's signature: an agent cannot register a fresh key as top-level to leave its
 * circle, nor retire others. Refusals change nothing.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { allowPairUpdate } from '../../src/circles/names';
import { operatorSigningBytes } from '../../src/circles/operator';
import type { PairInput } from '../../src/circles/schemas';
import { generateIdentity, newNonce, signBytes } from '../../src/identity/keys';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';
import { FailureType } from '../../src/contracts/lifecycle';

const operator = generateIdentity();
const intruder = generateIdentity();
let env: CirclesEnv;
beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'operator', [
    operator.public_key,
  ]);
});
afterAll(async () => env?.stop());

describe('operator-signed registry actions', () => {
  it('refuses unsigned and wrongly signed operator actions; the operator key works', async () => {
    const id = `circle-registry-operator-${Date.now()}`;
    const asOperator = env.registry(undefined, operator, id);
    const asAnyone = env.registry(undefined, undefined, id);
    const asIntruder = env.registry(undefined, intruder, id);
    const agent = generateIdentity();

    await expect(asAnyone.registerTopLevel({ public_key: agent.public_key })).rejects.toThrow(
      /operator action: sign it with an operator key/,
    );
    await expect(asIntruder.registerTopLevel({ public_key: agent.public_key })).rejects.toThrow(/not an operator key/);
    expect(await asOperator.agent(agent.amid)).toBeNull();

    const top = await asOperator.registerTopLevel({ public_key: agent.public_key });
    expect(top).toMatchObject({ amid: agent.amid, role: 'top-level' });
    const other = generateIdentity();
    await asOperator.registerTopLevel({ public_key: other.public_key, org: 'partner' });
    await expect(asAnyone.allowPair(agent.amid, other.amid)).rejects.toThrow(/operator action/);
    await expect(asIntruder.retire(agent.amid)).rejects.toThrow(/not an operator key/);
    expect((await asOperator.agent(agent.amid))?.status).toBe('active');
    expect((await asOperator.retire(agent.amid)).retired).toContain(agent.amid);
  });

  it('a captured signed allow-pair cannot be replayed: a second delivery is refused and changes nothing', async () => {
    const id = `circle-registry-operator-replay-${Date.now()}`;
    const asOperator = env.registry(undefined, operator, id);
    const acme = generateIdentity();
    const partner = generateIdentity();
    await asOperator.registerTopLevel({ public_key: acme.public_key, org: 'acme' });
    await asOperator.registerTopLevel({ public_key: partner.public_key, org: 'partner' });

    // What an eavesdropper on the namespace captures: one complete, validly signed Update input.
    const pair = { a: acme.amid, b: partner.amid };
    const signedAt = Date.now();
    const nonce = newNonce();
    const captured: PairInput = {
      ...pair,
      operator: {
        public_key: operator.public_key,
        signed_at: signedAt,
        nonce,
        signature: signBytes(operatorSigningBytes('allow-pair', pair, signedAt, nonce), operator.private_key),
      },
    };
    const handle = env.client.workflow.getHandle(id);
    // Each delivery is a new Update (its own random update id), as a replayer would send it.
    expect(await handle.executeUpdate(allowPairUpdate, { args: [captured] })).toEqual({
      pair: [acme.amid, partner.amid],
      allowed: true,
    });
    expect(await asOperator.knock({ key: acme, to: partner.amid })).toMatchObject({ allowed: true });

    // The operator withdraws the pair; replaying the captured allow-pair must not bring it back.
    await asOperator.revokePair(acme.amid, partner.amid);
    const replay = await handle.executeUpdate(allowPairUpdate, { args: [captured] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(replay).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (replay as WorkflowUpdateFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(FailureType.CircleRefused);
    expect((cause as ApplicationFailure).message).toMatch(/operator nonce .* was already used/);
    expect((cause as ApplicationFailure).details?.[0]).toBe('replay');

    expect((await asOperator.tree()).allowlist).toEqual([]);
    expect(await asOperator.knock({ key: acme, to: partner.amid })).toMatchObject({
      allowed: false,
      code: 'not-allowlisted',
    });
  });
});
