/**
 * Spoofing and abuse against the real registry: each attempt is denied with a clear reason, and
 * the registry's agents and allowlist are exactly as before.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import { signStatement } from '../../src/circles/sign';
import { knockUpdate, registerTopLevelUpdate, spawnSubAgentUpdate } from '../../src/circles/names';
import type { KeyFile } from '../../src/contracts/identity';
import type { CircleRegistryClient } from '../../src/client/circles';
import { BadInputError } from '../../src/contracts/errors';
import { knockBy, membershipBy } from '../helpers/circles-fixtures';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

let env: CirclesEnv;
let reg: CircleRegistryClient;
let A: KeyFile & { circle: string };
let B: KeyFile & { circle: string };
let a1: KeyFile & { circle: string };
let b1: KeyFile & { circle: string };

beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'abuse');
  reg = env.registry();
  const top = async () => {
    const key = generateIdentity();
    return { ...key, circle: (await reg.registerTopLevel({ public_key: key.public_key })).circle_id };
  };
  const sub = async (parent: KeyFile & { circle: string }) => {
    const key = generateIdentity();
    return {
      ...key,
      circle: (await reg.spawnSubAgent({ parentKey: parent, childPublicKey: key.public_key })).circle_id,
    };
  };
  A = await top();
  B = await top();
  a1 = await sub(A);
  b1 = await sub(B);
});
afterAll(async () => env?.stop());

/** Agents and allowlist, which no refused attempt may change. */
async function registryContent() {
  const d = await reg.dump();
  return { agents: d.agents, allowlist: d.allowlist };
}

async function expectUnchanged(attempt: () => Promise<unknown>) {
  const before = await registryContent();
  const beforeEvents = (await reg.events()).total;
  const result = await attempt();
  expect(await registryContent()).toEqual(before);
  return { result, newEvents: (await reg.events()).total - beforeEvents };
}

describe('membership spoofing', () => {
  it('a sub-agent claiming another circle (signing as its parent) is refused as a bad signature', async () => {
    const child = generateIdentity();
    const { result, newEvents } = await expectUnchanged(() =>
      reg.spawnSigned(membershipBy(a1, child.public_key, B.circle, { parentAmid: B.amid })).catch((e: unknown) => e),
    );
    expect(result).toMatchObject({ name: 'CircleRefusedError', code: 'bad-signature' });
    expect((result as Error).message).toBe(
      `membership statement is not signed by the registered key of parent ${B.amid}`,
    );
    expect(newEvents).toBe(1);
  });

  it('a real parent cannot place a child in another circle', async () => {
    const child = generateIdentity();
    const { result } = await expectUnchanged(() =>
      reg
        .spawnSubAgent({ parentKey: A, childPublicKey: child.public_key, circleId: B.circle })
        .catch((e: unknown) => e),
    );
    expect(result).toMatchObject({ code: 'circle-mismatch' });
    expect((result as Error).message).toBe(
      `statement claims circle ${B.circle} but parent ${A.amid} is in circle ${A.circle}`,
    );
  });

  it('a statement signed by the wrong parent is refused', async () => {
    const child = generateIdentity();
    const { result } = await expectUnchanged(() =>
      reg.spawnSigned(membershipBy(B, child.public_key, A.circle, { parentAmid: A.amid })).catch((e: unknown) => e),
    );
    expect(result).toMatchObject({ code: 'bad-signature' });
  });

  it('a stale membership statement is refused', async () => {
    const { result } = await expectUnchanged(() =>
      reg
        .spawnSubAgent({ parentKey: A, childPublicKey: generateIdentity().public_key, time: Date.now() - 3_600_000 })
        .catch((e: unknown) => e),
    );
    expect(result).toMatchObject({ code: 'stale' });
    expect((result as Error).message).toMatch(/is 3600s old; the freshness window is 300s$/);
  });

  it('a child AMID that does not belong to the child key is refused', async () => {
    const { result } = await expectUnchanged(() =>
      reg
        .spawnSigned(membershipBy(A, generateIdentity().public_key, A.circle, { childAmid: generateIdentity().amid }))
        .catch((e: unknown) => e),
    );
    expect(result).toMatchObject({ code: 'amid-mismatch' });
  });
});

describe('KNOCK abuse', () => {
  it('a replayed KNOCK is denied (the original was allowed)', async () => {
    const knock = knockBy(a1, A.amid);
    expect(await reg.knockSigned(knock)).toMatchObject({ allowed: true });
    const { result, newEvents } = await expectUnchanged(() => reg.knockSigned(knock));
    expect(result).toMatchObject({ allowed: false, code: 'replay' });
    expect((result as { reason: string }).reason).toBe(
      `nonce ${knock.statement.nonce} was already used by ${a1.amid}: replayed message`,
    );
    expect(newEvents).toBe(1);
  });

  it('a stale KNOCK and one from the future are denied', async () => {
    expect(await reg.knock({ key: a1, to: A.amid, time: Date.now() - 600_000 })).toMatchObject({
      allowed: false,
      code: 'stale',
    });
    const future = await reg.knock({ key: a1, to: A.amid, time: Date.now() + 600_000 });
    expect(future).toMatchObject({ allowed: false, code: 'stale' });
    expect(future.reason).toMatch(/in the future; the freshness window is 30s$/);
  });

  it("a KNOCK signed with someone else's key is denied", async () => {
    const statement = { from: a1.amid, to: A.amid, time: Date.now(), nonce: 'x'.repeat(22) };
    const r = await reg.knockSigned({ statement, signature: signStatement('knock', statement, b1.private_key) });
    expect(r).toEqual({
      allowed: false,
      code: 'bad-signature',
      reason: `knock is not signed by the registered key of ${a1.amid}`,
    });
  });

  it('an unregistered caller is denied', async () => {
    const r = await reg.knock({ key: generateIdentity(), to: A.amid });
    expect(r).toMatchObject({ allowed: false, code: 'unknown-caller' });
  });

  it('retired agents can neither knock nor be knocked, and the whole sub-tree goes with them', async () => {
    const P = generateIdentity();
    const circle = (await reg.registerTopLevel({ public_key: P.public_key })).circle_id;
    const c = generateIdentity();
    await reg.spawnSubAgent({ parentKey: P, childPublicKey: c.public_key });
    const cc = generateIdentity();
    await reg.spawnSubAgent({ parentKey: { ...c }, childPublicKey: cc.public_key });
    expect(await reg.retire(P.amid)).toEqual({ retired: [P.amid, c.amid, cc.amid] });
    expect(await reg.knock({ key: cc, to: c.amid })).toMatchObject({
      allowed: false,
      code: 'caller-retired',
      reason: `caller ${cc.amid} is retired`,
    });
    expect(await reg.knock({ key: A, to: P.amid })).toMatchObject({ allowed: false, code: 'target-retired' });
    await expect(
      reg.spawnSubAgent({ parentKey: P, childPublicKey: generateIdentity().public_key, circleId: circle }),
    ).rejects.toMatchObject({ code: 'parent-retired' });
  });
});

describe('bad keys and malformed input', () => {
  it('the client refuses a bad public key before anything is sent', async () => {
    await expect(reg.registerTopLevel({ public_key: 'not-a-key' })).rejects.toThrow(BadInputError);
    await expect(reg.registerTopLevel({ public_key: 'not-a-key' })).rejects.toThrow(
      /public_key: expected an Ed25519 public key/,
    );
  });

  it('the registry itself refuses malformed Updates that bypass the client, and changes nothing', async () => {
    const handle = env.client.workflow.getHandle(reg.workflowId);
    const attempts: Array<[() => Promise<unknown>, RegExp]> = [
      [
        () => handle.executeUpdate(registerTopLevelUpdate, { args: [{ public_key: 'A'.repeat(43) }] }),
        new RegExp(
          'register.public_key: not a valid Ed25519 public key ' +
            '\\(expected a curve point outside the small-order subgroup\\)',
        ),
      ],
      [
        () =>
          handle.executeUpdate(knockUpdate, {
            args: [{ statement: { from: a1.amid, to: A.amid, time: Date.now() }, signature: 'x' } as never],
          }),
        /knock.statement.nonce/,
      ],
      [
        () =>
          handle.executeUpdate(knockUpdate, {
            args: [
              { statement: { from: 'me', to: A.amid, time: 1, nonce: 'y'.repeat(22) }, signature: 'x'.repeat(86) },
            ],
          }),
        /knock.statement.from: expected an AMID/,
      ],
      [
        () =>
          handle.executeUpdate(spawnSubAgentUpdate, {
            args: [{ statement: { extra: 1 }, signature: 'x'.repeat(86) } as never],
          }),
        /spawn.statement/,
      ],
    ];
    for (const [attempt, message] of attempts) {
      const { result, newEvents } = await expectUnchanged(() => attempt().catch((e: unknown) => e));
      expect(result).toBeInstanceOf(WorkflowUpdateFailedError);
      const cause = (result as WorkflowUpdateFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('BadInput');
      expect((cause as ApplicationFailure).message).toMatch(message);
      expect(newEvents).toBe(0);
    }
    // The registry is still alive and deciding.
    expect(await reg.knock({ key: a1, to: A.amid })).toMatchObject({ allowed: true });
  });

  it('registering the same key twice is refused', async () => {
    await expect(reg.registerTopLevel({ public_key: A.public_key })).rejects.toMatchObject({
      name: 'CircleRefusedError',
      code: 'already-registered',
    });
  });
});
