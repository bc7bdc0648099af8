import { describe, expect, it } from 'vitest';
import { discoverFor } from '../../src/circles/discovery';
import { decideKnock, pairKey } from '../../src/circles/policy';
import { trustCirclePrompt } from '../../src/circles/prompt';
import type { AgentRecord } from '../../src/circles/types';

const amid = (c: string) => `amid:${c.repeat(40)}`;
const rec = (
  id: string,
  role: AgentRecord['role'],
  circle: string,
  parent: string | null,
  org = 'default',
): AgentRecord => ({
  amid: amid(id),
  public_key: 'k',
  role,
  circle_id: circle,
  parent_amid: parent ? amid(parent) : null,
  status: 'active',
  org,
  registered_at: 0,
  retired_at: null,
});

// Seed 003's cast: Parent A with sub-tree a1 -> a2, Parent B with b1, and an external top-level agent of another org.
const A = rec('a', 'top-level', 'circle-A', null);
const a1 = rec('1', 'sub-agent', 'circle-A', 'a');
const a2 = rec('2', 'sub-agent', 'circle-A', '1');
const B = rec('b', 'top-level', 'circle-B', null);
const b1 = rec('3', 'sub-agent', 'circle-B', 'b');
const X = rec('e', 'top-level', 'circle-X', null, 'partner');
const all = [A, a1, a2, B, b1, X];
const owner = (c: string) => ({ 'circle-A': A.amid, 'circle-B': B.amid, 'circle-X': X.amid })[c];

describe('decideKnock', () => {
  it('sub-agents reach their parent and their own circle only', () => {
    expect(decideKnock(a1, A, false)).toMatchObject({ allowed: true, code: 'parent' });
    expect(decideKnock(a2, a1, false)).toMatchObject({ allowed: true, code: 'parent' });
    expect(decideKnock(a2, A, false)).toMatchObject({ allowed: true, code: 'same-circle' });
    expect(decideKnock(a1, a2, false)).toMatchObject({ allowed: true, code: 'same-circle' });
    const toB1 = decideKnock(a1, b1, false, owner);
    expect(toB1.allowed).toBe(false);
    expect(toB1.code).toBe('cross-circle');
    expect(toB1.reason).toContain('may knock only its parent and its own circle circle-A');
    expect(toB1.reason).toContain(`request_cross_circle via ${A.amid}`);
    expect(decideKnock(a1, B, false)).toMatchObject({ allowed: false, code: 'cross-circle' });
    expect(decideKnock(a1, X, true)).toMatchObject({ allowed: false, code: 'cross-circle' });
  });

  it('top-level agents reach top-level peers of their organisation and their own sub-tree', () => {
    expect(decideKnock(A, B, false)).toMatchObject({ allowed: true, code: 'top-level-peer' });
    expect(decideKnock(A, a2, false)).toMatchObject({ allowed: true, code: 'own-circle' });
    const toB1 = decideKnock(A, b1, true, owner);
    expect(toB1).toMatchObject({ allowed: false, code: 'cross-circle' });
    expect(toB1.reason).toContain(`only through that circle's parent ${B.amid}`);
  });

  it('across organisations only an allowlisted pair connects', () => {
    const denied = decideKnock(A, X, false);
    expect(denied).toMatchObject({ allowed: false, code: 'not-allowlisted' });
    expect(denied.reason).toContain('(organisation default)');
    expect(denied.reason).toContain('(organisation partner)');
    expect(decideKnock(X, A, true)).toMatchObject({ allowed: true, code: 'allowlisted-pair' });
  });

  it('retired agents, unknown targets and self-knocks are denied with a reason', () => {
    expect(decideKnock({ ...a1, status: 'retired' }, A, false)).toMatchObject({
      allowed: false,
      code: 'caller-retired',
    });
    expect(decideKnock(a1, { ...A, status: 'retired' }, false)).toMatchObject({
      allowed: false,
      code: 'target-retired',
    });
    expect(decideKnock(a1, undefined, false)).toMatchObject({
      allowed: false,
      code: 'unknown-target',
      reason: 'target is not a registered agent',
    });
    expect(decideKnock(A, A, false)).toMatchObject({ allowed: false, code: 'self' });
  });

  it('pair keys are unordered', () => {
    expect(pairKey(A.amid, B.amid)).toBe(pairKey(B.amid, A.amid));
  });
});

describe('discoverFor', () => {
  const none = () => false;
  const ids = (list: { amid: string }[]) => list.map((a) => a.amid).sort();

  it('a sub-agent sees its parent and its circle, nothing else', () => {
    expect(ids(discoverFor(a1, all, none))).toEqual([A.amid, a2.amid].sort());
    expect(ids(discoverFor(b1, all, none))).toEqual([B.amid]);
  });

  it('a top-level agent sees reachable top-level peers and its own sub-tree', () => {
    expect(ids(discoverFor(A, all, none))).toEqual([a1.amid, a2.amid, B.amid].sort());
    expect(ids(discoverFor(A, all, (x, y) => pairKey(x, y) === pairKey(A.amid, X.amid)))).toEqual(
      [a1.amid, a2.amid, B.amid, X.amid].sort(),
    );
  });

  it('returns the documented fields and hides retired agents', () => {
    const seen = discoverFor(a2, [...all, { ...rec('9', 'sub-agent', 'circle-A', 'a'), status: 'retired' }], none);
    expect(seen).toContainEqual({ amid: a1.amid, role: 'sub-agent', circle_id: 'circle-A', parent_amid: A.amid });
    expect(ids(seen)).toEqual([A.amid, a1.amid].sort());
    expect(discoverFor({ ...a1, status: 'retired' }, all, none)).toEqual([]);
  });
});

describe('trustCirclePrompt', () => {
  it('names the parent, the siblings and the rule', () => {
    const text = trustCirclePrompt({
      self: { amid: a1.amid, circle_id: 'circle-A', parent_amid: A.amid },
      peers: [{ amid: A.amid }, { amid: a2.amid }],
      names: { [A.amid]: 'orchestrator', [a2.amid]: 'viz' },
    });
    expect(text).toContain('trust circle circle-A');
    expect(text).toContain(`Your parent is orchestrator (${A.amid})`);
    expect(text).toContain(`The other agents of your circle are: viz (${a2.amid}).`);
    expect(text).toContain('only your parent and the agents of your own circle');
    expect(text).toContain('request_cross_circle(target, message)');
  });

  it('says so when the sub-agent has no siblings', () => {
    const text = trustCirclePrompt({
      self: { amid: b1.amid, circle_id: 'circle-B', parent_amid: B.amid },
      peers: [{ amid: B.amid }],
    });
    expect(text).toContain('You have no other peers in your circle right now.');
    expect(text).toContain(`Your parent is ${B.amid}.`);
  });
});
