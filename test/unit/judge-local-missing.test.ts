/**
 * A local GGUF that is not there is no model: `dev` says so, and the judge applies the policy's
 * `withoutModel` (default: a person decides) instead of failing or approving.
 */
import { describe, expect, it } from 'vitest';
import { judgeProposal } from '../../src/judge';
import { resolveJudge } from '../../src/judge/discover';
import { judgePolicy, prProposal, tempBaseDir } from '../helpers/judge-fixtures';

describe('a local model file that is missing', () => {
  it('is reported at start and escalates each rules-clean proposal, naming the cause', async () => {
    const baseDir = tempBaseDir();
    const policy = await judgePolicy(baseDir, {
      local: { gguf: 'models/absent.gguf', threads: 1, maxAnswerTokens: 64, contextSize: 1024 },
    });
    const judge = await resolveJudge(policy, {}, { baseDir });
    expect(judge.description).toContain('local model models/absent.gguf is configured, but there is no such file');
    const v = await judgeProposal(
      { proposal: prProposal(), tier: 'full-judge-review', round: 0, policy },
      { ...judge.deps, baseDir },
    );
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.no-model.escalate' });
    expect(v.escalation?.reason).toContain('could not be loaded');
  });
});
