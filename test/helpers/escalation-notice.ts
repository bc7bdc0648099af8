/** A realistic EscalationNotice for rendering and notifier tests. */
import { createHash } from 'node:crypto';
import type { Proposal } from '../../src/contracts/proposal';
import type { EscalationNotice } from '../../src/escalation/notifier';

export function workflowIdFor(seed: string): string {
  return `proposal-${createHash('sha256').update(seed).digest('hex').slice(0, 32)}`;
}

export function sampleNotice(
  overrides: Omit<Partial<EscalationNotice>, 'proposal'> & { proposal?: Partial<Proposal> } = {},
): EscalationNotice {
  const { proposal: p, ...rest } = overrides;
  const proposal: Proposal = {
    proposal_id: 'pay-invoice-17',
    agent_id: '@finance',
    action_type: 'financial_op',
    target: { account: 'acme-payroll' },
    parameters: { amount: 1250, currency: 'EUR', memo: 'Invoice 17' },
    justification: 'Invoice 17 is due today; the contract says net 30.',
    cited_evidence: [
      { type: 'invoice', url: 'https://billing.example.org/invoices/17', title: 'Invoice 17' },
      { type: 'contract', source: 'vault:contracts/acme.md' },
    ],
    scope_claim: { files_only: ['ledger/2025.csv'], max_lines: 3 },
    ...p,
  };
  return {
    workflow_id: workflowIdFor(proposal.proposal_id),
    proposal,
    tier: 'human-only',
    verdict: null,
    dispute: {
      reason: 'tier human-only: a person must decide',
      actor_position: proposal.justification,
      judge_position: 'no judge review for this tier',
      judge_confidence: null,
    },
    deadline: '2030-01-01T12:00:00.000Z',
    approvers: ['scott', 'discord:100000000000000001'],
    approvals_needed: 1,
    ...rest,
  };
}
