/**
 * Issue 28: `propose`, `status`, `clarify` and `decide` print a short summary on a terminal (status, verdict, reason,
 * what happens next, the command to follow) and the full JSON with `--json` or when stdout is not a terminal.
 */
import { describe, expect, it } from 'vitest';
import { chooseOutputFormat, renderOutcome, renderSubmitted } from '../../src/cli/outcome-text';
import type { ProposalOutcome } from '../../src/contracts/status';
import type { Verdict } from '../../src/contracts/verdict';
import { BadInputError } from '../../src/contracts/errors';

const ID = 'f0e1d2c3-b4a5-4697-8877-665544332211';
const WID = 'proposal-0123456789abcdef0123456789abcdef';

function verdict(over: Partial<Verdict> = {}): Verdict {
  return {
    proposal_id: ID,
    verdict: 'APPROVE',
    reason: 'within scope',
    constraints: { require_human_review: false },
    escalation: null,
    confidence: 1,
    decided_by: 'policy',
    tier: 'no-judge',
    ...over,
  };
}

function outcome(over: Partial<ProposalOutcome>): ProposalOutcome {
  const base = { proposal_id: ID, workflow_id: WID, verdict: null, verdicts: [], execution: null };
  return { ...base, status: 'pending', ...over };
}

describe('choosing the output', () => {
  it('a terminal gets the summary, anything else the JSON', () => {
    expect(chooseOutputFormat({}, true)).toBe('human');
    expect(chooseOutputFormat({}, false)).toBe('json');
    expect(chooseOutputFormat({}, undefined)).toBe('json');
  });

  it('--json and --format win over the terminal', () => {
    expect(chooseOutputFormat({ json: true }, true)).toBe('json');
    expect(chooseOutputFormat({ format: 'human' }, false)).toBe('human');
    expect(chooseOutputFormat({ format: 'json' }, true)).toBe('json');
    expect(() => chooseOutputFormat({ format: 'yaml' }, true)).toThrow(BadInputError);
    expect(() => chooseOutputFormat({ format: 'yaml' }, true)).toThrow('--format: expected human or json, got "yaml"');
  });
});

describe('the summary', () => {
  it('executed: status, verdict with who decided, reason, execution, and that nothing is left to do', () => {
    const text = renderOutcome(
      outcome({
        status: 'executed',
        verdict: verdict(),
        execution: {
          status: 'succeeded',
          executor: 'memory',
          shadow: false,
          started_at: '2026-12-01T00:00:00Z',
          finished_at: '2026-12-01T00:00:01Z',
        },
      }),
    );
    expect(text.split('\n')).toEqual([
      `proposal  ${ID} (workflow ${WID})`,
      'status    executed',
      'verdict   APPROVE by policy (tier no-judge, confidence 1)',
      'reason    within scope',
      'execution succeeded by memory',
      'next      done: agent-judge performed the action',
      `          see it again: agent-judge status ${ID}`,
      '',
    ]);
  });

  it('awaiting_human: the decide command to run, with this proposal id', () => {
    const text = renderOutcome(
      outcome({
        status: 'awaiting_human',
        verdict: verdict({
          verdict: 'APPROVE',
          decided_by: 'rules',
          rule: 'judge.no-model',
          tier: 'full-judge-review',
          confidence: 0,
          reason: 'no model reviewed it:\n  a person decides',
        }),
      }),
    );
    expect(text).toContain('verdict   APPROVE by rules, rule judge.no-model (tier full-judge-review, confidence 0)\n');
    // The model's line break is shown, not obeyed (contracts/untrusted-text.ts): the reason stays one line.
    expect(text).toContain('reason    no model reviewed it: ⏎ a person decides\n');
    expect(text).toContain(`  agent-judge decide ${ID} approve|reject --approver <id> [--reason <text>]\n`);
    expect(text.split('\n').length).toBeLessThan(10);
  });

  it('rejected: final, and what to do instead', () => {
    const text = renderOutcome(
      outcome({
        status: 'rejected',
        verdict: verdict({ verdict: 'REJECT', decided_by: 'rules', rule: 'files.roots' }),
      }),
    );
    expect(text).toContain('next      final: the same content is refused again under any id\n');
    expect(text).toContain('propose the revision');
  });

  it('awaiting_clarification: the clarify command', () => {
    const text = renderOutcome(outcome({ status: 'awaiting_clarification', verdict: verdict({ verdict: 'CLARIFY' }) }));
    expect(text).toContain(`  agent-judge clarify ${ID} <clarification.json>\n`);
  });

  it('a long reason is cut to one line', () => {
    const text = renderOutcome(outcome({ status: 'rejected', verdict: verdict({ reason: 'x'.repeat(5000) }) }));
    const reason = text.split('\n').find((l) => l.startsWith('reason'))!;
    expect(reason.length).toBeLessThanOrEqual(210);
    expect(reason).toMatch(new RegExp(`^reason {4}x+ … \\d+ more characters: agent-judge status ${ID} --json$`));
  });

  it('a submission without --wait: the status command to follow', () => {
    expect(renderSubmitted({ proposal_id: ID, workflow_id: WID })).toContain(`next      agent-judge status ${ID}`);
  });
});
