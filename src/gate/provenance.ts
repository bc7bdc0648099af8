/**
 * The gate's provenance (docs/provenance.md): every runtime hands it the results of the calls it performed (hooks'
 * post-tool events, the MCP proxy's tool results), and it records those of untrusted sources in the session's store
 * and scans them with the judge's injection scan; a later consequential call whose arguments carry such a value gets
 * the provenance on its proposal (which argument, which value, from where). One object per process, shared by the
 * gates of every agent and runtime; sessions are the agent's own (an agent cannot mark another's session).
 */
import type { ProposalProvenance, ProvenanceSettings } from '../contracts/provenance';
import { scanText } from '../policy/injection-scan';
import { ProvenanceSessions } from '../provenance/sessions';
import { isUntrustedSource, provenanceFor, sourceName } from '../provenance/policy';
import type { SessionProvenance } from '../provenance/store';
import type { GateToolCall } from './types';

/** Characters of one result read (the rest is not recorded; docs/provenance.md). */
export const MAX_RESULT_CHARS = 256 * 1024;

/** A call whose result came back: who made it, in which session, with which tool. */
export interface PerformedCall {
  agentId: string;
  runtime: string;
  server: string;
  tool: string;
  /** The runtime's session; absent (the MCP proxy over stdio), the agent's one connection is the session. */
  sessionId?: string;
}

/** What recording one result did: the values it added, the injection markers it carried. */
export interface RecordedResult {
  untrusted: boolean;
  values: number;
  markers: string[];
}

export class GateProvenance {
  readonly sessions: ProvenanceSessions;

  constructor(
    readonly settings: ProvenanceSettings,
    sessions?: ProvenanceSessions,
    private readonly onScanHit?: (call: PerformedCall, markers: string[]) => void,
  ) {
    this.sessions = sessions ?? new ProvenanceSessions();
  }

  /** Records a performed call's result: an untrusted source's values enter the session, and are scanned. */
  recordResult(call: PerformedCall, result: unknown): RecordedResult {
    const source = sourceName(call.runtime, call.server, call.tool);
    if (!this.settings.enabled || !isUntrustedSource(this.settings, source)) {
      return { untrusted: false, values: 0, markers: [] };
    }
    const text = resultText(result);
    const session = this.sessions.session(sessionKey(call.agentId, call.runtime, call.sessionId));
    const values = session.recordUntrusted(text, source);
    const markers = scanText(text);
    for (const m of markers) session.recordScanHit(source, m);
    if (markers.length > 0) this.onScanHit?.(call, markers);
    return { untrusted: true, values, markers };
  }

  /** The provenance a call's proposal carries (undefined: not tainted, not consequential, or provenance off). */
  provenanceOf(agentId: string, call: GateToolCall, actionType: string): ProposalProvenance | undefined {
    if (!this.settings.enabled) return undefined;
    const key = sessionKey(agentId, call.runtime, call.session?.sessionId);
    const session: SessionProvenance | undefined = call.userTask ? this.sessions.session(key) : this.sessions.find(key);
    if (!session) return undefined;
    if (call.userTask) session.recordTask(call.userTask);
    return provenanceFor(this.settings, session, actionType, call.arguments);
  }
}

/** One agent's session in one runtime (an agent names only its own sessions). */
export const sessionKey = (agentId: string, runtime: string, sessionId: string | undefined): string =>
  `${agentId}|${runtime}|${sessionId ?? '(connection)'}`;

/** A result as text: a string as it is, anything else as JSON, cut to {@link MAX_RESULT_CHARS}. */
export function resultText(result: unknown): string {
  let text: string;
  if (typeof result === 'string') text = result;
  else {
    try {
      text = JSON.stringify(result) ?? '';
    } catch {
      text = '';
    }
  }
  return text.length > MAX_RESULT_CHARS ? text.slice(0, MAX_RESULT_CHARS) : text;
}
