/**
 * What one session has seen, by where it came from: the values of every untrusted text that entered it (a web page, a
 * message, an untrusted tool's result), each with the first source it came from, and the values of its trusted text
 * (the user's task, the agent's own configuration), which a call may carry freely. Bounded: at most
 * {@link MAX_UNTRUSTED_VALUES} untrusted and {@link MAX_TRUSTED_VALUES} trusted values, the oldest dropped first, and a
 * snapshot is plain JSON, so a service can keep it where it keeps the session. Pure, no I/O.
 */
import { extractValues, foldText, valueKey, wholeArgumentKeys, type FoundValue, type ValueKind } from './values';

/** Untrusted values one session keeps (the oldest dropped first). */
export const MAX_UNTRUSTED_VALUES = 4096;
/** Trusted values one session keeps. */
export const MAX_TRUSTED_VALUES = 1024;
/** Characters of a source's name kept (`mcp:server/tool`, `claude-code:WebFetch`, ...). */
export const MAX_SOURCE_CHARS = 200;

/** Where an untrusted value first entered the session. */
export interface ValueSource {
  /** What delivered it: `mcp:<server>/<tool>`, `<runtime>:<tool>`, `a2a:<peer>`, ... */
  source: string;
  /** When it entered (ISO time), for the record. */
  at: string;
}

/** The session's record as plain JSON (what a service persists and reads back). */
export interface ProvenanceSnapshot {
  untrusted: Array<[key: string, source: string, at: string]>;
  trusted: string[];
  /** Injection-scan hits in the session's untrusted results (tool-result scanning). */
  scanHits: Array<{ source: string; marker: string; at: string }>;
}

/** One argument of a call that carries a value first seen in untrusted content. */
export interface Taint {
  /** Where in the arguments: `recipient`, `body`, `attachments[0]`. */
  argument: string;
  kind: ValueKind;
  /** The value as compared (normalised). */
  value: string;
  /** Where it first entered the session. */
  source: string;
}

/** Injection-scan hits one session keeps. */
const MAX_SCAN_HITS = 64;

/** One session's provenance. */
export class SessionProvenance {
  private readonly untrusted = new Map<string, ValueSource>();
  private readonly trusted = new Set<string>();
  /** Commands are matched inside longer arguments, so they are kept apart too. */
  private readonly commands = new Map<string, string>();
  readonly scanHits: ProvenanceSnapshot['scanHits'] = [];
  /** The user's task last recorded (trusted), so the same task is read once, not at every call. */
  private task: string | undefined;

  /** Records an untrusted text (a tool result, a fetched page, an inbound message). */
  recordUntrusted(text: string, source: string, at = new Date().toISOString()): number {
    const src = source.slice(0, MAX_SOURCE_CHARS);
    const values = extractValues(text);
    for (const v of values) this.addUntrusted(valueKey(v), src, at);
    return values.length;
  }

  /** Records a trusted text (the user's task, the agent's configuration): its values never taint. */
  recordTrusted(text: string): void {
    for (const v of extractValues(text)) {
      const key = valueKey(v);
      this.trusted.delete(key);
      this.trusted.add(key);
      if (this.trusted.size > MAX_TRUSTED_VALUES) this.trusted.delete(this.trusted.values().next().value!);
    }
  }

  /** Records the user's task as trusted text, once per distinct task. */
  recordTask(task: string): void {
    if (task === this.task) return;
    this.task = task;
    this.recordTrusted(task);
  }

  /** Records an injection-scan hit in an untrusted result (shown in later disputes). */
  recordScanHit(source: string, marker: string, at = new Date().toISOString()): void {
    if (this.scanHits.length >= MAX_SCAN_HITS) this.scanHits.shift();
    this.scanHits.push({ source: source.slice(0, MAX_SOURCE_CHARS), marker, at });
  }

  /**
   * Every argument carrying a value that first appeared in untrusted content and not in trusted content, with where
   * it came from. Deterministic: arguments in their order, values in the order they are found.
   */
  taintsOf(args: Record<string, unknown>): Taint[] {
    const out: Taint[] = [];
    if (this.untrusted.size === 0) return out;
    for (const [argument, text] of stringLeaves(args)) {
      const seen = new Set<string>();
      const hit = (v: FoundValue) => {
        const key = valueKey(v);
        if (seen.has(key) || this.trusted.has(key)) return;
        const from = this.untrusted.get(key);
        if (!from) return;
        seen.add(key);
        out.push({ argument, kind: v.kind, value: v.value, source: from.source });
      };
      // Quoted values are compared with whole arguments only (a quoted '13' must not taint every 13 in a text).
      for (const v of extractValues(text)) if (v.kind !== 'quoted') hit(v);
      for (const key of wholeArgumentKeys(text)) {
        const i = key.indexOf(':');
        hit({ kind: key.slice(0, i) as ValueKind, value: key.slice(i + 1) });
      }
      if (this.commands.size > 0) {
        const folded = foldText(text);
        for (const command of this.commands.keys()) {
          if (folded.includes(command)) hit({ kind: 'command', value: command });
        }
      }
    }
    return out;
  }

  /** How many values the session holds (untrusted, trusted). */
  get size(): { untrusted: number; trusted: number } {
    return { untrusted: this.untrusted.size, trusted: this.trusted.size };
  }

  toJSON(): ProvenanceSnapshot {
    return {
      untrusted: [...this.untrusted].map(([k, s]) => [k, s.source, s.at]),
      trusted: [...this.trusted],
      scanHits: [...this.scanHits],
    };
  }

  static fromJSON(snapshot: ProvenanceSnapshot): SessionProvenance {
    const s = new SessionProvenance();
    for (const [key, source, at] of snapshot.untrusted.slice(-MAX_UNTRUSTED_VALUES)) s.addUntrusted(key, source, at);
    for (const key of snapshot.trusted.slice(-MAX_TRUSTED_VALUES)) s.trusted.add(key);
    s.scanHits.push(...snapshot.scanHits.slice(-MAX_SCAN_HITS));
    return s;
  }

  private addUntrusted(key: string, source: string, at: string): void {
    // The first source is kept: that is where the value entered the session.
    if (this.untrusted.has(key)) return;
    this.untrusted.set(key, { source, at });
    if (key.startsWith('command:')) this.commands.set(key.slice('command:'.length), source);
    if (this.untrusted.size > MAX_UNTRUSTED_VALUES) {
      const oldest = this.untrusted.keys().next().value!;
      this.untrusted.delete(oldest);
      if (oldest.startsWith('command:')) this.commands.delete(oldest.slice('command:'.length));
    }
  }
}

/** Every string (and number) in a call's arguments with its path; keys are not values. */
export function stringLeaves(value: unknown, path = '', out: Array<[string, string]> = []): Array<[string, string]> {
  if (out.length >= 4096) return out;
  if (typeof value === 'string') out.push([path || '(arguments)', value]);
  else if (typeof value === 'number' && Number.isFinite(value)) out.push([path || '(arguments)', String(value)]);
  else if (Array.isArray(value)) value.forEach((v, i) => stringLeaves(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) stringLeaves(v, path ? `${path}.${k}` : k, out);
  }
  return out;
}
