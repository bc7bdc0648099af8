import { describe, expect, it } from 'vitest';
import { generateIdentity, signBytes, newNonce } from '../../src/identity/keys';
import { operatorSigningBytes, refuseOperatorAction, type OperatorAction } from '../../src/circles/operator';

const operator = generateIdentity();
const intruder = generateIdentity();
const agent = generateIdentity();

function signed<T extends object>(action: OperatorAction, input: T, key = operator, at = Date.now()) {
  const nonce = newNonce();
  const signature = signBytes(operatorSigningBytes(action, input, at, nonce), key.private_key);
  return { ...input, operator: { public_key: key.public_key, signed_at: at, nonce, signature } };
}

describe('operator actions on the circle registry', () => {
  const keys = [operator.public_key];

  it('are open when no operator keys are configured (namespace access is the gate)', () => {
    expect(refuseOperatorAction('register', { public_key: agent.public_key } as never, [], Date.now())).toBeNull();
  });

  it('need a fresh signature by an operator key over exactly this action and input', () => {
    const input = { public_key: agent.public_key, org: 'acme' };
    expect(refuseOperatorAction('register', signed('register', input), keys, Date.now())).toBeNull();
    expect(refuseOperatorAction('register', input as never, keys, Date.now())?.reason).toMatch(
      /operator action: sign it/,
    );
    expect(refuseOperatorAction('register', signed('register', input, intruder), keys, Date.now())?.reason).toMatch(
      /not an operator key/,
    );
    // Signed for one action, replayed as another; or with the org changed after signing.
    expect(refuseOperatorAction('retire', signed('register', input) as never, keys, Date.now())?.reason).toMatch(
      /does not verify/,
    );
    expect(
      refuseOperatorAction('register', { ...signed('register', input), org: 'other' } as never, keys, Date.now())
        ?.reason,
    ).toMatch(/does not verify/);
    const stale = signed('register', input, operator, Date.now() - 10 * 60_000);
    expect(refuseOperatorAction('register', stale, keys, Date.now())?.reason).toMatch(/stale/);
  });
});
