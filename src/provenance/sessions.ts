/**
 * Every session's provenance in one process, bounded: at most {@link MAX_SESSIONS} sessions, the one least recently
 * used dropped first (a dropped session's later calls are judged as if it had read nothing untrusted: see
 * docs/provenance.md for what survives a restart).
 */
import { SessionProvenance, type ProvenanceSnapshot } from './store';

export const MAX_SESSIONS = 10_000;

export class ProvenanceSessions {
  private readonly sessions = new Map<string, SessionProvenance>();

  constructor(private readonly max = MAX_SESSIONS) {}

  /** The session's record, created when absent. */
  session(id: string): SessionProvenance {
    let s = this.sessions.get(id);
    if (s) this.sessions.delete(id);
    else s = new SessionProvenance();
    this.sessions.set(id, s);
    if (this.sessions.size > this.max) this.sessions.delete(this.sessions.keys().next().value!);
    return s;
  }

  /** The session's record when there is one (never creates it). */
  find(id: string): SessionProvenance | undefined {
    return this.sessions.get(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  toJSON(): Record<string, ProvenanceSnapshot> {
    return Object.fromEntries([...this.sessions].map(([id, s]) => [id, s.toJSON()]));
  }

  static fromJSON(snapshot: Record<string, ProvenanceSnapshot>, max = MAX_SESSIONS): ProvenanceSessions {
    const all = new ProvenanceSessions(max);
    for (const [id, s] of Object.entries(snapshot).slice(-max)) all.sessions.set(id, SessionProvenance.fromJSON(s));
    return all;
  }
}
