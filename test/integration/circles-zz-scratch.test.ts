import { afterAll, beforeAll, it, expect, inject } from 'vitest';
import { generateIdentity } from '../../src/circles/keys';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';
let env: CirclesEnv;
beforeAll(async () => { env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'scratch'); });
afterAll(async () => env?.stop());
it('flood', async () => {
  const reg = env.registry({ maxUpdatesPerRun: 50 });
  const A = generateIdentity();
  await reg.registerTopLevel({ public_key: A.public_key });
  const subs = await Promise.all([...Array(20)].map(async () => { const k = generateIdentity(); await reg.spawnSubAgent({ parentKey: A, childPublicKey: k.public_key }); return k; }));
  const t = performance.now();
  const r = await Promise.all([...Array(300)].map((_, i) => reg.knock({ key: subs[i % 20]!, to: A.amid })));
  console.log('300 knocks all at once', performance.now() - t, r.filter((x) => x.allowed).length, (await reg.runInfo()).generation);
  expect(r.every((x) => x.allowed)).toBe(true);
}, 120000);
