/**
 * The web approval inbox (`agent-judge inbox`, docs/inbox.md): an HTTP server on loopback by default where an
 * approver enrols a passkey by invite, signs in with it, sees the proposals waiting for them, and approves or rejects
 * with a decision their passkey signs. The inbox holds no key that can decide: it relays the assertion in the
 * `humanDecision` Update, and the proposal workflow verifies it against the registered passkey.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Client } from '@temporalio/client';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import { WebAuthnOriginSchema } from '../contracts/passkey';
import type { CompliancePolicy } from '../contracts/policy';
import { DEFAULT_TASK_QUEUES } from '../names';
import { inboxContext } from './context';
import { answerRefusals } from './http-refusal';
import type { RateLimit } from './rate-limit';
import { guardRequests } from './request-guards';
import { registerDecisionRoutes } from './routes/decisions';
import { registerEnrolmentRoutes } from './routes/enrolment';
import { registerGrantRoutes } from './routes/grants';
import { registerPageRoutes } from './routes/pages';
import { registerSignInRoutes } from './routes/sign-in';
import type { RelyingParty } from './webauthn';

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

/** Starts the inbox and resolves once it listens; routes are registered by area, after the request guards. */
export async function startInbox(options: InboxOptions): Promise<InboxServer> {
  const ctx = inboxContext({
    client: options.client,
    policy: options.policy,
    registryPath: options.registryPath,
    stateDir: options.stateDir,
    logger: options.logger,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow,
    ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
  });
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');

  guardRequests(app, ctx);
  registerPageRoutes(app, ctx);
  registerEnrolmentRoutes(app, ctx);
  registerSignInRoutes(app, ctx);
  registerDecisionRoutes(app, ctx);
  registerGrantRoutes(app, ctx);
  app.use(answerRefusals(ctx.logger, ctx.send));

  const host = options.host ?? '127.0.0.1';
  const server: Server = await new Promise((resolveListen, rejectListen) => {
    const s = app.listen(options.port ?? 8787, host, (err?: Error) => (err ? rejectListen(err) : resolveListen(s)));
  });
  const port = (server.address() as AddressInfo).port;
  const publicUrl = options.publicUrl ?? `http://localhost:${port}`;
  const rp = relyingPartyOf(publicUrl);
  ctx.site.rp = rp;
  ctx.site.secure = rp.origin.startsWith('https:');
  ctx.site.allowedHosts = [new URL(rp.origin).host];
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
