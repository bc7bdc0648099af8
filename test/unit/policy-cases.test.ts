/**
 * `agent-judge policy test`: the default policy's own cases (policies/default.cases.yaml) pass against it, a policy
 * change that changes one decision fails with a diff naming the case, its line and the field, and a bad cases file is
 * refused with its line and field.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/contracts/errors';
import { DEFAULT_POLICY_PATH, defaultPolicyWith, loadPolicy } from '../../src/policy/load';
import { loadCases, renderCaseResults, runCases } from '../../src/replay/cases';

const CASES = join(DEFAULT_POLICY_PATH, '..', 'default.cases.yaml');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-cases-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the default policy cases', () => {
  it('all pass against the default policy', async () => {
    const cases = await loadCases(CASES);
    expect(cases.length).toBeGreaterThanOrEqual(15);
    const results = await runCases(cases, await loadPolicy({ path: DEFAULT_POLICY_PATH, env: {} }), process.cwd());
    const failed = results.filter((r) => !r.ok);
    expect(failed, renderCaseResults(CASES, failed)).toEqual([]);
  });

  it('fail with a diff when the policy changes a decision', async () => {
    const cases = await loadCases(CASES);
    const base = defaultPolicyWith({}, { baseDir: process.cwd() });
    // A candidate that stops refusing AWS keys in lightweight actions.
    const looser = defaultPolicyWith(
      {
        lightweight: {
          ...base.spec.lightweight,
          deny: base.spec.lightweight.deny.filter((r) => !r.name.includes('aws')),
        },
      },
      { baseDir: process.cwd() },
    );
    const results = await runCases(cases, looser, process.cwd());
    const failed = results.filter((r) => !r.ok);
    expect(failed.map((r) => r.name)).toEqual(['an issue comment carrying an AWS key is refused by the deny pattern']);
    expect(failed[0]!.diffs).toEqual([
      { field: 'verdict', expected: 'REJECT', actual: 'APPROVE' },
      { field: 'rule', expected: 'secrets.aws-access-key', actual: 'patterns.clean' },
    ]);
    const text = renderCaseResults('default.cases.yaml', results);
    expect(text).toMatch(/FAIL an issue comment carrying an AWS key .*\(default\.cases\.yaml:\d+\)/);
    expect(text).toContain('verdict: expected REJECT, got APPROVE');
    expect(text).toContain(`${results.length - 1} passed, 1 failed`);
  });
});

describe('a cases file', () => {
  it('is refused with its line and field when a case is malformed', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'cases:\n  - name: ok\n    proposal: { action_type: memory_write }\n    expect: { verdict: APPROVE }\n' +
        '  - name: bad\n    proposal: {}\n    expect: { verdict: MAYBE }\n',
    );
    const err = await loadCases(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyError);
    expect((err as Error).message).toMatch(/bad\.yaml:5: .*cases\.1\.expect\.verdict/);
  });

  it('reports an invalid proposal as a failing case naming the field', async () => {
    const file = join(dir, 'invalid-proposal.yaml');
    writeFileSync(
      file,
      'cases:\n  - name: amount must be positive\n    proposal:\n      action_type: financial_op\n' +
        '      justification: x\n      target: { account: ops }\n      parameters: { amount: -5, currency: EUR }\n' +
        '    expect: { verdict: person }\n',
    );
    const [r] = await runCases(await loadCases(file), defaultPolicyWith({}, { baseDir: dir }), dir);
    expect(r).toMatchObject({ ok: false, line: 2, diffs: [{ field: 'proposal' }] });
    expect(r!.diffs[0]!.actual).toContain('proposal.parameters.amount');
  });
});
