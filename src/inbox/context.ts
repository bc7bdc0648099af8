/**
 * What the inbox's route areas share: the Temporal client and policy, the invite and session stores, the rate limits,
 * the public site (known once the server listens), and the few helpers every route uses: who is signed in, the
 * passkeys an approver has, a page sent with its script and CSRF token.
 */
import type { Request, Response } from 'express';
import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { ApproverPasskeys } from '../contracts/passkey';
import type { CompliancePolicy } from '../contracts/policy';
import type { ProposalRecord } from '../contracts/status';
import { workflowIdNamedBy } from '../contracts/workflow-ids';
import { mergePasskeys, readPasskeyRegistry } from '../identity/passkey-registry';
import { page, type Html } from './html';
import { HttpRefusal } from './http-refusal';
import { InviteStore } from './invites';
import { statusForListing } from './listing';
import { DEFAULT_RATE_LIMITS, RateLimiter, type RateLimit } from './rate-limit';
import { PAGE_SCRIPT } from './script';
import { sessionCookieName, SessionStore, type Session } from './sessions';
import type { RelyingParty } from './webauthn';

/** The public site: its relying party, the Host header it answers, and whether cookies are Secure. */
export interface Site {
  rp: RelyingParty;
  allowedHosts: string[];
  secure: boolean;
}

export interface InboxContext {
  client: Client;
  policy: CompliancePolicy;
  registryPath: string;
  logger: Logger;
  /** The workflow task queue whose proposals are listed. */
  taskQueue: string;
  /** The policy's approvers: who may enrol, sign in and decide. */
  approvers: readonly string[];
  invites: InviteStore;
  sessions: SessionStore;
  /** Filled in once the port is known (port 0 picks one). */
  site: Site;
  /** A proposal's status for a page, or null when it cannot be had in time. */
  statusForListing: (workflowId: string) => Promise<ProposalRecord | null>;
  /** Counts one sign-in or enrolment attempt from the request's address; a 429 past the limit. */
  limitAddress: (req: Request, what: string) => void;
  /** Counts one attempt against `approver`; a 429 past the limit. */
  limitApprover: (approver: string, what: string) => void;
  /** The session cookie's name (`__Host-` prefixed over https). */
  cookieName: () => string;
  /** Every passkey the inbox knows: the registry file's and the policy's. */
  passkeys: () => ApproverPasskeys;
  /** The credential ids the browser may use for `approver`'s assertions. */
  ownPasskeyIds: (approver: string) => string[];
  setCookie: (res: Response, s: Session) => void;
  /** A whole page, with the page script (its nonce) and the session's CSRF token. */
  send: (res: Response, title: string, body: Html, status?: number) => void;
  /** The signed-in approver, or a 401 (not signed in) or 403 (no longer an approver). */
  signedIn: (res: Response) => string;
  /** The workflow id a route names, or a 404 when it is not a proposal's. */
  workflowIdOf: (req: Request) => string;
}

/** What the options of `startInbox` need beyond the context: where invites live and the rate limits. */
export interface InboxContextOptions {
  client: Client;
  policy: CompliancePolicy;
  registryPath: string;
  stateDir: string;
  logger: Logger;
  taskQueue: string;
  rateLimits?: { perIp?: RateLimit; perApprover?: RateLimit };
}

/** The context of one inbox server; `site` starts as localhost and is set once the server listens. */
export function inboxContext(options: InboxContextOptions): InboxContext {
  const { client, policy, registryPath, logger, taskQueue } = options;
  const approvers = policy.spec.escalation.approvers;
  const site: Site = { rp: { rpId: 'localhost', origin: 'http://localhost' }, allowedHosts: [], secure: false };
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

  const cookieName = () => sessionCookieName(site.secure);

  /** Every passkey the inbox knows: the registry file's and the policy's. */
  const passkeys = () =>
    mergePasskeys(policy.spec.escalation.approverPasskeys ?? {}, readPasskeyRegistry(registryPath).approvers);
  /** The credential ids the browser may use for `approver`'s assertions. */
  const ownPasskeyIds = (approver: string) => {
    const own = passkeys();
    return (Object.hasOwn(own, approver) ? (own[approver] ?? []) : []).map((k) => k.id);
  };

  function setCookie(res: Response, s: Session): void {
    res.cookie(cookieName(), s.id, {
      httpOnly: true,
      sameSite: 'strict',
      secure: site.secure,
      path: '/',
      maxAge: sessions.idleMs,
    });
  }

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

  const workflowIdOf = (req: Request): string => {
    const id = String(req.params.workflowId ?? '');
    if (workflowIdNamedBy(id) !== id) throw new HttpRefusal(404, `no proposal with workflow id ${id}`);
    return id;
  };

  return {
    client,
    policy,
    registryPath,
    logger,
    taskQueue,
    approvers,
    invites,
    sessions,
    site,
    statusForListing: (workflowId) => statusForListing(client, workflowId),
    limitAddress,
    limitApprover,
    cookieName,
    passkeys,
    ownPasskeyIds,
    setCookie,
    send,
    signedIn,
    workflowIdOf,
  };
}
