/**
 * The inbox's pages: the proposals waiting for the signed-in approver, one proposal (with what "approve and grant"
 * may offer under the policy), and the approver's own decisions of the last 30 days.
 */
import type { Express } from 'express';
import { grantDefinitionFor, refuseGrantUnderPolicy } from '../../client/grants';
import { listProposals } from '../../client/proposals';
import { codeToPin, GRANT_ID_RE } from '../../contracts/grant';
import type { ProposalRecord } from '../../contracts/status';
import type { InboxContext } from '../context';
import { mapLimited } from '../listing';
import {
  historyPage,
  inboxPage,
  messagePage,
  outcomeText,
  proposalPage,
  signInPage,
  type GrantBounds,
  type HistoryRow,
  type PendingRow,
} from '../pages';
import type { Session } from '../sessions';

export function registerPageRoutes(app: Express, ctx: InboxContext): void {
  const { client, policy, approvers, taskQueue, send, signedIn, statusForListing, workflowIdOf } = ctx;
  /** What the page offers for "approve and grant": the policy's bounds, or why this proposal cannot be granted. */
  const grantBoundsFor = (status: ProposalRecord): GrantBounds => {
    let why: string | null;
    try {
      const probe = grantDefinitionFor(status.proposal, {
        approver: approvers[0] ?? 'nobody',
        lifetimeMs: 60_000,
        maxUses: 1,
        scope: { kind: 'identical' },
      });
      why = refuseGrantUnderPolicy(policy, probe)?.reason ?? null;
    } catch (err) {
      why = (err as Error).message;
    }
    return why
      ? { allowed: false, why }
      : {
          allowed: true,
          maxLifetime: String(policy.spec.grants.maxLifetime),
          maxUses: policy.spec.grants.maxUses,
          pinCode: codeToPin(policy.spec.grants.allowUnpinnedCode, status.proposal.action_type),
        };
  };

  app.get('/', async (_req, res) => {
    const s = res.locals.session as Session;
    if (!s.approver) return send(res, 'Sign in', signInPage());
    const approver = signedIn(res);
    const listed = await listProposals(client, { status: 'awaiting_human', limit: 200, taskQueue });
    const statuses = await mapLimited(listed, 8, (p) => statusForListing(p.workflow_id));
    const rows: PendingRow[] = statuses
      .filter((x): x is ProposalRecord => x !== null && x.stage === 'awaiting_human')
      .map((x) => ({ status: x, decidedByMe: x.decisions.some((d) => d.approver === approver) }));
    send(res, 'Pending', inboxPage(approver, s.csrf, rows));
  });

  app.get('/p/:workflowId', async (req, res) => {
    const s = res.locals.session as Session;
    if (!s.approver) return send(res, 'Sign in', signInPage('Sign in to see this proposal.'), 401);
    const approver = signedIn(res);
    const status = await statusForListing(workflowIdOf(req));
    if (!status)
      return send(
        res,
        'Not found',
        messagePage('Not found', 'There is no such proposal, or its workers do not answer; try again later.'),
        404,
      );
    const done = typeof req.query.done === 'string' ? req.query.done : undefined;
    const granted = typeof req.query.grant === 'string' && GRANT_ID_RE.test(req.query.grant) ? req.query.grant : null;
    const notice = done
      ? {
          text: `Your decision was recorded.${granted ? ` Grant ${granted} is live (see Your grants).` : ''}`,
          kind: 'ok' as const,
        }
      : undefined;
    send(res, status.proposal.action_type, proposalPage(status, approver, notice, { grants: grantBoundsFor(status) }));
  });

  app.get('/history', async (_req, res) => {
    const s = res.locals.session as Session;
    if (!s.approver) return send(res, 'Sign in', signInPage(), 401);
    const approver = signedIn(res);
    const listed = await listProposals(client, { sinceMs: 30 * 86_400_000, limit: 200, taskQueue });
    const statuses = await mapLimited(listed, 8, (p) => statusForListing(p.workflow_id));
    const rows: HistoryRow[] = [];
    for (const st of statuses) {
      const mine = st?.decisions.find((d) => d.approver === approver);
      if (st && mine)
        rows.push({
          workflow_id: st.workflow_id,
          proposal_id: st.proposal_id,
          action_type: st.proposal.action_type,
          decision: mine,
          outcome: outcomeText(st),
        });
    }
    rows.sort((a, b) => b.decision.at.localeCompare(a.decision.at));
    send(res, 'Your decisions', historyPage(approver, rows));
  });
}
