/**
 * `eval` shows what the model adds: the rules-only baseline and a model run side by side on the
 * same corpus, with the cases only a model can judge reported apart.
 */
import { describe, expect, it } from 'vitest';
import { compareEval, formatEvalComparison, runEval } from '../../src/judge/eval';
import type { ModelClient } from '../../src/judge/model';
import { judgePolicy, loadCorpus, tempBaseDir } from '../helpers/judge-fixtures';

/** A model that rejects everything it is shown (in-process: the corpus layer is what is tested). */
const rejecting: ModelClient = {
  model: 'always-reject',
  chat: () =>
    Promise.resolve({
      content: JSON.stringify({ verdict: 'REJECT', confidence: 0.9, reason: 'rejected by the test model' }),
      promptTokens: 1,
      completionTokens: 1,
    }),
};

describe('eval: rules only and the model side by side', async () => {
  const baseDir = tempBaseDir();
  const cases = loadCorpus();
  const rules = await runEval(cases, {
    policy: await judgePolicy(baseDir, { withoutModel: 'approve' }),
    deps: { baseDir },
  });
  const model = await runEval(cases, { policy: await judgePolicy(baseDir), deps: { baseDir, model: rejecting } });
  const c = compareEval(rules, model);

  it('the model-only cases are exactly those the rules passed, judged by the model in the model run', () => {
    expect(c.modelOnly.ids.length).toBeGreaterThan(0);
    const passed = rules.results.filter((r) => r.outcome === 'APPROVE').map((r) => r.id);
    expect([...c.modelOnly.ids].sort()).toEqual([...passed].sort());
    for (const r of c.modelOnly.model.results) expect(r.verdict.decided_by).toBe('judge');
    expect(c.modelOnly.rules.cases).toBe(c.modelOnly.ids.length);
  });

  it('shows the rules approving what should not be approved, and the model closing that gap', () => {
    expect(c.modelOnly.rules.falseApproveRate).toBeGreaterThan(0.5);
    expect(c.model.falseApproveRate).toBe(0);
  });

  it('prints both confusion matrices and the model-only section', () => {
    const text = formatEvalComparison(c);
    expect(text).toContain('rules only (as if spec.judge.withoutModel: approve) and model always-reject, side by side');
    expect(text).toContain(`whole corpus: ${cases.length} cases`);
    expect(text).toContain(`cases only a model can judge (the rules found nothing): ${c.modelOnly.ids.length} cases`);
    expect(text).toMatch(/false-approve rate\s+\d/);
  });
});
