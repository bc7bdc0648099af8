/**
 * The web approval inbox (`agent-judge inbox`, docs/inbox.md): an HTTP server on loopback by default where an
 * approver enrols a passkey by invite, signs in with it, sees the proposals waiting for them, and approves or rejects
 * with a decision their passkey signs. The inbox holds no key that can decide: it relays the assertion in the
 * `humanDecision` Update, and the proposal workflow verifies it against the registered passkey.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Client } from '@temporalio/client';
import {
  createGrant,
  grantDefinitionFor,
  grantStatus,
  listGrants,
  refuseGrantUnderPolicy,
  revokeGrant,
} from '../client/grants';
import { decide, decisionBindingOf, getStatus, listProposals } from '../client/proposals';
import { applyActionEdits } from '../contracts/action-edit';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import { codeToPin, GRANT_ID_RE, type GrantDefinition, type GrantRequest, type GrantStatus } from '../contracts/grant';
import type { HumanDecision } from '../contracts/messages';
import { WebAuthnOriginSchema } from '../contracts/passkey';
import type { CompliancePolicy } from '../contracts/policy';
import type { ProposalRecord } from '../contracts/status';
import { workflowIdNamedBy } from '../contracts/workflow-ids';
import { displayText } from '../contracts/untrusted-text';
import { DEFAULT_TASK_QUEUES } from '../names';
import type { DecisionBinding } from '../identity/decision';
import { refuseGrantSignature } from '../identity/grant';
import { addPasskey, mergePasskeys, readPasskeyRegistry, withPasskeys } from '../identity/passkey-registry';
import { passkeyChallenge, withPasskeyAssertion } from '../identity/sign-decision';
import { grantPasskeyChallenge, withGrantPasskeyAssertion } from '../identity/sign-grant';
import { BodyDepthRefusal, refuseDeepJsonBody } from './body-depth';
import { GrantFormRefusal, grantFromForm } from './grant-form';
import { page, type Html } from './html';
import { InviteStore } from './invites';
import {
  enrolPage,
  grantsPage,
  historyPage,
  inboxPage,
  messagePage,
  outcomeText,
  proposalPage,
  signInPage,
  type GrantBounds,
  type HistoryRow,
  type PendingRow,
} from './pages';
import { DecideRequestSchema, DecisionRequestSchema, readRequest, RevokeRequestSchema } from './requests';
import { PAGE_SCRIPT } from './script';
import { DEFAULT_RATE_LIMITS, RateLimiter, type RateLimit } from './rate-limit';
import { sameToken, sessionCookieName, SessionStore, type Session } from './sessions';
import { registrationOptions, signInChallenge, verifyRegistration, verifySignIn, type RelyingParty } from './webauthn';

export interface InboxOptions {
  client: Client;
  /** The policy the workers run: its approvers are who may enrol, sign in and decide. */
  policy: CompliancePolicy;
  /** The passkey registry file the inbox writes and the workflow worker reads (AGENT_JUDGE_PASSKEYS). */
  registryPath: string;
  /** Where invites are kept (the operator's `inbox invite` writes there too). */
  stateDir: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /**
   * The URL people open: its origin is the WebAuthn origin, its host name the rp id. Default `http://localhost:<port>`
   * (browsers refuse an IP address as an rp id, and allow http only on localhost).
   */
  publicUrl?: string;
  /** Required: the command's logger (enrolments, sign-ins, decisions, grants, and requests that failed). */
  logger: Logger;
  /** The workflow task queue the workers serve: only its proposals are listed (default agent-judge's). */
  taskQueue?: string;
  /**
   * Limits on sign-in and enrolment (default {@link DEFAULT_RATE_LIMITS}): per client address (every attempt), and per
   * approver (every enrolment attempt on their invite, every failed sign-in with their passkey's id).
   */
  rateLimits?: { perIp?: RateLimit; perApprover?: RateLimit };
}

export interface InboxServer {
  /** The public URL (its origin). */
  url: string;
  rp: RelyingParty;
  close(): Promise<void>;
}

/** The public URL's origin and rp id, or a message naming the flag and the rule. */
export function relyingPartyOf(publicUrl: string): RelyingParty {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw new BadInputError(`--public-url: expected a URL such as https://inbox.example.org, got ${publicUrl}`);
  }
  const origin = url.origin;
  if (!WebAuthnOriginSchema.safeParse(origin).success || url.pathname !== '/' || url.search || url.hash)
    throw new BadInputError(
      `--public-url: expected https://host[:port] with no path, or http://localhost[:port] (browsers allow ` +
        `passkeys over http on localhost only), got ${publicUrl}`,
    );
  if (/^\d+\.\d+\.\d+\.\d+$|^\[/.test(url.hostname))
    throw new BadInputError(
      `--public-url: a passkey's rp id must be a host name, not an IP address (${url.hostname}); use localhost`,
    );
  return { rpId: url.hostname, origin };
}

/** The link an invite token makes. */
export function inviteLink(publicUrl: string, token: string): string {
  return `${relyingPartyOf(publicUrl).origin}/enrol/${token}`;
}

/** Pending decision challenges: what the passkey is asked to sign, kept until the assertion comes back. */
interface PendingDecision {
  workflowId: string;
  decision: HumanDecision;
  binding: DecisionBinding;
  signed_at: string;
  nonce: string;
  /** With "approve and grant": the grant's definition and what the passkey signs for it (a second assertion). */
  grant?: { definition: GrantDefinition; signed_at: string; nonce: string; challenge: string; coverage: string };
}

/** Why a request was refused, with the HTTP status; the message is shown to the person as is. */
class HttpRefusal extends BadInputError {
  constructor(
    readonly status: number,
    message: string,
    /** For a 429: the seconds to wait (the Retry-After header). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** How long one status Query may take for a page: a proposal whose workers are gone does not hold the page up. */
const STATUS_QUERY_MS = 5000;

/** At most `limit` promises at once, in order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

export async function startInbox(options: InboxOptions): Promise<InboxServer> {
  const { client, policy, registryPath } = options;
  const { logger } = options;
  const approvers = policy.spec.escalation.approvers;
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow;
  /** A proposal's status for a page, or null when it cannot be had within STATUS_QUERY_MS. */
  const statusForListing = async (workflowId: string): Promise<ProposalRecord | null> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolveLate) => (timer = setTimeout(() => resolveLate(null), STATUS_QUERY_MS)));
    try {
      return await Promise.race([getStatus(client, workflowId).catch(() => null), late]);
    } finally {
      clearTimeout(timer);
    }
  };
  const invites = new InviteStore(`${options.stateDir}/invites`);
  const sessions = new SessionStore();
  const perIp = new RateLimiter(options.rateLimits?.perIp ?? DEFAULT_RATE_LIMITS.perIp);
  const perApprover = new RateLimiter(options.rateLimits?.perApprover ?? DEFAULT_RATE_LIMITS.perApprover);
  /** Counts one sign-in or enrolment attempt from the request's address; a 429 past the limit. */
  const limitAddress = (req: Request, what: string) => {
    // The socket's address: behind a reverse proxy every client shares the proxy's (limit there too).
    const wait = perIp.hit(`ip:${req.socket.remoteAddress ?? 'unknown'}`);
    if (wait !== null)
      throw new HttpRefusal(429, `too many ${what} attempts from this address; try again in ${wait} s`, wait);
  };
  /** Counts one attempt against `approver`; a 429 past the limit. */
  const limitApprover = (approver: string, what: string) => {
    const wait = perApprover.hit(`approver:${approver}`);
    if (wait !== null)
      throw new HttpRefusal(429, `too many ${what} attempts for ${approver}; try again in ${wait} s`, wait);
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');

  // Filled in once the port is known (port 0 picks one).
  let rp: RelyingParty = { rpId: 'localhost', origin: 'http://localhost' };
  let allowedHosts: string[] = [];
  let secure = false;
  const cookieName = () => sessionCookieName(secure);

  /** Every passkey the inbox knows: the registry file's and the policy's. */
  const passkeys = () =>
    mergePasskeys(policy.spec.escalation.approverPasskeys ?? {}, readPasskeyRegistry(registryPath).approvers);
  /** The credential ids the browser may use for `approver`'s assertions. */
  const ownPasskeyIds = (approver: string) => {
    const own = passkeys();
    return (Object.hasOwn(own, approver) ? (own[approver] ?? []) : []).map((k) => k.id);
  };

  // Host header: a DNS-rebinding page (evil.example resolving to 127.0.0.1) gets nothing.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!allowedHosts.includes(req.headers.host ?? '')) {
      res.status(421).type('text/plain').send(`This inbox answers on ${rp.origin} only.\n`);
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    res.locals.nonce = nonce;
    res.set({
      'Content-Security-Policy':
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; ` +
        "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
      'X-Frame-Options': 'DENY',
    });
    // Every visitor gets a session (and a CSRF token) on the first request.
    const id = cookieOf(req.headers.cookie, cookieName());
    let session = sessions.get(id);
    if (!session) {
      session = sessions.create();
      setCookie(res, session);
    }
    res.locals.session = session;
    next();
  });

  function setCookie(res: Response, s: Session): void {
    res.cookie(cookieName(), s.id, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: '/',
      maxAge: sessions.idleMs,
    });
  }

  app.use(express.json({ limit: '64kb', verify: refuseDeepJsonBody }));
  app.use(express.urlencoded({ extended: false, limit: '16kb' }));

  // Every POST: from our own origin, with the session's CSRF token.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    if (req.method !== 'POST') return void res.status(405).json({ message: 'method not allowed' });
    const origin = req.headers.origin;
    if (origin !== rp.origin)
      return void res.status(403).json({
        message: `refused: the request came from origin ${origin ?? '(none)'}, not ${rp.origin}`,
      });
    const s = res.locals.session as Session;
    const body = req.body as Record<string, unknown> | undefined;
    const given = req.headers['x-csrf-token'] ?? body?._csrf;
    if (!sameToken(given, s.csrf))
      return void res.status(403).json({ message: 'refused: the CSRF token is missing or wrong; reload the page' });
    next();
  });

  const send = (res: Response, title: string, body: Html, status = 200) => {
    const s = res.locals.session as Session;
    res
      .status(status)
      .type('html')
      .send(page(title, body, { script: PAGE_SCRIPT, nonce: res.locals.nonce as string, csrf: s.csrf }));
  };

  const signedIn = (res: Response): string => {
    const s = res.locals.session as Session;
    if (!s.approver) throw new HttpRefusal(401, 'sign in first');
    if (!approvers.includes(s.approver))
      throw new HttpRefusal(403, `${s.approver} is not an approver in the policy (spec.escalation.approvers)`);
    return s.approver;
  };

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

  const workflowIdOf = (req: Request): string => {
    const id = String(req.params.workflowId ?? '');
    if (workflowIdNamedBy(id) !== id) throw new HttpRefusal(404, `no proposal with workflow id ${id}`);
    return id;
  };

  // Pages ------------------------------------------------------------------------------------

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

  // Enrolment -------------------------------------------------------------------------------

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
    const options = await registrationOptions(rp, approver, existing);
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
    const verified = await verifyRegistration(rp, String(body.challenge), body.response, name);
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

  // Sign-in ---------------------------------------------------------------------------------

  app.post('/sign-in/challenge', (req, res) => {
    limitAddress(req, 'sign-in');
    const { statement, challenge } = signInChallenge(rp);
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

  // Decisions -------------------------------------------------------------------------------

  app.post('/p/:workflowId/challenge', async (req, res) => {
    const approver = signedIn(res);
    const workflowId = workflowIdOf(req);
    const read = readRequest(DecisionRequestSchema, req.body);
    if (!read.ok) throw new HttpRefusal(400, read.refusal.reason);
    const body = read.value;
    const reason = body.reason?.trim() ?? '';
    const status = await statusForListing(workflowId);
    if (!status) throw new HttpRefusal(404, `no proposal with workflow id ${workflowId}, or its workers do not answer`);
    if (status.stage !== 'awaiting_human')
      throw new HttpRefusal(409, `this proposal is no longer waiting for a decision: ${outcomeText(status)}`);
    if (status.decisions.some((d) => d.approver === approver))
      throw new HttpRefusal(409, 'you have already decided this proposal');
    // Edits are checked here with the function the workflow runs (the table, the action type's schema), so a refused
    // edit names its field and rule and nothing is signed or sent.
    if (body.edits) {
      const edited = applyActionEdits(status.proposal, body.edits);
      if (!edited.ok) throw new HttpRefusal(400, edited.refusal.reason);
    }
    const decision: HumanDecision = {
      decision: body.decision,
      approver,
      via: 'inbox',
      ...(reason ? { reason } : {}),
      ...(body.edits ? { edits: body.edits } : {}),
    };
    // A grant is made from the proposal as the run holds it, and bounded by the policy before anything is signed;
    // the page shows its coverage in words and the passkey signs only once the approver has seen them.
    let grant: PendingDecision['grant'];
    if (body.grant) {
      let made;
      try {
        made = grantFromForm(policy, status, approver, body.grant, reason);
      } catch (err) {
        if (err instanceof GrantFormRefusal) throw new HttpRefusal(err.status, err.message);
        throw err;
      }
      grant = { ...made, ...grantPasskeyChallenge(made.definition) };
    }
    const binding = await decisionBindingOf(client, workflowId, body.edits);
    const c = passkeyChallenge(binding, decision);
    const pending: PendingDecision = {
      workflowId,
      decision,
      binding,
      signed_at: c.signed_at,
      nonce: c.nonce,
      ...(grant ? { grant } : {}),
    };
    sessions.issue(res.locals.session as Session, c.challenge, pending);
    res.json({
      challenge: c.challenge,
      allow: ownPasskeyIds(approver),
      decision: decision.decision,
      reason: decision.reason ?? null,
      edited_sha256: binding.editedSha256 ?? null,
      grant: grant ? { challenge: grant.challenge, definition: grant.definition, coverage: grant.coverage } : null,
    });
  });

  app.post('/p/:workflowId/decide', async (req, res) => {
    const approver = signedIn(res);
    const workflowId = workflowIdOf(req);
    const raw = (req.body ?? {}) as { challenge?: unknown };
    // The challenge is taken first, whatever else is wrong: a signed decision is offered once.
    const pending = sessions.take<PendingDecision>(res.locals.session as Session, raw.challenge);
    if (!pending || pending.workflowId !== workflowId)
      throw new HttpRefusal(
        400,
        'refused: this signed decision was not requested here, was already used, or took too long; decide again',
      );
    const read = readRequest(DecideRequestSchema, req.body);
    if (!read.ok) throw new HttpRefusal(400, read.refusal.reason);
    const body = read.value;
    let grantRequest: GrantRequest | undefined;
    if (pending.grant) {
      if (!body.grant_assertion)
        throw new HttpRefusal(400, "grant_assertion: required: the passkey's assertion over the grant's challenge");
      grantRequest = withGrantPasskeyAssertion(pending.grant.definition, pending.grant, body.grant_assertion);
      // Checked here too (the grant workflow is the authority), so a bad grant signature decides nothing.
      const refusal = refuseGrantSignature(
        withPasskeys(policy, readPasskeyRegistry(registryPath).approvers),
        grantRequest,
        Date.now(),
      );
      if (refusal) throw new HttpRefusal(400, `grant: ${refusal.reason}; nothing was decided`);
    } else if (body.grant_assertion) throw new HttpRefusal(400, 'grant_assertion: no grant was asked for');
    const signed = withPasskeyAssertion(pending.binding, pending.decision, pending, body.assertion);
    let outcome;
    try {
      outcome = await decide(client, workflowId, signed);
    } catch (err) {
      throw new HttpRefusal(409, `Not accepted: ${(err as Error).message}`);
    }
    logger.info(
      { approver, decision: pending.decision.decision, workflow_id: workflowId, edits: !!pending.decision.edits },
      'decision relayed',
    );
    let granted: GrantStatus | undefined;
    let grantRefusal: string | undefined;
    if (grantRequest) {
      try {
        granted = await createGrant(client, grantRequest, { taskQueue });
        logger.info({ approver, grant_id: granted.definition.grant_id, workflow_id: workflowId }, 'grant made');
      } catch (err) {
        grantRefusal = (err as Error).message;
      }
    }
    const after = await getStatus(client, workflowId).catch(() => null);
    res.json({
      status: outcome.status,
      message: after ? outcomeText(after) : outcome.status,
      ...(granted
        ? {
            grant: {
              grant_id: granted.definition.grant_id,
              max_uses: granted.definition.max_uses,
              expires_at: granted.definition.expires_at,
            },
          }
        : {}),
      ...(grantRefusal ? { grant_refusal: `The decision was recorded, but not the grant: ${grantRefusal}` } : {}),
    });
  });

  // Grants ----------------------------------------------------------------------------------

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

  // Errors: a HttpRefusal says what to do; anything else is logged and stays vague.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // express.json's own refusals (not JSON, too large) carry a 4xx status.
    const bodyStatus = (err as { status?: unknown }).status;
    const badBody = typeof bodyStatus === 'number' && bodyStatus >= 400 && bodyStatus < 500;
    const known = err instanceof HttpRefusal || badBody;
    const status = err instanceof HttpRefusal ? err.status : badBody ? bodyStatus : 500;
    const message =
      err instanceof HttpRefusal
        ? err.message
        : err instanceof BodyDepthRefusal
          ? err.message
          : badBody
            ? 'the request body could not be read: expected JSON of at most 64 kB'
            : 'the inbox could not do that; try again';
    if (!known) logger.error({ method: req.method, path: req.path, err: (err as Error).message }, 'request failed');
    if (err instanceof HttpRefusal && err.retryAfter !== undefined) res.set('Retry-After', String(err.retryAfter));
    // A refusal may quote the sender's or the agent's text (an argument name): shown by the one display rule.
    if (req.method === 'POST') return void res.status(status).json({ message: displayText(message) });
    if (status === 401) return send(res, 'Sign in', signInPage(message), 401);
    send(res, 'Refused', messagePage('Refused', message), status);
  });

  const host = options.host ?? '127.0.0.1';
  const server: Server = await new Promise((resolveListen, rejectListen) => {
    const s = app.listen(options.port ?? 8787, host, (err?: Error) => (err ? rejectListen(err) : resolveListen(s)));
  });
  const port = (server.address() as AddressInfo).port;
  const publicUrl = options.publicUrl ?? `http://localhost:${port}`;
  rp = relyingPartyOf(publicUrl);
  secure = rp.origin.startsWith('https:');
  allowedHosts = [new URL(rp.origin).host];
  return {
    url: rp.origin,
    rp,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** The value of one cookie in a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
