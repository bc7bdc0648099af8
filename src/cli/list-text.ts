/**
 * `list` for a person at a terminal: proposals as a table (what each is about: the command, path or URL; an approval
 * still waiting for its token says so), and `list --hooks`: the hook calls the gate decided without a proposal (rule
 * refusals, calls its rules let run), from its hash-chained log. Pure: fed rows, returns text.
 */
import type { ListedProposal } from '../client/proposals/visibility';
import { renderTable, tableTime } from './table';

/** A listed status as a person reads it: an approval whose run is open waits for its token. */
function statusText(row: ListedProposal): string {
  return row.waiting_for === 'token' ? 'approved, waiting for its token' : row.status;
}

export function renderProposalTable(rows: readonly ListedProposal[]): string {
  return renderTable(
    [
      { header: 'STARTED', max: 19 },
      { header: 'STATUS', max: 32 },
      { header: 'VERDICT', max: 8 },
      { header: 'ACTION', max: 24 },
      { header: 'AGENT', max: 24 },
      { header: 'PROPOSAL', max: 48 },
      { header: 'ABOUT', max: 120 },
    ],
    rows.map((r) => [
      tableTime(r.started_at),
      statusText(r),
      r.verdict,
      r.action_type,
      r.agent_id,
      r.proposal_id,
      r.subject ?? r.target,
    ]),
    'no proposals',
  );
}

/** One line of the gate's hook log (src/hooks/gate-server.ts writes it), as `list --hooks` prints it. */
export interface HookCallRecord {
  /** `hook_no_judge` (a rule let it run) or `hook_refused` (a rule refused it). */
  kind?: unknown;
  agent?: string;
  runtime?: string;
  tool?: string;
  rule?: string | null;
  reason?: string;
  session_id?: string;
  at?: string;
}

export function renderHookCallTable(records: ReadonlyArray<HookCallRecord & Record<string, unknown>>): string {
  return renderTable(
    [
      { header: 'AT', max: 19 },
      { header: 'DECIDED', max: 16 },
      { header: 'RUNTIME', max: 12 },
      { header: 'AGENT', max: 24 },
      { header: 'TOOL', max: 32 },
      { header: 'RULE OR REASON', max: 160 },
    ],
    records.map((r) => [
      tableTime(r.at),
      r.kind === 'hook_no_judge' ? 'ran (no judge)' : r.kind === 'hook_refused' ? 'refused' : String(r.kind),
      r.runtime ?? null,
      r.agent ?? null,
      r.tool ?? null,
      r.kind === 'hook_refused' ? (r.reason ?? null) : (r.rule ?? null),
    ]),
    'no hook calls decided without a proposal',
  );
}
