/**
 * The short form of an outcome for a person at a terminal (`propose`, `status`, `clarify`, `decide`): status,
 * verdict, reason, what happens next and the command to follow, in a few lines. Scripts get the full JSON: with
 * `--json`, or whenever stdout is not a terminal (so `x=$(agent-judge status ...)` and pipes are unchanged).
 * Pure: no I/O, so it is tested by feeding it outcomes.
 */
import type { ProposalOutcome } from '../contracts/status';
import { inboxProposalUrl } from '../contracts/inbox-link';
import { UNCERTAIN_EXPLANATION } from '../contracts/lifecycle';
import { BadInputError } from '../contracts/errors';
import { cutDisplayText } from '../contracts/untrusted-text';

/** How a command prints its answer. */
export type OutputFormat = 'human' | 'json';

/**
 * `--format` (or `--json`) when given; otherwise the short form on a terminal and JSON elsewhere, so every script
 * and test that reads stdout keeps getting JSON.
 */
export function chooseOutputFormat(
  opts: { format?: string; json?: boolean },
  isTTY: boolean | undefined,
): OutputFormat {
  if (opts.json) return 'json';
  if (opts.format !== undefined) {
    if (opts.format !== 'human' && opts.format !== 'json')
      throw new BadInputError(`--format: expected human or json, got ${JSON.stringify(opts.format)}`);
    return opts.format;
  }
  return isTTY === true ? 'human' : 'json';
}

/**
 * Untrusted text (a model's reason, an argument name, an error) on one terminal line by the one display rule
 * (contracts/untrusted-text.ts): line breaks as ⏎, invisible and format characters named, agent-judge's marks as
 * `(icon)`; a cut says `… N more characters` and, given `where`, where to read it whole.
 */
function oneLine(text: string, max = 200, where?: string): string {
  return cutDisplayText(text.trim(), max, where).replace(/ {2,}/g, ' ');
}

/** What happens next and the command to follow, per status. */
function nextStep(o: ProposalOutcome, inboxUrl?: string): string[] {
  const id = o.proposal_id;
  switch (o.status) {
    case 'executed':
      return ['done: agent-judge performed the action', `see it again: agent-judge status ${id}`];
    case 'approved':
      return o.capability
        ? [
            ...(o.edited ? ['perform the edited action, not the proposal (edited.action in --json)'] : []),
            `you perform it: redeem its capability token once, before acting (valid until ${o.capability.expires_at})`,
            `  agent-judge capability verify <token> --redeem   (the token: agent-judge status ${id} --json)`,
          ]
        : ['approved: the caller performs the action', `see it again: agent-judge status ${id}`];
    case 'rejected':
      return [
        'final: the same content is refused again under any id',
        'revise it (a narrower scope, more evidence, a better justification) and propose the revision',
      ];
    case 'awaiting_clarification':
      return [
        'the judge asks for more: answer with more evidence, a narrower scope or a better justification',
        `  agent-judge clarify ${id} <clarification.json>`,
      ];
    case 'awaiting_human':
      return [
        'a person decides: an approver listed in the policy runs',
        `  agent-judge decide ${id} approve|reject --approver <id> [--reason <text>]`,
        ...(inboxUrl ? [`or in the inbox: ${inboxProposalUrl(inboxUrl, o.workflow_id)}`] : []),
        `then: agent-judge status ${id}`,
      ];
    case 'pending':
      return ['still being judged or executed', `follow it: agent-judge status ${id}`];
    case 'failed':
      return [
        'the action failed: nothing more will happen to this proposal',
        `details: agent-judge status ${id} --json`,
      ];
    case 'uncertain':
      // A caller-performed call: no executor died; the caller could not say whether the call succeeded.
      return o.caller
        ? [
            o.caller.outcome === 'unknown'
              ? 'performed once; its runtime did not report whether it succeeded: check its effects'
              : 'forwarded once; no outcome was reported in time: check the target to see whether it happened',
          ]
        : [UNCERTAIN_EXPLANATION];
    default:
      return [`agent-judge status ${id}`];
  }
}

/**
 * The short form of an outcome: a handful of aligned lines. With `inboxUrl` (`AGENT_JUDGE_INBOX_URL`), a proposal
 * waiting for a person also links to its page in the web inbox.
 */
export function renderOutcome(o: ProposalOutcome, inboxUrl?: string): string {
  const v = o.verdict;
  const rows: Array<[string, string]> = [
    ['proposal', o.proposal_id === o.workflow_id ? o.proposal_id : `${o.proposal_id} (workflow ${o.workflow_id})`],
    ['status', o.status],
  ];
  if (v) {
    const by = v.rule ? `${v.decided_by}, rule ${v.rule}` : v.decided_by;
    rows.push(['verdict', `${v.verdict} by ${by} (tier ${v.tier}, confidence ${v.confidence})`]);
    rows.push(['reason', oneLine(v.reason, 200, `agent-judge status ${o.proposal_id} --json`)]);
  }
  if (o.escalation_reason) rows.push(['why', oneLine(o.escalation_reason, 300)]);
  if (o.edited) {
    // Approved with edits: what is performed is the edited action; say each change, before and after.
    rows.push(['edited', `approved with ${o.edited.changes.length} edit(s): the edited action is what is performed`]);
    for (const c of o.edited.changes)
      rows.push(['', oneLine(`${c.path}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)}`, 160)]);
  }
  if (o.execution) {
    const e = o.execution;
    rows.push(['execution', `${e.status} by ${e.executor}${e.error ? `: ${oneLine(e.error, 160)}` : ''}`]);
  }
  if (o.caller?.outcome)
    rows.push(['caller', `${o.caller.outcome}${o.caller.detail ? `: ${oneLine(o.caller.detail)}` : ''}`]);
  const [first, ...rest] = nextStep(o, inboxUrl);
  rows.push(['next', first ?? '']);
  for (const line of rest) rows.push(['', line]);
  return `${rows.map(([k, val]) => (k ? `${k.padEnd(10)}${val}` : `${' '.repeat(10)}${val}`)).join('\n')}\n`;
}

/** The short form of a submission without `--wait`. */
export function renderSubmitted(s: { proposal_id: string; workflow_id: string }): string {
  return (
    `${'proposal'.padEnd(10)}${s.proposal_id} (workflow ${s.workflow_id})\n` +
    `${'status'.padEnd(10)}submitted\n` +
    `${'next'.padEnd(10)}agent-judge status ${s.proposal_id}   (or propose --wait to wait for the outcome)\n`
  );
}
