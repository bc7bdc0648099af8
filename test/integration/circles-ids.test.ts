/**
 * Registry lookups with ids that are names of Object prototype properties (`__proto__`,
 * `constructor`, ...) are refused as malformed ids or answered "no such agent", through the client
 * and through raw Queries against the real registry workflow; never `{}`.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { agentQuery, bridgeQuery, discoverQuery, treeQuery } from '../../src/circles/names';
import { CircleRefusedError } from '../../src/circles/errors';
import { BadInputError } from '../../src/contracts/errors';
import { generateIdentity } from '../../src/identity/keys';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

const hostile = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
let env: CirclesEnv;
beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'ids');
});
afterAll(async () => env?.stop());

describe('registry ids that name Object prototype properties', () => {
  it('are refused by the client, naming the field, at every lookup', async () => {
    const registry = env.registry();
    const top = generateIdentity();
    await registry.registerTopLevel({ public_key: top.public_key });
    for (const id of hostile) {
      await expect(registry.agent(id), id).rejects.toThrow(BadInputError);
      await expect(registry.discover(id), id).rejects.toThrow(/requester: expected an AMID/);
      await expect(registry.bridgeFor(id), id).rejects.toThrow(/amid: expected an AMID/);
      await expect(registry.tree(id), id).rejects.toThrow(/circle_id: expected a circle id/);
      await expect(registry.retire(id), id).rejects.toThrow(BadInputError);
    }
    // A well-formed id that is not registered is "no such agent".
    const stranger = generateIdentity().amid;
    expect(await registry.agent(stranger)).toBeNull();
    await expect(registry.discover(stranger)).rejects.toThrow(CircleRefusedError);
    expect((await registry.tree()).agents).toEqual({ total: 1, active: 1, retired: 0 });
  });

  it('are refused by the registry itself when a raw Query bypasses the client', async () => {
    const registry = env.registry();
    await registry.registerTopLevel({ public_key: generateIdentity().public_key });
    const handle = env.client.workflow.getHandle(registry.workflowId);
    for (const id of hostile) {
      await expect(handle.query(agentQuery, id), id).rejects.toThrow(/amid: expected an AMID/);
      await expect(handle.query(discoverQuery, id), id).rejects.toThrow(/requester: expected an AMID/);
      await expect(handle.query(bridgeQuery, id), id).rejects.toThrow(/amid: expected an AMID/);
      await expect(handle.query(treeQuery, { circle_id: id }), id).rejects.toThrow(/circle_id: expected a circle id/);
    }
    expect((await handle.query(treeQuery, {})).agents.total).toBe(1);
  });
});
