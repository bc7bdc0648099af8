/**
 * An approver's live grants, and revoking one of their own (`agent-judge grants revoke` revokes any).
 */
import type { Express } from 'express';
import { grantStatus, listGrants, revokeGrant } from '../../client/grants';
import { GRANT_ID_RE, type GrantStatus } from '../../contracts/grant';
import type { InboxContext } from '../context';
import { HttpRefusal } from '../http-refusal';
import { mapLimited } from '../listing';
import { grantsPage, signInPage } from '../pages';
import { readRequest, RevokeRequestSchema } from '../requests';
import type { Session } from '../sessions';

export function registerGrantRoutes(app: Express, ctx: InboxContext): void {
  const { client, logger, taskQueue, send, signedIn } = ctx;
  app.get('/grants', async (req, res) => {
    const s = res.locals.session as Session;
    if (!s.approver) return send(res, 'Sign in', signInPage(), 401);
    const approver = signedIn(res);
    const listed = (await listGrants(client, { taskQueue, limit: 500 })).filter((g) => g.approver === approver);
    const statuses = await mapLimited(listed, 8, (g) => grantStatus(client, g.grant_id).catch(() => null));
    const rows = statuses.filter((g): g is GrantStatus => g !== null && g.state === 'live');
    const revoked =
      typeof req.query.revoked === 'string' && GRANT_ID_RE.test(req.query.revoked) ? req.query.revoked : null;
    send(
      res,
      'Your grants',
      grantsPage(approver, rows, revoked ? { text: `Grant ${revoked} was revoked.`, kind: 'ok' } : undefined),
    );
  });

  app.post('/grants/:grantId/revoke', async (req, res) => {
    const approver = signedIn(res);
    const grantId = String(req.params.grantId ?? '');
    if (!GRANT_ID_RE.test(grantId))
      throw new HttpRefusal(400, 'grant_id: expected a grant id such as gabcdefghijklmnopqrst');
    const read = readRequest(RevokeRequestSchema, req.body);
    if (!read.ok) throw new HttpRefusal(400, read.refusal.reason);
    let status: GrantStatus;
    try {
      status = await grantStatus(client, grantId);
    } catch {
      throw new HttpRefusal(404, `no grant ${grantId}`);
    }
    // Deny by default: an approver revokes their own grants here (`agent-judge grants revoke` does any).
    if (status.definition.approver !== approver)
      throw new HttpRefusal(
        403,
        `grant ${grantId} is ${status.definition.approver}'s, not yours; you can revoke only your own`,
      );
    const reason = read.value.reason?.trim();
    let after: GrantStatus;
    try {
      after = await revokeGrant(client, grantId, { by: approver, ...(reason ? { reason } : {}) });
    } catch (err) {
      throw new HttpRefusal(409, `Not revoked: ${(err as Error).message}`);
    }
    logger.info({ approver, grant_id: grantId }, 'grant revoked');
    res.json({
      grant_id: grantId,
      state: after.state,
      message: `Grant ${grantId} revoked after ${after.uses.length} of ${after.definition.max_uses} uses.`,
    });
  });
}
