/**
 * The words an agent's model reads when a call is not performed (REJECT, CLARIFY, pending, refused), and the line a
 * person at the terminal is shown for a call waiting on an approver: one wording for every runtime and language (the
 * hooks, the framework adapters, the gate service's `text` field), so the model reads the same rule everywhere.
 */
import { describeChanges, type ActionChange } from '../contracts/action-edit';
import type { GateAnswer, PerformerLease } from './types';

/** Any answer but `cancelled` (nothing to say), whatever kind of lease its forward carries. */
type Spoken = Exclude<GateAnswer<PerformerLease>, { kind: 'cancelled' }>;

/** A short time from now, for "retry after". */
function retryAt(ms: number): string {
  return new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The text the model reads for an answer that does not run the call; `undefined` for `forward`. */
export function modelText(a: Spoken): string | undefined {
  switch (a.kind) {
    case 'forward':
      return undefined;
    case 'deny': {
      const v = a.verdict;
      const by = v ? `${v.decided_by}${v.rule ? `, rule ${v.rule}` : ''}` : 'agent-judge';
      return (
        `agent-judge REJECT (${by}): ${a.reason}. Not performed. ` +
        `${a.recorded ? 'This identical call was rejected before and was not judged again. ' : ''}` +
        `An identical call is refused again; a different call is a new proposal. Proposal ${a.proposalId}.`
      );
    }
    case 'clarify':
      return (
        `agent-judge CLARIFY: ${a.reason}. Not performed. Say why this call is needed (the tool's description, ` +
        `where it has one) and repeat the identical call; ${a.roundsLeft} clarification round(s) left` +
        `${a.deadline ? `, until ${a.deadline}` : ''}. Proposal ${a.proposalId}.`
      );
    case 'pending':
      return (
        `agent-judge: pending, not performed yet. Proposal ${a.proposalId} is waiting for ` +
        `${a.waitingFor === 'human' ? 'a person to decide' : 'the judge'}` +
        `${a.deadline ? ` (until ${a.deadline})` : ''}. ` +
        `Retry the identical call after ${retryAt(a.retryAfterMs)} (in about ${Math.ceil(a.retryAfterMs / 1000)} s, ` +
        'or later): it runs once if approved, or gets the REJECT. Meanwhile do something else or end your turn.'
      );
    case 'refused':
      return `agent-judge ${a.reason.startsWith('REJECT') ? '' : 'REJECT: '}${a.reason}. Not performed.`;
  }
}

/** What the person at the terminal is told about a held call (never shown to the model). */
export function personText(a: Spoken): string | undefined {
  if (a.kind !== 'pending' || a.waitingFor !== 'human') return undefined;
  return (
    `agent-judge: ${a.proposalId} waits for an approver: agent-judge decide ${a.proposalId} approve|reject ` +
    '--approver <you> (or in Discord)'
  );
}

/** What the model is told of a call a person approved with edits: it ran as edited, and what changed. */
export function editedText(changes: readonly ActionChange[]): string {
  const what = describeChanges(changes);
  return `agent-judge: a person approved this call with edits; it ran as edited, not as sent: ${what}`;
}
