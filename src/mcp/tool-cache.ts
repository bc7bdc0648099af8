/**
 * The MCP proxy's cache of the upstream's tool definitions, by name: filled from the `tools/list` answers the agent
 * asks for and, when a called tool is not in it yet, from every page of the proxy's own `tools/list`; emptied when the
 * upstream says its list changed.
 */
import { augmentToolsList, type ToolDefinition } from './tools';

/** The upstream's answer to one of the proxy's own requests. */
type Answer = Record<string, unknown> & { result?: unknown; error?: unknown };

export class ToolCache {
  private readonly tools = new Map<string, ToolDefinition>();
  private complete = false;

  /** `ownRequest` sends the proxy's own request to the upstream and resolves with its answer. */
  constructor(private readonly ownRequest: (method: string, params: Record<string, unknown>) => Promise<Answer>) {}

  /** The upstream's list changed (`notifications/tools/list_changed`): everything is read again. */
  clear(): void {
    this.tools.clear();
    this.complete = false;
  }

  remember(result: Record<string, unknown>): void {
    const tools = Array.isArray(result.tools) ? (result.tools as ToolDefinition[]) : [];
    for (const t of tools) if (typeof t.name === 'string') this.tools.set(t.name, t);
  }

  /** Every page of the upstream's tools/list, into the cache; refuses a tool that collides with `_agent_judge`. */
  async loadAll(): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await this.ownRequest('tools/list', cursor ? { cursor } : {});
      if (!r.result) throw new Error(`the upstream refused tools/list: ${JSON.stringify(r.error)}`);
      const result = r.result as Record<string, unknown>;
      augmentToolsList(result); // throws on a collision
      this.remember(result);
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    this.complete = true;
  }

  /** The definition of the tool `name`: from the cache, or after reading every page of the upstream's list. */
  async named(name: string): Promise<ToolDefinition | undefined> {
    if (!this.tools.has(name) && !this.complete) await this.loadAll();
    return this.tools.get(name);
  }
}
