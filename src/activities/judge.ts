import { BadInputError } from '../contracts/errors';
import { safeParseProposal } from '../contracts/proposal';
import type { Verdict } from '../contracts/verdict';
import { judgeProposal, type JudgeDeps, type JudgeInput } from '../judge';
import type { JudgeActivities } from './types';

/**
 * The judge worker's only activity. It reads a proposal and returns a verdict; it has no executor,
 * no credentials and no write access (seed 000 §1).
 */
export function createJudgeActivities(deps: JudgeDeps): JudgeActivities {
  return {
    async judge(input: JudgeInput): Promise<Verdict> {
      // The proposal is untrusted data even here: re-validate before anything reads it.
      const parsed = safeParseProposal(input.proposal);
      if (!parsed.ok) throw new BadInputError(parsed.error);
      return judgeProposal({ ...input, proposal: parsed.value }, deps);
    },
  };
}
