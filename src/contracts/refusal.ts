/**
 * A refusal: a check said no to a request or an input, before anything was done, and says why. It is one value
 * wherever a check refuses (the `refuseX` functions, the circle registry, the capability token check, the proposal
 * and answer parsers, a call's mapping), made where the check is and turned into an error only at a boundary: an
 * Update validator or a workflow throws it as a non-retryable failure (`refusalFailure`, src/workflows/refusal.ts),
 * an HTTP handler answers with a status and the reason, the client and the CLI throw {@link refusalError}.
 *
 * Not a refusal: an action that ran and failed (an executor's `{ ok: false, error }`), damage an audit check found
 * (`{ ok: false, line, reason }` of the chain and the archive: a finding about what exists, not a request declined),
 * a verdict (the judge's REJECT is a decision about a proposal, recorded as one), and an error nobody decided (a
 * network failure, a bug): those keep their own shapes.
 */
import { type AgentJudgeError, BadInputError } from './errors';

/** Why a check said no. */
export interface Refusal {
  /**
   * A short, stable kind for scripts, tests and logs, kebab-case, dotted where a domain qualifies it: `bad-input`,
   * `stale`, `replay`, `bad-signature`, `grant.expired`. The module that refuses owns its codes.
   */
  readonly code: string;
  /** The sentence people read, shown as is. */
  readonly reason: string;
}

/** The refused branch of {@link Checked}. */
export interface Refused {
  readonly ok: false;
  readonly refusal: Refusal;
}

/**
 * What a check that also produces something returns: the value, or the refusal. (Not "outcome": that word names
 * what became of a proposal.)
 */
export type Checked<T> = { readonly ok: true; readonly value: T } | Refused;

/** A refusal of kind `code`. */
export function refusal(code: string, reason: string): Refusal {
  return { code, reason };
}

/** A refused {@link Checked}: of kind `code`, or of a refusal already made. */
export function refused(code: string, reason: string): Refused;
export function refused(refusal: Refusal): Refused;
export function refused(codeOrRefusal: string | Refusal, reason = ''): Refused {
  return {
    ok: false,
    refusal: typeof codeOrRefusal === 'string' ? { code: codeOrRefusal, reason } : codeOrRefusal,
  };
}

/**
 * The error a refusal becomes where it is thrown (the client, the CLI, an activity): {@link BadInputError} (never
 * retried; the CLI exits 2) unless the boundary names another member of the family (`as`). `prefix` says where, as
 * the boundary words it (`--`, `AGENT_JUDGE_CAPABILITY_KEY: `). Workflow code throws `refusalFailure` instead.
 */
export function refusalError(
  r: Refusal,
  prefix = '',
  as: new (message: string) => AgentJudgeError = BadInputError,
): AgentJudgeError {
  return new as(`${prefix}${r.reason}`);
}
