/**
 * The inbox's browser sessions, kept in memory (a restart signs everyone out; nothing secret is on disk). Every
 * visitor gets a session on the first page, signed in or not, so every POST (sign-in and enrolment included) carries
 * the session's CSRF token. Signing in replaces the session id, so an id planted before sign-in is worth nothing
 * after it. Pure apart from randomness and the clock.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A challenge the server issued and expects one assertion over, with what it is for. */
export interface PendingChallenge<T> {
  expiresAt: number;
  value: T;
}

export interface Session {
  id: string;
  /** The token every POST must carry (header `x-csrf-token` or form field `_csrf`). */
  csrf: string;
  /** The approver signed in, and with which passkey; null before sign-in. */
  approver: string | null;
  credentialId: string | null;
  expiresAt: number;
  /** Challenges issued to this session, by challenge: each used once. */
  challenges: Map<string, PendingChallenge<unknown>>;
}

/** The session cookie's name. `__Host-` (https only) pins it to this host and path `/`, no Domain. */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-agent-judge-inbox' : 'agent-judge-inbox';
}

/** How long a challenge is good for: a person at their phone, not a script that keeps it. */
export const CHALLENGE_MS = 5 * 60_000;

const token = () => randomBytes(32).toString('base64url');

/** True when `given` is exactly `expected` (constant time; both are our own tokens' length). */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(
    /** How long a signed-in session lasts without being used. */
    readonly idleMs = 12 * 3_600_000,
    private readonly now: () => number = Date.now,
    /** Sessions kept at most (the oldest go first), so a flood of anonymous visits cannot grow memory for ever. */
    private readonly max = 10_000,
  ) {}

  /** The live session with this id, its idle time renewed; undefined when unknown or expired. */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    s.expiresAt = this.now() + this.idleMs;
    return s;
  }

  /** A new anonymous session. */
  create(): Session {
    if (this.sessions.size >= this.max) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    const s: Session = {
      id: token(),
      csrf: token(),
      approver: null,
      credentialId: null,
      expiresAt: this.now() + this.idleMs,
      challenges: new Map(),
    };
    this.sessions.set(s.id, s);
    return s;
  }

  /** Signs `approver` in: a new session (new id, new CSRF token) replaces `old`. */
  signIn(old: Session, approver: string, credentialId: string): Session {
    this.sessions.delete(old.id);
    const s = this.create();
    s.approver = approver;
    s.credentialId = credentialId;
    return s;
  }

  signOut(s: Session): void {
    this.sessions.delete(s.id);
  }

  /** Remembers a challenge issued to `s` for one use. */
  issue<T>(s: Session, challenge: string, value: T): void {
    // Old challenges go: a session holds a few at most.
    for (const [c, p] of s.challenges) if (p.expiresAt <= this.now()) s.challenges.delete(c);
    if (s.challenges.size >= 20) {
      const oldest = s.challenges.keys().next().value;
      if (oldest !== undefined) s.challenges.delete(oldest);
    }
    s.challenges.set(challenge, { expiresAt: this.now() + CHALLENGE_MS, value });
  }

  /** Takes a challenge issued to `s` (it can never be taken again); undefined when unknown or expired. */
  take<T>(s: Session, challenge: unknown): T | undefined {
    if (typeof challenge !== 'string') return undefined;
    const p = s.challenges.get(challenge);
    if (!p) return undefined;
    s.challenges.delete(challenge);
    return p.expiresAt > this.now() ? (p.value as T) : undefined;
  }
}
