/**
 * `executesOnPolicyAlone` decides whether the workflow worker signs a proposal's capability token in the policy
 * snapshot, before the workflow has its verdict. It must agree with the workflow's own first decision
 * (ProposalState: the tier's verdict, then nextStep) for every proposal, or a token would exist for an action the
 * workflow does not execute. Each row is checked against the state machine itself, not against a copied expectation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { parseProposal, type Proposal } from '../../src/contracts/proposal';
import { executesOnPolicyAlone, isShadow, quorumFor, tierFor } from '../../src/policy/classify';
import { ProposalState } from '../../src/workflows/proposal/state';
import { proposal, testPolicy } from '../helpers/system';

let baseDir: string;
beforeAll(() => {
  baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-policy-alone-'));
});
afterAll(() => rmSync(baseDir, { recursive: true, force: true }));

const TYPES = [
  'memory_write',
  'vault_note_create',
  'issue_comment',
  'discord_message',
  'forgejo_pr_create',
  'file_write',
  'exec',
  'web_publish',
  'financial_op',
];

/** Proposals of every type, plus lightweight ones a deny pattern or the vault notes' topic rule refuses. */
function proposals(): Proposal[] {
  return [
    ...TYPES.map((t) => parseProposal(proposal(t))),
    parseProposal(proposal('issue_comment', { parameters: { body: 'key AKIAABCDEFGHIJKLMNOP' } })),
    parseProposal(proposal('vault_note_create', { justification: 'store AKIAABCDEFGHIJKLMNOP for later' })),
    parseProposal(proposal('vault_note_create', { target: { vault: 'main', path: 'private/keys.md' } })),
  ];
}

/** What the workflow does first: `execute` or another step (judge, person, reject, clarify). */
function workflowFirstStep(policy: CompliancePolicy, p: Proposal): string {
  const tier = tierFor(policy, p.action_type);
  if (tier !== 'no-judge' && tier !== 'lightweight-approval') return `judged by ${tier}`;
  const state = new ProposalState(
    p,
    policy,
    'proposal-0123456789abcdef0123456789abcdef',
    tier,
    isShadow(policy, p.action_type),
    quorumFor(policy, tier),
  );
  const now = '2026-12-01T00:00:00.000Z';
  return state.nextStep(tier === 'no-judge' ? state.noJudgeVerdict(now) : state.patternVerdict(now));
}

describe('executesOnPolicyAlone agrees with the workflow', () => {
  const policies: Array<[string, () => CompliancePolicy]> = [
    ['the default policy', () => testPolicy(baseDir)],
    // Human-only types cannot be shadowed (the policy refuses it).
    [
      'every other type in shadow mode',
      () => testPolicy(baseDir, { shadow: TYPES.filter((t) => t !== 'financial_op') }),
    ],
    ['thresholds at 1', () => testPolicy(baseDir, { thresholds: { clarify: 1, human: 1 } })],
  ];

  it.each(policies)('%s', (_name, make) => {
    const policy = make();
    const rows = proposals().map((p) => ({
      type: p.action_type,
      alone: executesOnPolicyAlone(policy, p),
      workflow: workflowFirstStep(policy, p),
    }));
    for (const row of rows) expect(row, row.type).toMatchObject({ alone: row.workflow === 'execute' });
  });

  it('covers both answers: approvals the policy gives alone, and refusals and judged tiers it does not', () => {
    const policy = testPolicy(baseDir);
    const answers = proposals().map((p) => [p.action_type, executesOnPolicyAlone(policy, p)] as const);
    expect(answers.filter(([, alone]) => alone).map(([t]) => t)).toEqual(
      expect.arrayContaining(['memory_write', 'vault_note_create']),
    );
    // The deny-pattern hits and every judged or human tier.
    expect(answers.filter(([, alone]) => !alone).map(([t]) => t)).toEqual(
      expect.arrayContaining(['issue_comment', 'vault_note_create', 'exec', 'financial_op', 'forgejo_pr_create']),
    );
  });
});
