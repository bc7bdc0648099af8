import { metricMeter } from '@temporalio/activity';
import { refusalError } from '../contracts/refusal';
import { meterName, METRICS, modelErrorKind } from '../contracts/metric-catalogue';
import { safeParseProposal } from '../contracts/proposal';
import type { RuleFinding, Verdict } from '../contracts/verdict';
import { judgeProposal, type JudgeDeps, type JudgeInput } from '../judge';
import { hardRules } from '../guards/rules';
import { lightweightCheck } from '../policy/patterns';
import type { CheckRulesInput, JudgeActivities } from './types';

/**
 * The judge worker's only activity. It reads a proposal and returns a verdict; it has no executor,
 * no credentials and no write access (seed 000 §1).
 */
export function createJudgeActivities(deps: JudgeDeps): JudgeActivities {
  return {
    async judge(input: JudgeInput): Promise<Verdict> {
      // The proposal is untrusted data even here: re-validate before anything reads it.
      const parsed = safeParseProposal(input.proposal);
      if (!parsed.ok) throw refusalError(parsed.refusal);
      const started = performance.now();
      const verdict = await judgeProposal({ ...input, proposal: parsed.value }, deps);
      countJudgement(verdict, (performance.now() - started) / 1000);
      return verdict;
    },
    // eslint-disable-next-line @typescript-eslint/require-await -- an activity: its contract is a promise
    async checkRules(input: CheckRulesInput): Promise<RuleFinding | null> {
      const parsed = safeParseProposal(input.proposal);
      if (!parsed.ok) return { verdict: 'REJECT', rule: 'edit.invalid', reason: parsed.refusal.reason };
      const hard = hardRules(parsed.value, { policy: input.policy, baseDir: deps.baseDir });
      if (hard) return hard;
      const patterns = lightweightCheck(parsed.value, input.policy);
      return patterns.verdict === 'REJECT' ? patterns : null;
    },
  };
}

/** Judge duration and model errors, on the activity meter (it adds namespace, taskQueue, activityType). */
function countJudgement(verdict: Verdict, seconds: number): void {
  const { judgeDuration, modelErrors } = METRICS;
  metricMeter
    .createHistogram(judgeDuration.name, 'float', undefined, judgeDuration.help)
    .record(seconds, { verdict: verdict.verdict });
  const error = verdict.judge?.error;
  if (error !== undefined) {
    metricMeter
      .createCounter(meterName(modelErrors), undefined, modelErrors.help)
      .add(1, { kind: modelErrorKind(error) });
  }
}
