/**
 * The workflow worker's index of live grants (docs/grants.md): which grants may cover a proposal, found in memory so
 * a proposal pays no round trip when none does. Refreshed from Temporal visibility (running grant workflows of this
 * task queue, each definition in its memo) every `refreshMs`. Only candidates: a stale entry (a grant revoked since)
 * is refused by the grant's own workflow when the proposal asks it, and a grant not indexed yet simply is not used.
 */
import { Client, Connection } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import { GrantDefinitionSchema, type GrantDefinition } from '../contracts/grant';
import type { Proposal } from '../contracts/proposal';
import { GRANT_MEMO_KEY, GRANT_WORKFLOW_TYPE, grantWorkflowId } from '../names';
import { actionDigest } from '../contracts/capability';
import { grantedActionOf, matchCovers, sessionCovers } from '../policy/grants';

/** At most this many candidates are tried per proposal (each is one Update when the first ones refuse). */
const MAX_CANDIDATES = 3;

export interface LiveGrantsOptions {
  client: Client;
  /** The workflow task queue whose grants count. */
  taskQueue: string;
  logger: Logger;
  /** How often visibility is read (default 2 s). */
  refreshMs?: number;
}

/** Grant index refresh period by default: a new grant covers proposals within about this long. */
export const DEFAULT_GRANT_REFRESH_MS = 2000;

export class LiveGrants {
  private byAction = new Map<string, IndexedGrants>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private failing = false;
  private visibility: { client: Client; connection?: Connection } | undefined;

  constructor(private readonly options: LiveGrantsOptions) {}

  /** Live grants indexed now. */
  get size(): number {
    let n = 0;
    for (const list of this.byAction.values()) n += list.patterns.length + list.identicalCount;
    return n;
  }

  /** Reads visibility now (one refresh at a time; a caller during one waits for it). */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * Starts refreshing in the background while `alive()` holds (the worker it serves still runs); the timer never
   * keeps the process alive.
   */
  start(alive: () => boolean = () => true): this {
    if (this.timer) return this;
    void this.refresh();
    this.timer = setInterval(() => {
      if (alive()) void this.refresh();
      else this.stop();
    }, this.options.refreshMs ?? DEFAULT_GRANT_REFRESH_MS);
    this.timer.unref();
    return this;
  }

  /** Stops refreshing and closes the index's own connection (a read under way is cancelled; the index stays). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    const connection = this.visibility?.connection;
    this.visibility = undefined;
    void connection?.close().catch(() => undefined);
  }

  /**
   * The client visibility is read through: one of the index's own, on a connection without the client's gRPC retry
   * interceptor. A read that fails is simply tried again at the next refresh; and a retry waiting in its backoff timer
   * when the caller closes the shared connection would start a call on a closed channel, an uncaught error in
   * whichever process (or test) closed it.
   */
  private visibilityClient(): Client {
    if (this.visibility) return this.visibility.client;
    const { client } = this.options;
    if (!(client.connection instanceof Connection)) return (this.visibility = { client }).client;
    const connection = Connection.lazy({ ...client.connection.options, interceptors: [] });
    const own = new Client({
      connection,
      namespace: client.options.namespace,
      dataConverter: client.options.dataConverter,
    });
    return (this.visibility = { client: own, connection }).client;
  }

  /**
   * Grant ids that may cover the proposal (at most {@link MAX_CANDIDATES}, soonest expiry first), possibly none.
   * Identical-action grants are found by the action's digest (one hash, whatever their number); pattern grants of the
   * same agent and action type are compared one by one.
   */
  candidates(proposal: Proposal, nowMs = Date.now()): string[] {
    const list = this.byAction.get(key(proposal.agent_id, proposal.action_type));
    if (!list) return [];
    const action = grantedActionOf(proposal);
    const identical = list.identical.size > 0 ? list.identical.get(actionDigest(action)) : undefined;
    const out: string[] = [];
    for (const d of [...(identical ?? []), ...list.patterns]) {
      if (Date.parse(d.expires_at) <= nowMs) continue;
      if (!sessionCovers(d, action)) continue;
      if (d.match.kind === 'pattern' && !matchCovers(d.match, action)) continue;
      out.push(d.grant_id);
      if (out.length === MAX_CANDIDATES) break;
    }
    return out;
  }

  private async read(): Promise<void> {
    const { taskQueue, logger } = this.options;
    const client = this.visibilityClient();
    const next = new Map<string, IndexedGrants>();
    try {
      const query =
        `WorkflowType = '${GRANT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' ` + `AND TaskQueue = '${taskQueue}'`;
      for await (const w of client.workflow.list({ query })) {
        const parsed = GrantDefinitionSchema.safeParse(w.memo?.[GRANT_MEMO_KEY]);
        // A memo that is not a definition (started around agent-judge) is skipped: it can only ever be a candidate.
        if (!parsed.success || grantWorkflowId(parsed.data.grant_id) !== w.workflowId) continue;
        const d = parsed.data;
        const k = key(d.agent_id, d.action_type);
        let list = next.get(k);
        if (!list) next.set(k, (list = { identical: new Map(), identicalCount: 0, patterns: [] }));
        if (d.match.kind === 'identical') {
          const same = list.identical.get(d.match.action_sha256) ?? [];
          same.push(d);
          list.identical.set(d.match.action_sha256, same);
          list.identicalCount += 1;
        } else list.patterns.push(d);
      }
      const soonestFirst = (a: GrantDefinition, b: GrantDefinition) => a.expires_at.localeCompare(b.expires_at);
      for (const list of next.values()) {
        list.patterns.sort(soonestFirst);
        for (const same of list.identical.values()) same.sort(soonestFirst);
      }
      this.byAction = next;
      if (this.failing) logger.info({ event: 'grants.index', grants: this.size }, 'grant index readable again');
      this.failing = false;
    } catch (err) {
      // Keep the last index: its entries are only candidates, each grant's workflow still decides.
      if (!this.failing) logger.warn({ event: 'grants.index', err: (err as Error).message }, 'cannot read live grants');
      this.failing = true;
    }
  }
}

/** One agent's live grants for one action type. */
interface IndexedGrants {
  /** Identical-action grants by the action digest they name. */
  identical: Map<string, GrantDefinition[]>;
  identicalCount: number;
  patterns: GrantDefinition[];
}

function key(agentId: string, actionType: string): string {
  return `${agentId}\u0000${actionType}`;
}
