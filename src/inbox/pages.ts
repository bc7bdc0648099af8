/**
 * The inbox's pages, server-rendered: sign-in, enrolment, the pending list, a proposal (the dispute, the exact
 * action, the evidence and its checks, the deadline and the quorum), and an approver's own decisions. Pure functions
 * of what the server read; every agent-controlled string goes through `agentInline` / `agentBlock` (html.ts).
 */
import { ARGUMENT_FIELD, editableFields } from '../contracts/action-edit';
import type { GrantMatch, GrantStatus } from '../contracts/grant';
import { isFinalStatus, type EvidenceStatus } from '../contracts/lifecycle';
import type { Proposal } from '../contracts/proposal';
import type { DecisionRecord, ProposalRecord } from '../contracts/status';
import { proposalSubject } from '../contracts/subject';
import { cannotDecideNotice, whyCannotDecide } from './decidable';
import { agentBlock, agentInline, editPathLabel, hiddenCharactersNote, markup, type Html } from './html';

/** The evidence checks' words: ours, outside the agent's frame. */
const EVIDENCE_WORDS: Record<EvidenceStatus, string> = {
  verified: 'verified by the judge',
  failed: 'check failed',
  'other-repo': 'points at another repository',
  unverifiable: 'not verifiable',
};

/** "2 of 3 approvals" and who is still awaited, or the final outcome, in plain words. */
export function outcomeText(s: Pick<ProposalRecord, 'status' | 'decisions' | 'approvals_needed'>): string {
  const approvals = s.decisions.filter((d) => d.decision === 'approve').length;
  if (!isFinalStatus(s.status) && s.status === 'awaiting_human')
    return `Waiting for approvals: ${approvals} of ${Math.max(1, s.approvals_needed)}`;
  const words: Record<string, string> = {
    executed: 'Approved and executed',
    approved: 'Approved',
    rejected: 'Rejected',
    failed: 'Approved, but execution failed',
    uncertain: 'Approved, execution uncertain: check whether it happened',
    pending: 'Approved, executing',
    awaiting_clarification: 'Waiting for the agent to clarify',
  };
  return words[s.status] ?? s.status;
}

function confidenceText(c: number | null): string {
  return c === null ? '' : ` (confidence ${Math.round(c * 100)}%)`;
}

/** How a decision came, in words (the `via` of a decision). */
export const VIA_WORDS: Record<DecisionRecord['via'], string> = {
  cli: 'the CLI',
  api: 'the API',
  discord: 'Discord',
  slack: 'Slack',
  inbox: 'the inbox',
};

function decisionItem(d: DecisionRecord): Html {
  const edits = d.edits ? ` with ${d.edits.length} edit${d.edits.length === 1 ? '' : 's'}` : '';
  return markup`<li>
    ${d.approver} ${d.decision === 'approve' ? 'approved' : 'rejected'}${edits} at ${d.at} via
    ${VIA_WORDS[d.via] ?? d.via}${d.signature?.webauthn ? ' (signed with a passkey)' : d.signature ? ' (signed)' : ''}${
      d.reason ? markup`: ${agentInline(d.reason)}` : ''
    }
  </li>`;
}

/** What "approve and grant" may offer on a proposal: the policy's bounds, or why grants cannot cover it. */
export type GrantBounds =
  | {
      allowed: true;
      maxLifetime: string;
      maxUses: number;
      /** The code fields a pattern must keep equal on this action type (a grant never widens code), if any. */
      pinCode?: readonly string[];
    }
  | { allowed: false; why: string };

/** One editable field of the action with its current value, as the edit form shows it. */
interface EditField {
  path: string;
  kind: 'text' | 'json';
  value: string;
}

/** The fields an approver may narrow on this proposal (an MCP tool's arguments one by one), with current values. */
export function editFieldsOf(p: Proposal): EditField[] {
  const out: EditField[] = [];
  const field = (path: string, current: unknown) =>
    out.push(
      typeof current === 'string'
        ? { path, kind: 'text', value: current }
        : { path, kind: 'json', value: current === undefined ? '' : JSON.stringify(current) },
    );
  for (const path of editableFields(p)) {
    if (path === ARGUMENT_FIELD) {
      const args = p.parameters.arguments;
      if (typeof args === 'object' && args !== null && !Array.isArray(args))
        for (const [k, v] of Object.entries(args as Record<string, unknown>)) field(`parameters.arguments.${k}`, v);
      continue;
    }
    const [part, name] = path.split('.') as [string, string];
    const from = (part === 'scope_claim' ? p.scope_claim : p.parameters) as Record<string, unknown> | undefined;
    field(path, from && Object.hasOwn(from, name) ? from[name] : undefined);
  }
  return out;
}

function editSection(p: Proposal): Html {
  const fields = editFieldsOf(p);
  if (fields.length === 0)
    return markup`<p class="muted" id="no-edits">Nothing of a ${p.action_type} can be edited here: reject it and let the
      agent propose the narrower action.</p>`;
  return markup`<details id="edits">
    <summary>Approve with edits (narrow the action)</summary>
    <p class="muted">
      Change a field to narrow what is performed: a lower number, fewer paths, a shorter text. Only narrowing edits
      pass; your passkey signs the edited action. Values are JSON unless the field is text.
    </p>
    ${fields.map(
      (f) =>
        markup`<label
          >${editPathLabel(f.path)}${hiddenCharactersNote(f.value, f.kind === 'text')}<br /><textarea
            class="agent"
            rows="${f.kind === 'text' && f.value.length > 80 ? 4 : 1}"
            data-edit-path="${f.path}"
            data-kind="${f.kind}"
            data-original="${f.value}"
          >
${f.value}</textarea
          ></label
        ><br />`,
    )}
  </details>`;
}

function grantSection(p: Proposal, bounds: GrantBounds): Html {
  if (!bounds.allowed) return markup`<p class="muted" id="no-grant">No grant for this proposal: ${bounds.why}.</p>`;
  const fields = [
    ...Object.keys(p.target ?? {}).map((k) => `target.${k}`),
    ...Object.keys(p.parameters ?? {}).map((k) => `parameters.${k}`),
  ].filter((f) => /^(target|parameters)\.[A-Za-z0-9_-]{1,64}$/.test(f));
  return markup`<details id="grant">
    <summary>Approve and grant calls like this one</summary>
    <p class="muted">
      A grant approves calls like this one by ${agentInline(p.agent_id)} (${p.action_type}) for a while or a number of
      uses, without asking you (at most ${bounds.maxLifetime} and ${String(bounds.maxUses)} uses under the policy). Your
      passkey signs the grant as well as the decision.
    </p>
    <label><input type="checkbox" name="grant" value="yes" /> also grant</label><br />
    <label>for <input name="grant-minutes" type="number" min="1" value="30" /> minutes</label>
    <label
      >up to <input name="grant-uses" type="number" min="1" max="${String(bounds.maxUses)}" value="10" /> uses</label
    ><br />
    <p class="muted">
      Covers the identical action, unless you tick fields that must stay equal (the rest may change) or give a directory
      every path must lie in:
    </p>
    ${fields.map((f) => markup`<label><input type="checkbox" name="grant-same" value="${f}" /> ${f}</label> `)}<br />
    <label>under <input name="grant-under" placeholder="/srv/repo/src" /></label>
    ${
      bounds.pinCode?.length
        ? markup`<p class="muted" id="grant-pin-code">
            A grant never widens code: a pattern on a ${p.action_type} must keep
            ${bounds.pinCode.map((f) => `parameters.${f}`).join(' or ')} equal.
          </p>`
        : ''
    }
    ${
      p.session_id === undefined
        ? ''
        : markup`<br /><label
            ><input type="checkbox" name="grant-this-session" value="yes" /> only in this session
            (${p.session_id})</label
          >`
    }
  </details>`;
}

/** The sign-in page: one button, the passkey does the rest. */
export function signInPage(message?: string): Html {
  return markup`<h1>Sign in</h1>
    ${
      message
        ? markup`<p class="notice error" id="message">${message}</p>`
        : markup`<p class="notice" id="message" hidden></p>`
    }
    <p>Sign in with the passkey you enrolled. There is no password.</p>
    <button class="approve" id="sign-in" type="button">Sign in with a passkey</button>`;
}

/** The enrolment page an invite link opens. */
export function enrolPage(approver: string, token: string): Html {
  return markup`<h1>Enrol a passkey for ${approver}</h1>
    <p class="notice" id="message" hidden></p>
    <p>This link registers a passkey for the approver <strong>${approver}</strong>. It works once.</p>
    <form id="enrol" data-token="${token}">
      <label>Name for this passkey (optional)<br /><input name="name" maxlength="100" placeholder="phone" /></label
      ><br />
      <button class="approve" type="submit">Create a passkey</button>
    </form>`;
}

/** A page that only says something (an invite refused, a proposal not found). */
export function messagePage(title: string, text: string, kind: 'error' | 'ok' = 'error'): Html {
  return markup`<h1>${title}</h1>
    <p class="notice ${kind}" id="message">${text}</p>
    <p><a href="/">Back to the inbox</a></p>`;
}

export interface PendingRow {
  status: ProposalRecord;
  decidedByMe: boolean;
}

/** The approver's inbox: proposals waiting for a human that list them. */
export function inboxPage(approver: string, csrf: string, rows: readonly PendingRow[]): Html {
  const cards = rows.map(
    ({ status: s, decidedByMe }) =>
      markup`<div class="card pending" data-workflow-id="${s.workflow_id}">
        <a href="/p/${encodeURIComponent(s.workflow_id)}"
          >${s.proposal.action_type} by ${agentInline(s.proposal.agent_id)}</a
        >
        <div class="subject">about ${agentInline(proposalSubject(s.proposal))}</div>
        <div>target ${agentInline(targetText(s))}</div>
        <div class="muted">
          ${outcomeText(s)}${s.deadlines.human ? ` · decide by ${s.deadlines.human}` : ''}${
            decidedByMe ? ' · you have decided' : ''
          }
        </div>
        ${cannotDecideNotice(s, approver)}
      </div>`,
  );
  return markup`<h1>Pending for ${approver}</h1>
    ${rows.length === 0 ? markup`<p class="notice" id="empty">Nothing is waiting for you.</p>` : cards}
    <p><a href="/history">Your decisions</a> · <a href="/grants">Your grants</a></p>
    <form method="post" action="/sign-out">
      <input type="hidden" name="_csrf" value="${csrf}" /> <button class="plain" type="submit">Sign out</button>
    </form>`;
}

function targetText(s: ProposalRecord): string {
  return JSON.stringify(s.proposal.target ?? {});
}

/** The action as it would be performed: type, target, parameters; a file's content (or patch) in a block of its own. */
/** Parameters that are a file's text or a change to it: always shown whole, in a block of their own. */
const TEXT_PARAMETERS: Record<string, string> = {
  content: 'the file content as written',
  patch: 'the patch',
  body: 'the text',
};

/** A replacement edit as a readable diff: the old lines with `-`, the new ones with `+`. */
export function editDiff(edit: { old_string: string; new_string: string; replace_all?: boolean }): string {
  const minus = edit.old_string.split('\n').map((l) => `- ${l}`);
  const plus = edit.new_string.split('\n').map((l) => `+ ${l}`);
  return [...minus, ...plus].join('\n');
}

function isEdit(value: unknown): value is { old_string: string; new_string: string; replace_all?: boolean } {
  const v = value as { old_string?: unknown; new_string?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.old_string === 'string' && typeof v.new_string === 'string';
}

/** The action as it would be performed: type, target, parameters; a file's content, patch or edits as blocks. */
function actionSection(s: ProposalRecord): Html {
  const p = s.proposal;
  const params: Record<string, unknown> = p.parameters ?? {};
  const blocks: Html[] = [];
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'string' && (key in TEXT_PARAMETERS || value.includes('\n') || value.length > 120))
      blocks.push(agentBlock(`parameters.${key}${key in TEXT_PARAMETERS ? ` (${TEXT_PARAMETERS[key]})` : ''}`, value));
    else if (key === 'edits' && Array.isArray(value) && value.every(isEdit))
      value.forEach((edit, i) =>
        blocks.push(
          agentBlock(
            `parameters.edits[${i}]: replace${edit.replace_all ? ' every' : ''} (- old, + new)`,
            editDiff(edit),
          ),
        ),
      );
    else rest[key] = value;
  }
  return markup`<h2>The action</h2>
    <dl>
      <dt>type</dt>
      <dd>${p.action_type}</dd>
      <dt>agent</dt>
      <dd>${agentInline(p.agent_id)}</dd>
      <dt>target</dt>
      <dd>${agentInline(JSON.stringify(p.target ?? {}))}</dd>
    </dl>
    ${Object.keys(rest).length > 0 ? agentBlock('parameters', JSON.stringify(rest, null, 2)) : ''} ${blocks}`;
}

function evidenceSection(s: ProposalRecord): Html {
  const checks = new Map((s.verdict?.evidence_checks ?? []).map((c) => [c.index, c]));
  const items = s.proposal.cited_evidence.map((e, i) => {
    const check = checks.get(i);
    const state = check ? EVIDENCE_WORDS[check.status] : 'not checked';
    return markup`<li>
      <span class="evidence-state ${check?.status ?? 'unchecked'}">${state}</span>:
      ${agentInline([e.type, e.title, e.url, e.source].filter(Boolean).join(' · '))}${
        check?.detail ? markup` <span class="muted">(${agentInline(check.detail)})</span>` : ''
      }
    </li>`;
  });
  return markup`<h2>Evidence</h2>
    ${
      items.length
        ? markup`<ul>
          ${items}
        </ul>`
        : markup`<p>No evidence cited.</p>`
    }`;
}

/** A proposal: the dispute, the action, the evidence, the deadline and quorum, and the decision form. */
export function proposalPage(
  s: ProposalRecord,
  approver: string,
  notice?: { text: string; kind: 'ok' | 'error' },
  options: { grants?: GrantBounds } = {},
): Html {
  const mine = s.decisions.find((d) => d.approver === approver);
  const cannot = whyCannotDecide(s, approver);
  const open = s.stage === 'awaiting_human' && !mine && !cannot;
  const dispute = s.dispute;
  return markup`<h1>${s.proposal.action_type} by ${agentInline(s.proposal.agent_id)}</h1>
    ${
      notice
        ? markup`<p class="notice ${notice.kind}" id="message">${notice.text}</p>`
        : markup`<p class="notice" id="message" hidden></p>`
    }
    <p class="notice" id="outcome">${outcomeText(s)}</p>
    <dl>
      <dt>proposal</dt>
      <dd>${s.proposal_id}</dd>
      <dt>tier</dt>
      <dd>${s.tier}</dd>
      <dt>deadline</dt>
      <dd>${s.deadlines.human ?? 'none'}</dd>
      <dt>approvals</dt>
      <dd>
        ${s.decisions.filter((d) => d.decision === 'approve').length} of ${Math.max(1, s.approvals_needed)} needed
      </dd>
    </dl>
    <h2>The dispute</h2>
    ${dispute ? markup`<p>Why it came to you: ${agentInline(dispute.reason)}</p>` : ''}
    ${agentBlock("The agent's case", dispute?.actor_position ?? s.proposal.justification)}
    ${
      dispute
        ? agentBlock(`The judge's verdict${confidenceText(dispute.judge_confidence)}`, dispute.judge_position)
        : s.verdict
          ? agentBlock(`The judge's verdict: ${s.verdict.verdict}`, s.verdict.reason)
          : markup`<p>No verdict from the judge (this tier goes to people only).</p>`
    }
    ${actionSection(s)}
    ${
      s.edited
        ? markup`<h2>Approved with edits</h2>
          <ul id="edited">
            ${s.edited.changes.map(
              (c) =>
                markup`<li>
                  ${editPathLabel(c.path)}: ${agentInline(JSON.stringify(c.from))} →
                  ${agentInline(JSON.stringify(c.to))}
                </li>`,
            )}
          </ul>`
        : ''
    }
    ${evidenceSection(s)}
    <h2>Decisions</h2>
    ${
      s.decisions.length
        ? markup`<ul id="decisions">
          ${s.decisions.map(decisionItem)}
        </ul>`
        : markup`<p id="decisions">No decisions yet.</p>`
    }
    ${
      open
        ? markup`<h2>Your decision</h2>
          <form id="decide" data-workflow-id="${s.workflow_id}">
            <label>Reason<br /><textarea name="reason" maxlength="4096"></textarea></label><br />
            ${editSection(s.proposal)}
            ${options.grants ? grantSection(s.proposal, options.grants) : ''}
            <p class="notice error" id="decide-refusal" role="alert" hidden></p>
            <button class="approve" type="submit" name="decision" value="approve">Approve</button>
            <button class="reject" type="submit" name="decision" value="reject">Reject</button>
            <div class="notice" id="grant-confirm" hidden>
              <p>The grant will approve, without asking anyone:</p>
              <p id="grant-coverage"></p>
              <button class="approve" type="button" id="grant-sign">Sign the approval and this grant</button>
              <button type="button" id="grant-cancel">Cancel</button>
            </div>
            <p class="muted">
              Your passkey signs exactly this decision: this proposal (as edited, with edits), approve or reject, and
              the reason; and a grant, when you grant, as a second signature.
            </p>
          </form>`
        : mine
          ? markup`<p class="notice ok" id="mine">
            You ${mine.decision === 'approve' ? 'approved' : 'rejected'} this proposal.
          </p>`
          : s.stage === 'awaiting_human'
            ? cannotDecideNotice(s, approver)
            : ''
    }
    <p><a href="/">Back to the inbox</a></p>`;
}

export interface HistoryRow {
  workflow_id: string;
  proposal_id: string;
  action_type: string;
  decision: DecisionRecord;
  outcome: string;
}

/** The approver's own decisions, newest first. */
export function historyPage(approver: string, rows: readonly HistoryRow[]): Html {
  const body = rows.map(
    (r) =>
      markup`<tr>
        <td>${r.decision.at}</td>
        <td><a href="/p/${encodeURIComponent(r.workflow_id)}">${r.action_type}</a></td>
        <td>${r.decision.decision === 'approve' ? 'approved' : 'rejected'}</td>
        <td>${r.outcome}</td>
      </tr>`,
  );
  return markup`<h1>Decisions by ${approver}</h1>
    ${
      rows.length
        ? markup`<table id="history">
          <tr>
            <th>when</th>
            <th>proposal</th>
            <th>you</th>
            <th>outcome</th>
          </tr>
          ${body}
        </table>`
        : markup`<p class="notice" id="history">No decisions yet.</p>`
    }
    <p><a href="/">Back to the inbox</a></p>`;
}

/** What a grant covers, in words. */
export function grantCoverage(m: GrantMatch): string {
  if (m.kind === 'identical') return 'the identical action';
  return [
    ...Object.entries(m.target ?? {}).map(([k, v]) => `target.${k}=${JSON.stringify(v)}`),
    ...Object.entries(m.parameters ?? {}).map(([k, v]) => `parameters.${k}=${JSON.stringify(v)}`),
    ...(m.under ? [`under ${m.under}`] : []),
  ].join(', ');
}

/** The approver's live grants, each with a revoke button. */
export function grantsPage(
  approver: string,
  grants: readonly GrantStatus[],
  notice?: { text: string; kind: 'ok' | 'error' },
): Html {
  const cards = grants.map(
    (g) =>
      markup`<div class="card grant" data-grant-id="${g.definition.grant_id}">
        <div>
          <strong>${g.definition.grant_id}</strong>: ${g.definition.action_type} by
          ${agentInline(g.definition.agent_id)}
        </div>
        <div>
          covers ${agentInline(grantCoverage(g.definition.match))}${
            g.definition.session_id === undefined ? '' : markup` in session ${g.definition.session_id} only`
          }
        </div>
        <div class="muted">
          ${String(g.uses.length)} of ${String(g.definition.max_uses)} uses · until ${g.definition.expires_at}
        </div>
        <form class="revoke" data-grant-id="${g.definition.grant_id}">
          <input name="reason" maxlength="1024" placeholder="why (optional)" />
          <button class="reject" type="submit">Revoke</button>
        </form>
      </div>`,
  );
  return markup`<h1>Grants by ${approver}</h1>
    ${
      notice
        ? markup`<p class="notice ${notice.kind}" id="message">${notice.text}</p>`
        : markup`<p class="notice" id="message" hidden></p>`
    }
    ${grants.length === 0 ? markup`<p class="notice" id="no-grants">You have no live grants.</p>` : cards}
    <p><a href="/">Back to the inbox</a></p>`;
}
