/**
 * The judge activity's timeout, apart from the judge settings' schema: the proposal workflow computes it on every run,
 * and the SDK evaluates a workflow's modules afresh for each run (docs/performance.md).
 */
/**
 * A start-to-close timeout for the judge activity that always outlasts the judge itself: the model
 * budget, plus the Forgejo lookups, plus slack (`spec.judge.slackMs`, default 10 s). A judge that hits
 * its own budget answers confidence 0 instead of being cut off by Temporal. Pure (no I/O), so workflow
 * code may call it.
 */
export function judgeActivityTimeoutMs(policy: {
  spec: { judge?: { timeoutMs?: number; slackMs?: number; forgejo?: { timeoutMs?: number } } };
}): number {
  const s = policy.spec.judge;
  return (s?.timeoutMs ?? 20_000) + (s?.forgejo?.timeoutMs ?? 0) + (s?.slackMs ?? 10_000);
}
