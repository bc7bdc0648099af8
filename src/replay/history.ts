/**
 * The recorded proposals a replay re-decides, read the way audits read them (src/audit: `auditedRuns`, the reader
 * behind `audit export`): from the server, and beyond its retention from the hash-checked archive. Each comes with the
 * proposal as it was submitted and the actor's clarifications in the order they were accepted, so a candidate that
 * asks the actor again can be answered with what the actor really answered.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { auditedRuns, type AuditRecord, type AuditSource } from '../audit';
import { ClarificationSchema, type Clarification } from '../contracts/messages';
import { safeParseProposal, type Proposal } from '../contracts/proposal';
import { clarifyUpdate } from '../names';

/** One recorded proposal: its audit record, the proposal as submitted, and the clarifications the actor gave. */
export interface RecordedProposal {
  record: AuditRecord;
  /** The proposal as submitted; null when the history's input is not a valid proposal (then it is not replayed). */
  proposal: Proposal | null;
  /** Why `proposal` is null. */
  unreadable?: string;
  clarifications: Clarification[];
}

/** Which recorded proposals to replay: every filter given must hold. */
export interface ReplaySelection {
  /** Proposals started this long ago or later (milliseconds); all when absent. */
  sinceMs?: number;
  /** Proposals started before this time (epoch milliseconds). */
  untilMs?: number;
  agents?: readonly string[];
  actionTypes?: readonly string[];
  /** Recorded tiers. */
  tiers?: readonly string[];
  /** Recorded outcomes (see `recordedOutcome`): APPROVE, REJECT, person, CLARIFY. */
  outcomes?: readonly string[];
  /** Proposal ids or workflow ids. */
  ids?: readonly string[];
}

/** The proposal as started and every accepted clarification, from a run's history. */
export function readProposalHistory(history: History): Pick<RecordedProposal, 'proposal' | 'clarifications'> & {
  unreadable?: string;
} {
  const events = history.events ?? [];
  const input = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  // Untrusted data even from our own history: validated as the workflow validated it when it started.
  const started = input ? defaultPayloadConverter.fromPayload<{ proposal?: unknown } | null>(input) : null;
  const parsed = safeParseProposal(started?.proposal);
  const clarifications: Clarification[] = [];
  for (const event of events) {
    const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (request?.name !== clarifyUpdate.name) continue;
    const payload = request.args?.payloads?.[0];
    const c = payload ? ClarificationSchema.safeParse(defaultPayloadConverter.fromPayload<unknown>(payload)) : null;
    if (c?.success) clarifications.push(c.data);
  }
  return parsed.ok
    ? { proposal: parsed.value, clarifications }
    : { proposal: null, clarifications, unreadable: parsed.refusal.reason };
}

/** True when the record passes every filter of `selection` but the recorded outcome (checked after reading). */
export function selected(record: AuditRecord, selection: ReplaySelection): boolean {
  const started = Date.parse(record.started_at);
  if (selection.untilMs !== undefined && !(started < selection.untilMs)) return false;
  const has = (list: readonly string[] | undefined, value: string | null) =>
    list === undefined || list.length === 0 || (value !== null && list.includes(value));
  if (!has(selection.agents, record.agent_id)) return false;
  if (!has(selection.actionTypes, record.action_type)) return false;
  if (!has(selection.tiers, record.tier)) return false;
  if (selection.ids && selection.ids.length > 0) {
    if (!selection.ids.includes(record.proposal_id) && !selection.ids.includes(record.workflow_id)) return false;
  }
  return true;
}

/**
 * The recorded proposals `selection` names, from the server and (with `archiveDir`) the archive. Only closed runs:
 * a proposal still being decided has no recorded outcome to compare with.
 */
export async function* recordedProposals(
  client: Client,
  selection: ReplaySelection,
  source: Pick<AuditSource, 'archiveDir'> = {},
): AsyncGenerator<RecordedProposal> {
  for await (const { record, history } of auditedRuns(client, { sinceMs: selection.sinceMs, ...source })) {
    if (record.closed_at === null || !selected(record, selection)) continue;
    yield { record, ...readProposalHistory(history) };
  }
}
