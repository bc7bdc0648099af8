import { describe, expect, it } from 'vitest';
import { VerdictSchema } from '../../src/contracts/verdict';
import { judgeProposal } from '../../src/judge';
import type { ModelClient } from '../../src/judge/model';
import { judgePolicy, prProposal, tempBaseDir } from '../helpers/judge-fixtures';

/** A model that must not be asked: the rules decide these cases on their own. */
const forbiddenModel: ModelClient = {
  model: 'forbidden',
  chat: () => Promise.reject(new Error('the model was asked although the rules had decided')),
};
const approving = (calls: string[]): ModelClient => ({
  model: 'approving',
  chat: (messages) => {
    calls.push(messages[1]?.content ?? '');
    return Promise.resolve({
      content: JSON.stringify({ verdict: 'APPROVE', confidence: 0.95, reason: 'fine' }),
      promptTokens: 1,
      completionTokens: 1,
    });
  },
});

describe('judgeProposal: deny wins, rules before the model', async () => {
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir);
  const judge = (proposal = prProposal(), model: ModelClient | null = forbiddenModel) =>
    judgeProposal(
      { proposal, tier: 'full-judge-review', round: 0, policy },
      { baseDir, model: model ?? undefined, now: () => new Date(0) },
    );

  it('a hard-rule REJECT is final and the model is not asked', async () => {
    const v = await judge(prProposal({ parameters: { files_changed: ['src/auth/x.ts'], estimated_diff_lines: 5 } }));
    expect(v).toMatchObject({ verdict: 'REJECT', decided_by: 'rules', rule: 'scope.files_only', confidence: 1 });
    expect(v.judge).toBeUndefined();
  });

  it('a deny pattern is a REJECT before the model', async () => {
    const v = await judge(prProposal({ justification: 'key AKIAIOSFODNN7EXAMPLE for #42' }));
    expect(v).toMatchObject({ verdict: 'REJECT', decided_by: 'rules', rule: 'secrets.aws-access-key' });
  });

  it('missing evidence is a CLARIFY returned as is', async () => {
    expect(await judge(prProposal({ cited_evidence: [] }))).toMatchObject({
      verdict: 'CLARIFY',
      decided_by: 'rules',
      rule: 'evidence.missing',
    });
  });

  it('evidence for another repository is a rules REJECT; evidence on a foreign host a CLARIFY', async () => {
    expect(
      await judge(
        prProposal({ cited_evidence: [{ type: 'issue', url: 'https://forge.example.test/sscoble/other/issues/1' }] }),
      ),
    ).toMatchObject({
      verdict: 'REJECT',
      decided_by: 'rules',
      rule: 'evidence.other-repo',
    });
    expect(
      await judge(
        prProposal({ cited_evidence: [{ type: 'issue', url: 'https://evil.example/sscoble/speckl/issues/1' }] }),
      ),
    ).toMatchObject({
      verdict: 'CLARIFY',
      rule: 'evidence.failed',
    });
  });

  it('without a model the rules decide alone (confidence 1)', async () => {
    const v = await judge(prProposal(), null);
    expect(v).toMatchObject({ verdict: 'APPROVE', decided_by: 'rules', rule: 'rules.passed', confidence: 1 });
    expect(VerdictSchema.parse(v)).toEqual(v);
  });

  it('with a model, the model decides and its audit is kept', async () => {
    const calls: string[] = [];
    const v = await judge(prProposal(), approving(calls));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain('<proposal_json>');
    expect(v).toMatchObject({
      verdict: 'APPROVE',
      decided_by: 'judge',
      confidence: 0.76,
      judge: { model: 'approving' },
    });
    expect(v.constraints).toMatchObject({ files_only: ['src/schema/'], max_lines: 80 });
  });
});
