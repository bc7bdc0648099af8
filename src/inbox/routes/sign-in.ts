/**
 * Signing in with a passkey (a challenge, then its assertion), and signing out. A failed sign-in with an approver's
 * passkey id counts against that approver's rate limit.
 */
import type { Express } from 'express';
import type { InboxContext } from '../context';
import { HttpRefusal } from '../http-refusal';
import type { Session } from '../sessions';
import { signInChallenge, verifySignIn } from '../webauthn';

export function registerSignInRoutes(app: Express, ctx: InboxContext): void {
  const { logger, approvers, sessions, limitAddress, limitApprover, passkeys, setCookie, cookieName } = ctx;
  app.post('/sign-in/challenge', (req, res) => {
    limitAddress(req, 'sign-in');
    const { statement, challenge } = signInChallenge(ctx.site.rp);
    sessions.issue(res.locals.session as Session, challenge, { signIn: statement });
    res.json({ challenge });
  });

  app.post('/sign-in', (req, res) => {
    limitAddress(req, 'sign-in');
    const body = (req.body ?? {}) as { challenge?: unknown; assertion?: unknown };
    const old = res.locals.session as Session;
    const issued = sessions.take<{ signIn?: string }>(old, body.challenge);
    if (!issued?.signIn) throw new HttpRefusal(400, 'this sign-in was not started here, or took too long; start again');
    const known = passkeys();
    const signIn = verifySignIn(issued.signIn, body.assertion, known);
    if (!signIn.ok) {
      // A failed sign-in with an approver's passkey id counts against that approver.
      const claimed = (body.assertion as { credential_id?: unknown } | null | undefined)?.credential_id;
      const owner = Object.entries(known).find(([, list]) => list.some((c) => c.id === claimed))?.[0];
      if (owner) limitApprover(owner, 'sign-in');
      throw new HttpRefusal(401, signIn.refusal.reason);
    }
    const verified = signIn.value;
    if (!approvers.includes(verified.approver))
      throw new HttpRefusal(403, `${verified.approver} is not an approver in the policy (spec.escalation.approvers)`);
    const s = sessions.signIn(old, verified.approver, verified.credentialId);
    setCookie(res, s);
    logger.info({ approver: verified.approver }, 'signed in');
    res.json({ approver: verified.approver, message: `Signed in as ${verified.approver}.` });
  });

  app.post('/sign-out', (_req, res) => {
    sessions.signOut(res.locals.session as Session);
    res.clearCookie(cookieName(), { path: '/' });
    res.redirect(303, '/');
  });
}
