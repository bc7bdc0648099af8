/**
 * Who may decide a proposal: the approvers its run was started with (its policy snapshot), not whoever the policy
 * lists now. One pure check, used by the proposal's `humanDecision` Update validator (the authority) and by the inbox
 * to mark, before anyone presses a button, a proposal the signed-in approver cannot decide.
 */
import { refusal, type Refusal } from './refusal';

/** Why `approver` may not decide a proposal started with `approvers`, or null. */
export function refuseDecider(approvers: readonly string[], approver: string): Refusal | null {
  return approvers.includes(approver)
    ? null
    : refusal('not-approver', `${approver} is not an approver for this proposal`);
}
