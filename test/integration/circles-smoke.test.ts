import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { generateIdentity } from '../../src/circles/keys';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

let env: CirclesEnv;
beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'smoke');
});
afterAll(async () => env?.stop());

describe('smoke', () => {
  it('registers, spawns and knocks', async () => {
    const reg = env.registry();
    const a = generateIdentity();
    const sub = generateIdentity();
    const r = await reg.registerTopLevel({ public_key: a.public_key });
    expect(r.amid).toBe(a.amid);
    const s = await reg.spawnSubAgent({ parentKey: a, childPublicKey: sub.public_key });
    expect(s.circle_id).toBe(r.circle_id);
    const k = await reg.knock({ key: sub, to: a.amid });
    expect(k).toMatchObject({ allowed: true, code: 'parent' });
  });
});
