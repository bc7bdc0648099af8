/**
 * A refused inbox request: routes throw an {@link HttpRefusal} (a status and what to do), and {@link answerRefusals},
 * the last middleware, answers it: JSON to a POST, a page to a GET. Any other error is logged and stays vague.
 */
import type { NextFunction, Request, Response } from 'express';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import { displayText } from '../contracts/untrusted-text';
import { BodyDepthRefusal } from './body-depth';
import type { Html } from './html';
import { messagePage, signInPage } from './pages';

/** Why a request was refused, with the HTTP status; the message is shown to the person as is. */
export class HttpRefusal extends BadInputError {
  constructor(
    readonly status: number,
    message: string,
    /** For a 429: the seconds to wait (the Retry-After header). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** The error middleware: a HttpRefusal says what to do; anything else is logged and stays vague. */
export function answerRefusals(
  logger: Logger,
  send: (res: Response, title: string, body: Html, status?: number) => void,
): (err: unknown, req: Request, res: Response, next: NextFunction) => void {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
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
  };
}
