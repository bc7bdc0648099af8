/**
 * The proposal workflow's messages: each Update's argument read and checked (without a schema where it can be: this
 * module is evaluated for every proposal run, see docs/performance.md), and the handlers the workflow registers. Every
 * Update that the state can refuse goes through one helper, read -> refuse -> apply: the validator reads the argument,
 * refuses while the run is starting, asks the state why not; the handler reads it again and applies it.
 */
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import { condition, setHandler } from '@temporalio/workflow';
import type { JudgeActivities } from '../../activities/types';
import type { CallerOutcome } from '../../contracts/caller-outcome';
import type { RedeemCapabilityInput, SettleLease } from '../../contracts/capability';
import { FailureType } from '../../contracts/lifecycle';
import { refusal, type Refusal } from '../../contracts/refusal';
import type { Clarification, HumanDecision } from '../../contracts/messages';
import {
  awaitSettledUpdate,
  callerOutcomeUpdate,
  clarifyUpdate,
  humanDecisionUpdate,
  redeemCapabilityUpdate,
  statusQuery,
  withdrawUpdate,
} from '../../names';
import { CallerOutcomeSchema, ClarificationSchema, HumanDecisionSchema } from '../schemas';
import type { ProposalMetrics } from '../metrics';
import { refusalFailure } from '../refusal';
import { readUpdateInput } from '../update-input';
import { failureMessage } from './failures';
import { type ProposalState, refuseWithdrawalOf } from './state';

export { readUpdateInput };

/** An Update that arrives before the run has its policy snapshot. */
const STARTING = refusal('starting', 'the proposal is still starting');

/** The `clarify` Update's argument, checked. */
export const readClarification = (raw: unknown): Clarification =>
  readUpdateInput(ClarificationSchema, 'clarification', raw);
/** The `humanDecision` Update's argument, checked (with its defaults applied). */
export const readDecision = (raw: unknown): HumanDecision => readUpdateInput(HumanDecisionSchema, 'decision', raw);
/** The `callerOutcome` Update's argument, checked. */
export const readCallerOutcome = (raw: unknown): CallerOutcome =>
  readUpdateInput(CallerOutcomeSchema, 'caller outcome', raw);

/**
 * An Update argument of non-empty, bounded strings (`limits`: field -> longest), checked without a schema (this module
 * is evaluated for every proposal run; see docs/performance.md). Throws a non-retryable BadInput naming the field.
 */
function readStrings<F extends string>(
  what: string,
  raw: unknown,
  limits: Record<F, number>,
): { value: Record<string, unknown>; strings: Record<F, string>; fail: (why: string) => ApplicationFailure } {
  const fail = (why: string) => ApplicationFailure.nonRetryable(`${what}: ${why}`, FailureType.BadInput);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw fail('expected an object');
  const value = raw as Record<string, unknown>;
  const strings = {} as Record<F, string>;
  for (const field of Object.keys(limits) as F[]) {
    const v = value[field];
    if (typeof v !== 'string' || v.length === 0) throw fail(`${field}: expected a non-empty string`);
    if (v.length > limits[field]) throw fail(`${field}: too long`);
    strings[field] = v;
  }
  return { value, strings, fail };
}

const REDEEM_LIMITS = { token: 4096, audience: 256, action_sha256: 256, redeemer: 256, nonce: 256 };

/** The `redeemCapability` Update's argument, checked: five non-empty strings of bounded length, and `lease`. */
export function readRedemption(raw: unknown): RedeemCapabilityInput {
  const { value, strings, fail } = readStrings('redemption', raw, REDEEM_LIMITS);
  if (value.lease !== undefined && value.lease !== 'forwarding') throw fail('lease: expected "forwarding" or nothing');
  return { ...strings, ...(value.lease === 'forwarding' ? { lease: 'forwarding' as const } : {}) };
}

const SETTLE_LEASE_LIMITS = { audience: 256, action_sha256: 256, redeemer: 256, nonce: 256, lease_before: 256 };

/** The `awaitSettled` Update's optional argument, checked the same way (see {@link SettleLease}). */
export function readSettleLease(raw: unknown): SettleLease {
  const { value, strings, fail } = readStrings('settle lease', raw, SETTLE_LEASE_LIMITS);
  if (value.lease !== 'forwarding') throw fail('lease: expected "forwarding"');
  if (Number.isNaN(Date.parse(strings.lease_before))) throw fail('lease_before: expected an ISO 8601 time');
  return { lease: 'forwarding', ...strings };
}
/** The `withdraw` Update's argument, checked: one non-empty reason of at most 2,000 characters. */
export function readWithdrawal(raw: unknown): { reason: string } {
  return { reason: readStrings('withdrawal', raw, { reason: 2000 }).strings.reason };
}

/**
 * Registers `update` the read -> refuse -> apply way. The validator runs synchronously and refuses before anything is
 * written to history: a malformed argument (BadInput), a run still starting, or whatever `refuse` names. The handler
 * applies what the validator accepted, read again (validators do not run on replay).
 */
function setRefusable<Ret, Arg>(
  update: UpdateDefinition<Ret, [Arg]>,
  current: () => ProposalState | undefined,
  read: (raw: unknown) => Arg,
  refuse: (s: ProposalState, input: Arg) => Refusal | null,
  apply: (s: ProposalState, input: Arg) => Ret | Promise<Ret>,
): void {
  setHandler(
    update,
    (raw: Arg) => {
      const s = current()!;
      return apply(s, read(raw));
    },
    {
      validator: (raw: Arg) => {
        const input = read(raw);
        const s = current();
        if (!s) throw refusalFailure(STARTING);
        const refused = refuse(s, input);
        if (refused) throw refusalFailure(refused);
      },
    },
  );
}

/** What the proposal's handlers reach in its run; each is undefined until the run has its policy snapshot. */
export interface ProposalRun {
  current: () => ProposalState | undefined;
  metrics: () => ProposalMetrics | undefined;
  /** The judge worker's rules, for an approval with edits (set once the policy snapshot names the judge queue). */
  checkRules: () => JudgeActivities['checkRules'] | undefined;
  /** Workflow time, as an ISO string. */
  now: () => string;
}

/** The status Query and every Update but `withdraw`: registered first, before any await, so none finds no handler. */
export function setProposalHandlers(run: ProposalRun): void {
  const { current, now } = run;
  setHandler(statusQuery, () => {
    const s = current();
    if (!s) throw new Error('the proposal is still starting; ask again in a moment');
    return s.toRecord();
  });
  setHandler(
    awaitSettledUpdate,
    async (settleLease?: SettleLease) => {
      const lease = settleLease === undefined ? null : readSettleLease(settleLease);
      await condition(() => current() !== undefined && current()!.isSettled());
      // Settled approved for the MCP proxy to forward: redeem and lease in this Update, no round trip after it.
      if (lease) current()!.leaseOnSettle(lease, Date.now(), now());
      return current()!.toRecord();
    },
    {
      // A malformed lease is refused before anything is written.
      validator: (settleLease?: SettleLease) => {
        if (settleLease !== undefined) readSettleLease(settleLease);
      },
    },
  );
  setRefusable(
    clarifyUpdate,
    current,
    readClarification,
    (s, c) => s.refuseClarification(c),
    async (s, c) => {
      const before = s.settledCount;
      s.receiveClarification(c);
      await condition(() => s.settledCount > before);
      return s.toRecord();
    },
  );
  setRefusable(
    humanDecisionUpdate,
    current,
    readDecision,
    (s, d) => s.refuseDecision(d, Date.now()),
    async (s, d) => {
      const before = s.settledCount;
      // Approve with edits (docs/edits.md): the edited action must pass the rules before the decision counts. The
      // first approval with edits is checked (later ones of a quorum must name the same edited action); a refusal
      // records nothing.
      const edit = s.approvals().length === 0 ? s.editOf(d) : null;
      if (edit?.ok) {
        s.beginEditCheck(d.approver);
        let finding;
        try {
          finding = await run.checkRules()!({ proposal: edit.value.proposal, policy: s.policy });
        } catch (err) {
          throw ApplicationFailure.nonRetryable(
            `the rules could not check the edited action (${failureMessage(err)}); nothing was recorded`,
            FailureType.BadInput,
          );
        } finally {
          s.endEditCheck();
        }
        if (finding)
          throw ApplicationFailure.nonRetryable(
            `the edited action fails the rules (${finding.rule}: ${finding.reason}); nothing was recorded`,
            FailureType.BadInput,
          );
        if (!s.awaitingHuman())
          throw ApplicationFailure.nonRetryable(
            `the escalation closed while the rules checked the edits (stage: ${s.stage}); nothing was recorded`,
            FailureType.BadInput,
          );
      }
      const result = s.addDecision(d, now());
      run.metrics()?.humanDecision(d.decision);
      // A partial quorum changes nothing else: answer at once. Otherwise wait for the effect.
      if (result !== 'pending') await condition(() => s.settledCount > before);
      return s.toRecord();
    },
  );
  // A second, expired or mismatched redemption is refused and changes nothing.
  setRefusable(
    redeemCapabilityUpdate,
    current,
    readRedemption,
    (s, r) => s.refuseRedemption(r, Date.now()),
    (s, r) => s.redeemCapability(r, now()),
  );
  // A second `forwarding` lease is refused, so an approved call is forwarded once.
  setRefusable(
    callerOutcomeUpdate,
    current,
    readCallerOutcome,
    (s, o) => s.refuseCallerOutcome(o),
    (s, o) => {
      s.recordCallerOutcome(o, now());
      return s.toRecord();
    },
  );
}

/**
 * The `withdraw` Update: `withdraw` cancels what the run is doing. Refused for a proposal_id that names its content
 * (checked from the submitted proposal while the run is starting) and for an action already performed.
 */
export function setWithdrawHandler(
  proposalId: string,
  current: () => ProposalState | undefined,
  withdraw: (reason: string) => void,
): void {
  setHandler(withdrawUpdate, (input) => withdraw(readWithdrawal(input).reason), {
    validator: (input) => {
      readWithdrawal(input);
      const s = current();
      const refused = s ? s.refuseWithdrawal() : refuseWithdrawalOf(proposalId);
      if (refused) throw refusalFailure(refused);
    },
  });
}
