/**
 * Enrolment by invite: the invite's page, the WebAuthn registration options, and the registration itself, which adds
 * the passkey to the registry file the workflow worker reads. An invite is used up only by a registration that
 * verified.
 */
import type { Express } from 'express';
import { addPasskey } from '../../identity/passkey-registry';
import type { InboxContext } from '../context';
import { HttpRefusal } from '../http-refusal';
import { enrolPage, messagePage } from '../pages';
import type { Session } from '../sessions';
import { registrationOptions, verifyRegistration } from '../webauthn';

export function registerEnrolmentRoutes(app: Express, ctx: InboxContext): void {
  const { registryPath, logger, approvers, invites, sessions, limitAddress, limitApprover, passkeys, send } = ctx;
  app.get('/enrol/:token', (req, res) => {
    limitAddress(req, 'enrolment');
    const checked = invites.check(String(req.params.token));
    if (!checked.ok) return send(res, 'Invite refused', messagePage('Invite refused', checked.refusal.reason), 410);
    send(res, 'Enrol', enrolPage(checked.value.approver, String(req.params.token)));
  });

  app.post('/enrol/:token/options', async (req, res) => {
    limitAddress(req, 'enrolment');
    const checked = invites.check(String(req.params.token));
    if (!checked.ok) throw new HttpRefusal(410, checked.refusal.reason);
    const approver = checked.value.approver;
    limitApprover(approver, 'enrolment');
    const existing = Object.hasOwn(passkeys(), approver) ? (passkeys()[approver] ?? []) : [];
    const options = await registrationOptions(ctx.site.rp, approver, existing);
    sessions.issue(res.locals.session as Session, options.challenge, { enrol: String(req.params.token) });
    res.json(options);
  });

  app.post('/enrol/:token', async (req, res) => {
    limitAddress(req, 'enrolment');
    const token = String(req.params.token);
    const body = (req.body ?? {}) as { challenge?: unknown; response?: unknown; name?: unknown };
    const issued = sessions.take<{ enrol: string }>(res.locals.session as Session, body.challenge);
    if (!issued || issued.enrol !== token)
      throw new HttpRefusal(400, 'this registration was not started here, or took too long; start again');
    const invited = invites.check(token);
    if (invited.ok) limitApprover(invited.value.approver, 'enrolment');
    const name = typeof body.name === 'string' && body.name.trim() ? body.name.trim().slice(0, 100) : undefined;
    const verified = await verifyRegistration(ctx.site.rp, String(body.challenge), body.response, name);
    if (!verified.ok) throw new HttpRefusal(400, verified.refusal.reason);
    // The invite is used up only by a registration that verified; exactly one redemption wins.
    const redeemed = invites.redeem(token);
    if (!redeemed.ok) throw new HttpRefusal(410, redeemed.refusal.reason);
    const approver = redeemed.value.approver;
    if (!approvers.includes(approver))
      throw new HttpRefusal(403, `${approver} is no longer an approver in the policy (spec.escalation.approvers)`);
    try {
      addPasskey(registryPath, approver, verified.value);
    } catch (err) {
      // Already registered, or the registry file is unreadable: say which; the invite stays used.
      throw new HttpRefusal(409, `the passkey was not added: ${(err as Error).message}`);
    }
    logger.info({ approver, credential_id: verified.value.id.slice(0, 16) }, 'passkey enrolled');
    res.json({
      message:
        `Passkey enrolled for ${approver}. It signs decisions on proposals that start from now on. ` +
        'Sign in at the inbox start page.',
      approver,
      credential_id: verified.value.id,
    });
  });
}
