/**
 * Enrolment invites: a one-time, expiring link that lets whoever opens it register a passkey for one approver. The
 * operator makes one (`agent-judge inbox invite`), the inbox redeems it. One file per invite in the inbox's state
 * folder, named by the SHA-256 of the token (the token itself is stored nowhere): the operator's command and the
 * inbox are different processes, and a rename is the one step both can rely on to be atomic, so redeeming an
 * invite is renaming its file to `.used`; a second redemption finds no file and is refused. Node only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { BadInputError } from '../contracts/errors';
import { refused, type Checked } from '../contracts/refusal';

/** What an invite file holds. */
export const InviteSchema = z.strictObject({
  version: z.literal(1),
  approver: z.string().min(1).max(128),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
});
export type Invite = z.infer<typeof InviteSchema>;

/** A token as it appears in a link: 32 random bytes, unpadded base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The longest an invite may live: a link in a chat history should not stay good for ever. */
export const MAX_INVITE_MS = 30 * 86_400_000;

/** Why an invite cannot be used, in words for the person who opened the link. */
export type InviteRefusal = 'unknown' | 'used' | 'expired';

export const INVITE_REFUSALS: Record<InviteRefusal, string> = {
  unknown: 'This invite link is not valid. Ask your operator for a new one.',
  used: 'This invite link was already used. Ask your operator for a new one.',
  expired: 'This invite link has expired. Ask your operator for a new one.',
};

/** An invite refused, of code `invite.<why>`, in the words for the person who opened the link. */
const inviteRefused = (why: InviteRefusal) => refused(`invite.${why}`, INVITE_REFUSALS[why]);

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Invites in one folder (the inbox's state folder's `invites/`). */
export class InviteStore {
  constructor(readonly dir: string) {}

  /** A new invite for `approver`, good for `ttlMs`; returns the token (shown once, in the link). */
  create(approver: string, ttlMs: number, now = new Date()): { token: string; invite: Invite } {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > MAX_INVITE_MS)
      throw new BadInputError(`--expires: expected a duration from 1s to 30d, got ${ttlMs} ms`);
    const token = randomBytes(32).toString('base64url');
    const invite: Invite = {
      version: 1,
      approver,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + ttlMs).toISOString(),
    };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = this.path(token, 'json');
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(invite)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
    return { token, invite };
  }

  /** The invite a token names if it can still be used, or why not. Reads only: {@link redeem} uses it up. */
  check(token: string, now = Date.now()): Checked<Invite> {
    if (!TOKEN.test(token)) return inviteRefused('unknown');
    const open = this.read(this.path(token, 'json'));
    if (!open) return inviteRefused(this.read(this.path(token, 'used')) ? 'used' : 'unknown');
    if (Date.parse(open.expires_at) <= now) return inviteRefused('expired');
    return { ok: true, value: open };
  }

  /**
   * Uses the invite up: exactly one caller wins (the rename), every later one is refused as used. Checks the expiry
   * again, so an invite that expired between opening and finishing is refused.
   */
  redeem(token: string, now = Date.now()): Checked<Invite> {
    const checked = this.check(token, now);
    if (!checked.ok) return checked;
    try {
      renameSync(this.path(token, 'json'), this.path(token, 'used'));
    } catch {
      return inviteRefused('used');
    }
    return checked;
  }

  private path(token: string, kind: 'json' | 'used'): string {
    return join(this.dir, `${hashOf(token)}.${kind}`);
  }

  private read(path: string): Invite | null {
    try {
      const parsed = InviteSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }
}
