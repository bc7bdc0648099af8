/**
 * Issue 28: the pure parts of "one policy in force": which fields of two policy documents differ, what a comparison
 * says, and how the record of published versions grows (bounded) and refuses malformed publications.
 */
import { describe, expect, it } from 'vitest';
import {
  applyPublication,
  MAX_POLICY_VERSIONS,
  refusePublication,
  type PolicyInForce,
  type PolicyPublication,
} from '../../src/contracts/policy-in-force';
import { comparePolicies, documentDifferences, policyDocumentDigest } from '../../src/policy/agreement';

const doc = (roots: string[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'agent-judge.dev/v1alpha1',
  spec: { files: { roots }, thresholds: { clarify: 0.6, human: 0.3 }, ...extra },
});

function publication(over: Partial<PolicyPublication> = {}): PolicyPublication {
  const document = doc(['.agent-judge/workspace']);
  return {
    policy_sha256: 'a'.repeat(64),
    document_sha256: policyDocumentDigest(document),
    document,
    name: 'default',
    source: '/opt/agent-judge/policies/default.yaml',
    publisher: '1@host (workflow)',
    published_at: '2026-12-01T00:00:00.000Z',
    ...over,
  };
}

describe('documentDifferences', () => {
  it('walks mappings, compares lists and scalars whole, and names added or removed keys', () => {
    expect(documentDifferences(doc(['/a']), doc(['/a']))).toEqual([]);
    expect(documentDifferences(doc(['/a']), doc(['/b']))).toEqual(['spec.files.roots']);
    expect(documentDifferences(doc(['/a'], { shadow: [] }), doc(['/a']))).toEqual(['spec.shadow']);
    expect(documentDifferences({ a: { b: 1, c: 2 } }, { a: { c: 3, b: 1 } })).toEqual(['a.c']);
  });

  it('the digest ignores key order', () => {
    expect(policyDocumentDigest({ a: 1, b: { c: 2, d: 3 } })).toBe(policyDocumentDigest({ b: { d: 3, c: 2 }, a: 1 }));
  });
});

describe('comparePolicies', () => {
  const record = applyPublication(null, publication()).record;

  it("compares the approvers each side accepts (AGENT_JUDGE_APPROVERS included), not the files' lists", () => {
    const withApprovers = (file: string[]) => doc(['.agent-judge/workspace'], { escalation: { approvers: file } });
    const theirsDoc = withApprovers([]);
    const theirs = applyPublication(
      null,
      publication({ document: theirsDoc, document_sha256: policyDocumentDigest(theirsDoc), approvers: ['scott'] }),
    ).record;
    const mine = (file: string[], effective: string[]) => {
      const document = withApprovers(file);
      return { source: 'mine.yaml', document, document_sha256: policyDocumentDigest(document), approvers: effective };
    };
    // The file lists scott; the workers got scott from their environment: the same approvers.
    expect(comparePolicies(mine(['scott'], ['scott']), theirs, 'agent-judge').state).toBe('same');
    // Nobody here, scott there: named with the effective lists, not "theirs []".
    const differs = comparePolicies(mine([], []), theirs, 'agent-judge');
    expect(differs).toMatchObject({ state: 'differs', differences: ['spec.escalation.approvers'] });
    expect(differs.message).toContain('spec.escalation.approvers (yours [], theirs ["scott"])');
    // An older publisher (no approvers): the documents alone, as before.
    const old = comparePolicies(mine(['scott'], ['scott']), record, 'agent-judge');
    expect(old.differences).toContain('spec.escalation');
  });

  it('refuses published approvers or an inbox URL of the wrong shape', () => {
    expect(refusePublication(publication({ approvers: ['scott'], inbox_url: 'http://localhost:8787' }))).toBeNull();
    expect(refusePublication({ ...publication(), approvers: 'scott' })?.reason).toMatch(/^approvers: /);
    expect(refusePublication({ ...publication(), approvers: [''] })?.reason).toMatch(/^approvers: /);
    expect(refusePublication({ ...publication(), inbox_url: 'javascript:alert(1)' })?.reason).toMatch(/^inbox_url: /);
  });

  it('the same document: same, naming the version in force', () => {
    const mine = { source: 'mine.yaml', document: doc(['.agent-judge/workspace']), document_sha256: '' };
    mine.document_sha256 = policyDocumentDigest(mine.document);
    const a = comparePolicies(mine, record, 'agent-judge');
    expect(a).toMatchObject({ state: 'same', version: 1, differences: [] });
    expect(a.message).toMatch(/^policy mine\.yaml is the one the workflow workers on agent-judge judge with: /);
  });

  it('another document: differs, with the fields and both values', () => {
    const mine = { source: 'mine.yaml', document: doc(['/srv/ws']), document_sha256: '' };
    mine.document_sha256 = policyDocumentDigest(mine.document);
    const a = comparePolicies(mine, record, 'agent-judge');
    expect(a.state).toBe('differs');
    expect(a.differences).toEqual(['spec.files.roots']);
    expect(a.message).toContain(
      'WARNING: the workflow workers on agent-judge judge with another policy than mine.yaml',
    );
    expect(a.message).toContain('Differing: spec.files.roots (yours ["/srv/ws"], theirs [".agent-judge/workspace"])');
  });

  it('nothing published: unknown, saying it cannot tell', () => {
    const a = comparePolicies({ source: 'mine.yaml', document: {}, document_sha256: 'x' }, null, 'q');
    expect(a.state).toBe('unknown');
    expect(a.message).toMatch(/^no workflow worker on task queue q has published its policy/);
  });
});

describe('the record of versions', () => {
  it('the same digest again keeps the version; another is the next version, naming the previous', () => {
    const one = applyPublication(null, publication());
    expect(one.published).toEqual({ version: 1, changed: false, previous: null });
    const again = applyPublication(one.record, publication({ publisher: '2@other (workflow)' }));
    expect(again.published).toEqual({ version: 1, changed: false, previous: null });
    expect(again.record.versions[0]!.publishers).toEqual(['1@host (workflow)', '2@other (workflow)']);
    const two = applyPublication(again.record, publication({ policy_sha256: 'b'.repeat(64) }));
    expect(two.published).toMatchObject({ version: 2, changed: true, previous: { version: 1 } });
    expect(two.record.current.version).toBe(2);
  });

  it(`keeps the last ${MAX_POLICY_VERSIONS} versions`, () => {
    let last: PolicyInForce | null = null;
    for (let i = 0; i < MAX_POLICY_VERSIONS + 5; i++) {
      last = applyPublication(last, publication({ policy_sha256: i.toString(16).padStart(64, '0') })).record;
    }
    const record = last as unknown as PolicyInForce;
    expect(record.versions).toHaveLength(MAX_POLICY_VERSIONS);
    expect(record.versions[0]!.version).toBe(6);
    expect(record.current.version).toBe(MAX_POLICY_VERSIONS + 5);
  });

  it('refuses malformed publications, naming the field', () => {
    expect(refusePublication(publication())).toBeNull();
    expect(refusePublication(null)?.reason).toBe('expected an object');
    expect(refusePublication(publication({ document_sha256: 'ABC' }))?.reason).toBe(
      'document_sha256: expected 64 lowercase hex digits',
    );
    expect(refusePublication(publication({ source: '' }))?.reason).toBe(
      'source: expected a string of 1 to 1024 characters',
    );
    expect(refusePublication(publication({ document: 'x'.repeat(10) }))?.reason).toBe(
      'document: expected the policy document',
    );
    expect(refusePublication(publication({ document: { big: 'x'.repeat(300_000) } }))?.reason).toMatch(
      /^document: larger than/,
    );
  });
});
