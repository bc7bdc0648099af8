/**
 * What every inbox request passes before a route sees it: the Host header must be the public one (no DNS rebinding),
 * every answer carries a strict Content-Security-Policy and no-store, every visitor has a session, bodies are
 * bounded, and every POST comes from our own origin with the session's CSRF token.
 */
import { randomBytes } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { refuseDeepJsonBody } from './body-depth';
import type { InboxContext } from './context';
import { sameToken, type Session } from './sessions';

/** Registers the guards on `app`, before any route. */
export function guardRequests(app: Express, ctx: InboxContext): void {
  const { site, sessions, cookieName, setCookie } = ctx;
  // Host header: a DNS-rebinding page (evil.example resolving to 127.0.0.1) gets nothing.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!site.allowedHosts.includes(req.headers.host ?? '')) {
      res.status(421).type('text/plain').send(`This inbox answers on ${site.rp.origin} only.\n`);
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

  app.use(express.json({ limit: '64kb', verify: refuseDeepJsonBody }));
  app.use(express.urlencoded({ extended: false, limit: '16kb' }));

  // Every POST: from our own origin, with the session's CSRF token.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    if (req.method !== 'POST') return void res.status(405).json({ message: 'method not allowed' });
    const origin = req.headers.origin;
    if (origin !== site.rp.origin)
      return void res.status(403).json({
        message: `refused: the request came from origin ${origin ?? '(none)'}, not ${site.rp.origin}`,
      });
    const s = res.locals.session as Session;
    const body = req.body as Record<string, unknown> | undefined;
    const given = req.headers['x-csrf-token'] ?? body?._csrf;
    if (!sameToken(given, s.csrf))
      return void res.status(403).json({ message: 'refused: the CSRF token is missing or wrong; reload the page' });
    next();
  });
}

/** The value of one cookie in a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
