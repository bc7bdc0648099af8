/**
 * What the inbox shows a signed-in approver who cannot decide a pending proposal: the reason, where the buttons would
 * be. The check is the proposal's own (contracts/decider.ts); this only puts it in words.
 */
import { refuseDecider } from '../contracts/decider';
import type { ProposalRecord } from '../contracts/status';
import { markup, type Html } from './html';

/**
 * Why the signed-in approver cannot decide this proposal, in the words the inbox shows, or null: the check the
 * proposal's `humanDecision` Update makes (contracts/decider.ts), over the approvers its run was started with.
 */
export function whyCannotDecide(s: Pick<ProposalRecord, 'approvers'>, approver: string): string | null {
  if (!s.approvers || !refuseDecider(s.approvers, approver)) return null;
  return (
    'You cannot decide this proposal: you are not among the approvers it was started with ' +
    `(${s.approvers.join(', ') || 'none'}); an approver listed since decides only proposals started after.`
  );
}

/** The notice shown instead of the buttons when the approver cannot decide; nothing when they can. */
export function cannotDecideNotice(s: ProposalRecord, approver: string): Html | '' {
  const why = whyCannotDecide(s, approver);
  return why ? markup`<p class="notice error cannot-decide">${why}</p>` : '';
}
