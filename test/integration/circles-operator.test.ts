/**
 * With operator keys configured on the worker, registering, retiring and editing the allowlist
 * need an operator's signature: an agent cannot register a fresh key as top-level to leave its
 * circle, nor retire others. Refusals change nothing.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

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
});
