/**
 * The audit trail is the workflow history (seed 000 §4 "audit trail", §6 audit cadence). These
 * functions read it back: replay every closed proposal against the current workflow code, and
 * export one JSON line per proposal with every verdict and decision. They read the server and,
 * when given one, the history archive (src/audit/archive.ts), which keeps runs the namespace's
 * retention has deleted; a run is counted once (key: its run id), from the server when it still
 * has it.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { archivedRuns, isRunGone, readArchivedHistory, type ArchiveRecord } from './archive';
import type { HumanDecision } from '../contracts/messages';
import { outcomeStatusOf, stageFrom } from '../contracts/lifecycle';
import type { Proposal } from '../contracts/proposal';
import type { ProposalOutcome, ProposalRecord } from '../contracts/status';
import {
  awaitSettledUpdate,
  callerOutcomeUpdate,
  clarifyUpdate,
  humanDecisionUpdate,
  PROPOSAL_WORKFLOW_TYPE,
  SA,
} from '../names';
import { defaultWorkflowCode } from '../workflow-code';

export interface ReplaySummary {
  replayed: number;
  ok: number;
  nondeterministic: number;
  failed: number;
  /** Of `replayed`, runs read from the archive (the server no longer has them). */
  from_archive: number;
  problems: Array<{ workflow_id: string; error: string }>;
}

/** Where the audit functions read: the server, and optionally an archive folder. */
export interface AuditSource {
  sinceMs?: number;
  /** The history archive (`spec.audit.archive.dir`); runs the server still has are read from the server. */
  archiveDir?: string;
}

/** An archived run that cannot be read (missing, or not matching its hash). */
interface Unreadable {
  workflowId: string;
  error: Error;
}

/**
 * A listed run's history, or undefined when it was deleted meanwhile (visibility lags behind deletion; the archive
 * then supplies the run).
 */
async function fetchIfPresent(client: Client, wf: WorkflowExecutionInfo): Promise<History | undefined> {
  try {
    return await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
  } catch (err) {
    if (isRunGone(err)) return undefined;
    throw err;
  }
}

/**
 * The server's closed proposal runs, then the archive's runs the server no longer has. The run ids of the server's
 * runs are collected while listing, so a run in both places is read once, from the server.
 */
async function* closedHistories(
  client: Client,
  { sinceMs, archiveDir }: AuditSource,
  started = Date.now(),
): AsyncGenerator<{ workflowId: string; history: History; archived: boolean } | Unreadable> {
  const closed = `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'`;
  const query = `${closed}${sinceClause(sinceMs, started)}`;
  const seen = new Set<string>();
  for await (const wf of client.workflow.list({ query })) {
    const history = await fetchIfPresent(client, wf);
    if (!history) continue;
    seen.add(wf.runId);
    yield { workflowId: wf.workflowId, history, archived: false };
  }
  if (archiveDir === undefined) return;
  const sinceEpochMs = sinceMs === undefined ? undefined : started - sinceMs;
  for (const record of archivedRuns(archiveDir, { skip: seen, sinceEpochMs })) {
    try {
      yield { workflowId: record.workflow_id, history: readArchivedHistory(archiveDir, record), archived: true };
    } catch (err) {
      yield { workflowId: record.workflow_id, error: err as Error };
    }
  }
}

function sinceClause(sinceMs: number | undefined, now = Date.now()): string {
  return sinceMs === undefined ? '' : ` AND StartTime > '${new Date(now - sinceMs).toISOString()}'`;
}

/**
 * Replays every closed proposal history since `sinceMs` against the current workflow code. Any
 * nondeterminism means a deployed change would break running proposals.
 */
export async function replayProposals(
  client: Client,
  {
    sinceMs,
    archiveDir,
    workflowBundle,
    onProgress,
  }: AuditSource & { workflowBundle?: WorkflowBundleOption; onProgress?: (n: number) => void } = {},
): Promise<ReplaySummary> {
  const summary: ReplaySummary = {
    replayed: 0,
    ok: 0,
    nondeterministic: 0,
    failed: 0,
    from_archive: 0,
    problems: [],
  };
  const options = workflowBundle ? { workflowBundle } : defaultWorkflowCode();
  const unreadable: Unreadable[] = [];
  let archived = 0;
  async function* replayable() {
    for await (const item of closedHistories(client, { sinceMs, archiveDir })) {
      if ('error' in item) unreadable.push(item);
      else {
        if (item.archived) archived += 1;
        yield { workflowId: item.workflowId, history: item.history };
      }
    }
  }
  for await (const result of Worker.runReplayHistories({ ...options, replayName: 'agent-judge-audit' }, replayable())) {
    summary.replayed += 1;
    onProgress?.(summary.replayed);
    if (!result.error) summary.ok += 1;
    else {
      if (result.error.name === 'DeterminismViolationError') summary.nondeterministic += 1;
      else summary.failed += 1;
      summary.problems.push({ workflow_id: result.workflowId, error: `${result.error.name}: ${result.error.message}` });
    }
  }
  for (const u of unreadable) {
    summary.failed += 1;
    summary.problems.push({ workflow_id: u.workflowId, error: `${u.error.name}: ${u.error.message}` });
  }
  summary.from_archive = archived;
  return summary;
}

export interface AuditRecord extends ProposalOutcome {
  /** The run this record describes: a proposal run is exported once, whether the server or the archive holds it. */
  run_id: string;
  agent_id: string | null;
  action_type: string | null;
  tier: string | null;
  target: string | null;
  audit_flag: boolean;
  started_at: string;
  closed_at: string | null;
  /** `archive` when the server no longer has the run (its retention ended) and the archive does. */
  source: 'server' | 'archive';
  decisions: Array<HumanDecision & { accepted: boolean }>;
  /** For a call the MCP proxy judged (the caller performs it): which call, which rule, the token, what happened. */
  mcp?: McpCallRecord;
}

/**
 * A judged MCP call as the audit trail keeps it (issue 10): pass-through calls have the same fields in the proxy's
 * hash-chained log. Times in milliseconds from the proposal's start: `judged_ms` until the final verdict,
 * `forwarded_ms` until the proxy leased the call for the upstream (the hold), `upstream_ms` the upstream's own time.
 */
export interface McpCallRecord {
  server: string | null;
  tool: string | null;
  tool_definition_hash: string | null;
  call_digest: string;
  rule: string | null;
  sequence: number;
  token_id: string | null;
  outcome: string | null;
  detail: string | null;
  judged_ms: number | null;
  forwarded_ms: number | null;
  upstream_ms: number | null;
}

const msBetween = (from: string | null | undefined, to: string | null | undefined): number | null => {
  if (!from || !to) return null;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? ms : null;
};

/** The MCP fields of a proxied proposal's record; undefined for any other proposal. */
function mcpRecordOf(
  performer: Proposal['performer'] | undefined,
  outcome: ProposalOutcome | null,
  verdict: ProposalOutcome['verdict'],
  startedAt: string,
): McpCallRecord | undefined {
  if (performer?.by !== 'caller') return undefined;
  const caller = outcome?.caller ?? null;
  return {
    server: performer.server ?? null,
    tool: performer.tool ?? null,
    tool_definition_hash: performer.tool_definition_hash ?? null,
    call_digest: performer.call,
    rule: performer.rule ?? null,
    sequence: performer.sequence,
    token_id: outcome?.capability?.token_id ?? null,
    outcome: caller?.outcome ?? null,
    detail: caller?.detail ?? null,
    judged_ms: msBetween(startedAt, verdict?.decided_at),
    forwarded_ms: msBetween(startedAt, caller?.forwarded_at),
    upstream_ms: msBetween(caller?.forwarded_at, caller?.finished_at),
  };
}

/** The Updates whose answer is the run's record at that moment (src/names.ts). */
const RECORD_UPDATES: ReadonlySet<string> = new Set([
  clarifyUpdate.name,
  humanDecisionUpdate.name,
  awaitSettledUpdate.name,
  callerOutcomeUpdate.name,
]);

/**
 * The final outcome and every accepted human decision, from a run's history. A run still open (an approval waiting for
 * its token or its caller) has no result yet: its verdicts are those of the last record an Update answered with, so a
 * human decision's verdict is exported as soon as the decision's Update completed.
 */
function readHistory(history: History): {
  outcome: ProposalOutcome | null;
  /** The verdicts as they stand: the outcome's, else those of the last record an Update answered with. */
  judged: Pick<ProposalOutcome, 'verdict' | 'verdicts'>;
  decisions: AuditRecord['decisions'];
  performer: Proposal['performer'] | undefined;
} {
  let outcome: ProposalOutcome | null = null;
  let answered: Pick<ProposalRecord, 'verdict' | 'verdicts'> | null = null;
  const decisions: AuditRecord['decisions'] = [];
  const recordUpdateIds = new Set<string>();
  // The proposal as started (the workflow validated it before acting; here it is only read for its performer).
  const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const started = input ? defaultPayloadConverter.fromPayload<{ proposal?: Partial<Proposal> } | null>(input) : null;
  const performer = started?.proposal?.performer;
  for (const event of history.events ?? []) {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    const name = accepted?.acceptedRequest?.input?.name;
    if (name && RECORD_UPDATES.has(name)) recordUpdateIds.add(accepted?.acceptedRequest?.meta?.updateId ?? '');
    if (name === humanDecisionUpdate.name) {
      const payload = accepted?.acceptedRequest?.input?.args?.payloads?.[0];
      if (payload) decisions.push({ ...defaultPayloadConverter.fromPayload<HumanDecision>(payload), accepted: true });
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    const answer = completed?.outcome?.success?.payloads?.[0];
    if (answer && recordUpdateIds.has(completed?.meta?.updateId ?? ''))
      answered = defaultPayloadConverter.fromPayload<ProposalRecord>(answer);
    const done = event.workflowExecutionCompletedEventAttributes;
    const payload = done?.result?.payloads?.[0];
    if (payload) outcome = defaultPayloadConverter.fromPayload<ProposalOutcome>(payload);
  }
  // Only the verdicts of an open run's record: its capability token is still redeemable and stays out of the export.
  const judged = outcome ?? answered;
  return {
    outcome,
    judged: { verdict: judged?.verdict ?? null, verdicts: judged?.verdicts ?? [] },
    decisions,
    performer,
  };
}

/** A run's search attributes as its history set them (start, then each upsert), for runs visibility no longer has. */
function searchAttributesOf(history: History): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const apply = (fields: Record<string, Payload> | null | undefined) => {
    for (const [name, payload] of Object.entries(fields ?? {})) {
      const value = defaultPayloadConverter.fromPayload<unknown>(payload);
      values.set(name, Array.isArray(value) ? value[0] : value);
    }
  };
  for (const event of history.events ?? []) {
    apply(event.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields);
    apply(event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields);
  }
  return values;
}

/**
 * An event time as ISO 8601. Histories fetched from the server carry `Long` seconds; histories read back with
 * `historyFromJSON` may carry plain numbers or strings, which the SDK's own converter does not take.
 */
function eventTimeIso(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null {
  if (!ts) return null;
  const s = ts.seconds as { toNumber?: () => number } | number | string | null | undefined;
  const seconds =
    typeof s === 'object' && s !== null && typeof s.toNumber === 'function' ? s.toNumber() : Number(s ?? 0);
  const ms = seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

function fromServer(wf: WorkflowExecutionInfo, history: History): AuditRecord {
  const { outcome, judged, decisions, performer } = readHistory(history);
  const mcp = mcpRecordOf(performer, outcome, judged.verdict, wf.startTime.toISOString());
  const sa = wf.typedSearchAttributes;
  return {
    proposal_id: outcome?.proposal_id ?? sa.get(SA.ProposalId) ?? '',
    workflow_id: wf.workflowId,
    run_id: wf.runId,
    // The run's own result when it completed; otherwise the one rule `list` uses too.
    status: outcome?.status ?? outcomeStatusOf(stageFrom(sa.get(SA.Stage)), wf.closeTime !== undefined),
    ...judged,
    execution: outcome?.execution ?? null,
    agent_id: sa.get(SA.AgentId) ?? null,
    action_type: sa.get(SA.ActionType) ?? null,
    tier: sa.get(SA.Tier) ?? null,
    target: sa.get(SA.Target) ?? null,
    audit_flag: sa.get(SA.AuditFlag) ?? false,
    started_at: wf.startTime.toISOString(),
    closed_at: wf.closeTime?.toISOString() ?? null,
    source: 'server',
    decisions,
    ...(mcp ? { mcp } : {}),
  };
}

function fromArchive(record: ArchiveRecord, history: History): AuditRecord {
  const { outcome, judged, decisions, performer } = readHistory(history);
  const sa = searchAttributesOf(history);
  const text = (key: { name: string }) => {
    const v = sa.get(key.name);
    return typeof v === 'string' ? v : null;
  };
  const events = history.events ?? [];
  const startedAt = eventTimeIso(events[0]?.eventTime) ?? record.start_time;
  const mcp = mcpRecordOf(performer, outcome, judged.verdict, startedAt);
  return {
    proposal_id: outcome?.proposal_id ?? text(SA.ProposalId) ?? '',
    workflow_id: record.workflow_id,
    run_id: record.run_id,
    status: outcome?.status ?? outcomeStatusOf(stageFrom(text(SA.Stage) ?? undefined), true),
    ...judged,
    execution: outcome?.execution ?? null,
    agent_id: text(SA.AgentId),
    action_type: text(SA.ActionType),
    tier: text(SA.Tier),
    target: text(SA.Target),
    audit_flag: sa.get(SA.AuditFlag.name) === true,
    started_at: startedAt,
    closed_at: eventTimeIso(events.at(-1)?.eventTime) ?? record.close_time,
    source: 'archive',
    decisions,
    ...(mcp ? { mcp } : {}),
  };
}

/** One proposal run as the audit trail reads it: its record and the history it was read from. */
export interface AuditedRun {
  record: AuditRecord;
  history: History;
}

/**
 * Every proposal run since `sinceMs` with its history: the one reader behind `audit export` and `replay`. With
 * `archiveDir`, runs the server no longer has come from the archive (checked against their hash first: a tampered
 * file throws {@link ArchiveIntegrityError}).
 */
export async function* auditedRuns(
  client: Client,
  { sinceMs, archiveDir }: AuditSource = {},
): AsyncGenerator<AuditedRun> {
  const started = Date.now();
  const query = `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}'${sinceClause(sinceMs, started)}`;
  const seen = new Set<string>();
  for await (const wf of client.workflow.list({ query })) {
    if (seen.has(wf.runId)) continue;
    const history = await fetchIfPresent(client, wf);
    if (!history) continue;
    seen.add(wf.runId);
    yield { record: fromServer(wf, history), history };
  }
  if (archiveDir === undefined) return;
  const sinceEpochMs = sinceMs === undefined ? undefined : started - sinceMs;
  for (const record of archivedRuns(archiveDir, { skip: seen, sinceEpochMs })) {
    const history = readArchivedHistory(archiveDir, record);
    yield { record: fromArchive(record, history), history };
  }
}

/**
 * One record per proposal run since `sinceMs`, read from history alone (no worker needed): the final outcome and
 * every human decision that was accepted. With `archiveDir`, runs the server no longer has come from the archive
 * (checked against their hash first: a tampered file throws {@link ArchiveIntegrityError}).
 */
export async function* exportAudit(client: Client, source: AuditSource = {}): AsyncGenerator<AuditRecord> {
  for await (const { record } of auditedRuns(client, source)) yield record;
}

export { ArchiveIntegrityError, verifyArchive, type ArchiveVerdict } from './archive';
