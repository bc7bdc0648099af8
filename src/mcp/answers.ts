/**
 * What the agent reads when a call is not performed (or not yet): `isError: true` tool results, never protocol
 * errors, so the model reads them and can correct itself (and a tool with an outputSchema needs no
 * structuredContent). The verdict travels under `_meta["dev.agent-judge/verdict"]` for clients that read it.
 */
import { VERDICT_META_KEY, AGENT_JUDGE_ARGUMENT } from '../contracts/mcp';
import type { ProposalOutcome, ProposalRecord } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import type { GateAnswer, ProposalRef } from '../gate';

/** The outcome kinds the proxy reports in `_meta`. */
export type AnswerOutcome = 'REJECT' | 'CLARIFY' | 'PENDING' | 'REFUSED';

export interface CallAnswer {
  content: Array<{ type: 'text'; text: string }>;
  isError: true;
  _meta: Record<string, unknown>;
}

/** The `_meta` verdict: enough for a client or a test to act on without parsing the text. */
export interface VerdictMeta {
  outcome: AnswerOutcome | 'APPROVE';
  proposal_id: string | null;
  workflow_id: string | null;
  verdict: string | null;
  decided_by: string | null;
  rule: string | null;
  reason: string | null;
  /** True when this answer was recorded earlier and the call was not judged again. */
  recorded?: boolean;
  rounds_left?: number;
  deadline?: string | null;
  status?: string;
}

function answer(text: string, meta: VerdictMeta): CallAnswer {
  return { content: [{ type: 'text', text }], isError: true, _meta: { [VERDICT_META_KEY]: meta } };
}

function metaOf(
  s: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>,
  outcome: AnswerOutcome,
): VerdictMeta {
  const v: Verdict | null = s.verdict;
  return {
    outcome,
    proposal_id: s.proposal_id,
    workflow_id: s.workflow_id,
    verdict: v?.verdict ?? null,
    decided_by: v?.decided_by ?? null,
    rule: v?.rule ?? null,
    reason: v?.reason ?? null,
  };
}

/** REJECT: final; the identical call is refused again, so the agent must change the call itself. */
export function rejectAnswer(
  s: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>,
  recorded: boolean,
): CallAnswer {
  const v = s.verdict;
  const by = v ? `${v.decided_by}${v.rule ? `, rule ${v.rule}` : ''}` : 'agent-judge';
  return answer(
    `REJECT (${by}): ${v?.reason ?? 'rejected'}. Not performed. ` +
      `${recorded ? 'This identical call was rejected before and was not judged again. ' : ''}` +
      'An identical call will be refused again; a revised call (different arguments) is a new proposal. ' +
      `Proposal ${s.proposal_id}.`,
    { ...metaOf(s, 'REJECT'), recorded },
  );
}

/** CLARIFY: what is missing, how to supply it, rounds left and the deadline. */
export function clarifyAnswer(s: ProposalRecord): CallAnswer {
  return clarifyText(s, Math.max(0, s.max_clarify_rounds - s.clarify_rounds), s.deadlines.clarification);
}

function clarifyText(
  s: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>,
  roundsLeft: number,
  deadline: string | null,
): CallAnswer {
  return answer(
    `CLARIFY: ${s.verdict?.reason ?? 'more information is needed'}. Not performed. ` +
      `Repeat the identical call with ${AGENT_JUDGE_ARGUMENT} filled in (justification, cited_evidence, ` +
      `scope_claim); ${roundsLeft} clarification round(s) left, until ${deadline ?? 'the clarify timeout'}. ` +
      `Proposal ${s.proposal_id}.`,
    { ...metaOf(s, 'CLARIFY'), rounds_left: roundsLeft, deadline },
  );
}

/** Held past the policy's bound: not performed yet; the identical call later gets the decision. */
export function pendingAnswer(s: ProposalRecord): CallAnswer {
  return pendingText(s, s.status, s.deadlines.human ?? s.deadlines.clarification);
}

function pendingText(
  s: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>,
  status: string,
  deadline: string | null,
): CallAnswer {
  const waitingFor = status === 'awaiting_human' ? 'a person to decide' : 'the judge';
  return answer(
    `pending: not performed; call again later. Proposal ${s.proposal_id} (${s.workflow_id}) is waiting for ` +
      `${waitingFor}${deadline ? ` until ${deadline}` : ''}. Repeat the identical call after the decision: it is ` +
      'forwarded once if approved, or gets the REJECT.',
    { ...metaOf(s, 'PENDING'), status, deadline },
  );
}

/** Refused without a verdict of its own: bad `_agent_judge`, a mapping error, an unknown tool, agent-judge down. */
export function refusedAnswer(
  why: string,
  s?: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>,
): CallAnswer {
  return answer(`REJECT: ${why}. Not performed.`, {
    ...(s
      ? metaOf(s, 'REFUSED')
      : {
          outcome: 'REFUSED',
          proposal_id: null,
          workflow_id: null,
          verdict: null,
          decided_by: null,
          rule: null,
          reason: why,
        }),
    reason: why,
  });
}

/** A gate answer's proposal in the fields the texts and `_meta` name. */
function outcomeRef(r: ProposalRef): Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'> {
  return { proposal_id: r.proposalId, workflow_id: r.workflowId, verdict: r.verdict };
}

/** A gate answer that is not a forward, as the MCP tool result the agent reads (the texts above, unchanged). */
export function renderGateAnswer(a: Exclude<GateAnswer, { kind: 'forward' } | { kind: 'cancelled' }>): CallAnswer {
  switch (a.kind) {
    case 'deny':
      return rejectAnswer(outcomeRef(a), a.recorded);
    case 'clarify':
      return clarifyText(outcomeRef(a), a.roundsLeft, a.deadline);
    case 'pending':
      return pendingText(outcomeRef(a), a.status, a.deadline);
    case 'refused':
      return refusedAnswer(a.reason, a.proposal ? outcomeRef(a.proposal) : undefined);
  }
}
