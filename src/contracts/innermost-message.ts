/**
 * The innermost message of an error chain: a Temporal failure's own words (an activity's error, an Update validator's
 * refusal) are in its deepest cause. No imports, so workflow code can use it without loading the error family.
 */
export function innermostMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e && typeof e === 'object' && e.cause) e = e.cause;
  return String(e?.message ?? err);
}
