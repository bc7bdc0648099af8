/**
 * `spec.mcp`: how the MCP judge proxy (`agent-judge mcp`) turns a `tools/call` into a proposal. First-match rules
 * from server and tool name (globs) to `tier: no-judge` or an action type whose target and parameters are read from
 * the call's arguments with a small path syntax ({@link parseArgumentPath}); no expression evaluation anywhere.
 */
import { z } from 'zod';
import { ActionTypeSchema, AgentIdSchema } from './proposal';
import { durationMs } from './duration';

/** The argument-path syntax: `$`, `$.a.b`, `$.a[0]`, `$["odd key"]`; a trailing `?` makes a missing value omitted. */
export type PathSegment = { key: string } | { index: number };
export interface ArgumentPath {
  segments: PathSegment[];
  optional: boolean;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*/;

/**
 * Parses one path expression, or returns the reason it is not one. A string not starting with `$` is not a path
 * (callers treat it as a literal); `$$` escapes a literal starting with `$`.
 */
export function parseArgumentPath(expr: string): ArgumentPath | string {
  if (!expr.startsWith('$') || expr.startsWith('$$')) return `${JSON.stringify(expr)} is not a path`;
  let rest = expr.slice(1);
  let optional = false;
  if (rest.endsWith('?')) {
    optional = true;
    rest = rest.slice(0, -1);
  }
  const segments: PathSegment[] = [];
  while (rest.length > 0) {
    if (rest.startsWith('.')) {
      const m = IDENT.exec(rest.slice(1));
      if (!m) return `path ${JSON.stringify(expr)}: expected a name after "."`;
      segments.push({ key: m[0] });
      rest = rest.slice(1 + m[0].length);
    } else if (rest.startsWith('[')) {
      const index = /^\[(0|[1-9][0-9]{0,5})\]/.exec(rest);
      const quoted = /^\["((?:[^"\\]|\\.){1,256})"\]/.exec(rest);
      if (index) {
        segments.push({ index: Number(index[1]) });
        rest = rest.slice(index[0].length);
      } else if (quoted) {
        segments.push({ key: JSON.parse(`"${quoted[1]}"`) as string });
        rest = rest.slice(quoted[0].length);
      } else return `path ${JSON.stringify(expr)}: expected [number] or ["key"]`;
    } else return `path ${JSON.stringify(expr)}: unexpected ${JSON.stringify(rest.slice(0, 10))}`;
    if (segments.length > 32) return `path ${JSON.stringify(expr)}: more than 32 steps`;
  }
  return { segments, optional };
}

/** The value at `path` in `root`, or undefined. Own properties only: `$.__proto__` finds nothing. */
export function readArgumentPath(root: unknown, path: ArgumentPath): unknown {
  let at: unknown = root;
  for (const s of path.segments) {
    if ('index' in s) {
      if (!Array.isArray(at)) return undefined;
      at = at[s.index];
    } else {
      if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
      if (!Object.prototype.hasOwnProperty.call(at, s.key)) return undefined;
      at = (at as Record<string, unknown>)[s.key];
    }
  }
  return at;
}

/** A template: JSON whose strings starting with `$` are argument paths (`$$` for a literal `$`). */
export type MappingTemplate = unknown;

/** Every problem in a template's paths, with where it sits (`target.path`), for policy validation. */
export function templateProblems(template: MappingTemplate, where: string): string[] {
  if (typeof template === 'string') {
    if (!template.startsWith('$') || template.startsWith('$$')) return [];
    const p = parseArgumentPath(template);
    return typeof p === 'string' ? [`${where}: ${p}`] : [];
  }
  if (Array.isArray(template)) return template.flatMap((t, i) => templateProblems(t, `${where}[${i}]`));
  if (template !== null && typeof template === 'object') {
    return Object.entries(template).flatMap(([k, v]) => templateProblems(v, `${where}.${k}`));
  }
  return [];
}

/**
 * The top-level argument names a template reads (`$.a.b` and `$["a"][0]` read `a`), or `'all'` when it reads the
 * whole arguments (`$`). What a rule does not read is not in its proposal unless the gate carries it
 * (`unmappedInput`): an approver must see every field that changes what runs.
 */
export function templateReads(template: MappingTemplate): Set<string> | 'all' {
  const reads = new Set<string>();
  const visit = (t: unknown): boolean => {
    if (typeof t === 'string') {
      if (!t.startsWith('$') || t.startsWith('$$')) return true;
      const path = parseArgumentPath(t);
      if (typeof path === 'string') return true;
      const first = path.segments[0];
      if (first === undefined || 'index' in first) return false;
      reads.add(first.key);
      return true;
    }
    if (Array.isArray(t)) return t.every(visit);
    if (t !== null && typeof t === 'object') return Object.values(t).every(visit);
    return true;
  };
  return visit(template) ? reads : 'all';
}

/**
 * Fills a template from a call's arguments. A missing value of a non-optional path is an error naming it (the
 * call is then denied); an optional one is left out.
 */
export function applyTemplate(template: MappingTemplate, args: unknown, where: string): unknown {
  if (typeof template === 'string') {
    if (template.startsWith('$$')) return template.slice(1);
    if (!template.startsWith('$')) return template;
    const path = parseArgumentPath(template);
    if (typeof path === 'string') throw new Error(`${where}: ${path}`);
    const value = readArgumentPath(args, path);
    if (value === undefined && !path.optional) throw new Error(`${where}: the call has no value at ${template}`);
    return value;
  }
  if (Array.isArray(template)) {
    return template.map((t, i) => applyTemplate(t, args, `${where}[${i}]`)).filter((v) => v !== undefined);
  }
  if (template !== null && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) {
      const filled = applyTemplate(v, args, `${where}.${k}`);
      if (filled !== undefined) out[k] = filled;
    }
    return out;
  }
  return template;
}

/** Glob over server and tool names: `*` any run of characters, `?` one character; everything else literal. */
export function globMatches(glob: string, name: string): boolean {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'su').test(name);
}

const Glob = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.*?:/@-]+$/, 'expected a glob of letters, digits, _ . : / @ - and the wildcards * ?');

const Template = z.record(z.string(), z.unknown());

export const McpRuleSchema = z
  .strictObject({
    /** A name for verdicts and the audit log; default `mcp.rules[i]`. */
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a rule name such as fs.write')
      .optional(),
    server: Glob.optional(),
    tool: Glob,
    /** `no-judge`: forwarded at once with one audit line and no workflow. */
    tier: z.literal('no-judge').optional(),
    actionType: ActionTypeSchema.optional(),
    target: Template.optional(),
    parameters: Template.optional(),
    /**
     * Top-level input fields that do not change what the call does (Claude Code's Bash `description`, text for the
     * user): neither carried in the proposal nor a reason to refuse. Every other field the templates do not read is.
     */
    ignore: z.array(z.string().min(1).max(256)).max(100).optional(),
    /**
     * What an input field the templates neither read nor `ignore` does: `carry` (default) puts it, verbatim, in the
     * proposal's `parameters.unmapped_input`, so the approver, the digest and a grant's scope see it; `refuse` refuses
     * the call, naming the field. An action type whose parameters have no `unmapped_input` always refuses.
     */
    unmappedInput: z.enum(['carry', 'refuse']).optional(),
  })
  .superRefine((rule, ctx) => {
    if ((rule.tier === undefined) === (rule.actionType === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a rule needs exactly one of tier: no-judge or actionType' });
    }
    if (rule.tier !== undefined && (rule.target !== undefined || rule.parameters !== undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a no-judge rule takes no target or parameters' });
    }
    if (rule.tier !== undefined && (rule.ignore !== undefined || rule.unmappedInput !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a no-judge rule makes no proposal: ignore and unmappedInput do not apply',
      });
    }
    const reads = templateReads([rule.target ?? {}, rule.parameters ?? {}]);
    (rule.ignore ?? []).forEach((field, i) => {
      if (reads === 'all' || reads.has(field)) {
        ctx.addIssue({
          code: 'custom',
          path: ['ignore', i],
          message: `target or parameters read ${JSON.stringify(field)}: a field the action uses is not ignored`,
        });
      }
    });
    for (const field of ['target', 'parameters'] as const) {
      for (const problem of templateProblems(rule[field] ?? {}, field)) {
        ctx.addIssue({ code: 'custom', path: [field], message: problem });
      }
    }
  });
export type McpRule = z.infer<typeof McpRuleSchema>;

const Duration = z.union([
  z.int().positive(),
  z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'expected a duration such as 30s, 5m, 1h or 7d'),
]);

/** One agent allowed on the Streamable HTTP front: its bearer token is kept only as a SHA-256 digest. */
export const McpHttpAgentSchema = z.strictObject({
  agent: AgentIdSchema,
  tokenSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected the SHA-256 of the token as 64 lowercase hex digits (agent-judge mcp token)'),
});
export type McpHttpAgent = z.infer<typeof McpHttpAgentSchema>;

/** A Host header value the front accepts besides the loopback names: a host name or address, optionally `:port`. */
const HostName = z
  .string()
  .min(1)
  .max(260)
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$/, 'expected a host such as mcp.example.org or host:port');

/** An Origin the front accepts besides the loopback origins of its port: scheme, host and optional port. */
const OriginName = z
  .string()
  .max(300)
  .regex(
    /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$/,
    'expected an origin such as https://app.example.org (scheme, host, optional port; no path)',
  );

/**
 * `agent-judge mcp --http`: who may connect (a bearer token per agent, hashed) and which Host/Origin headers are
 * accepted besides the loopback ones (DNS rebinding). The token decides the agent id of every proposal.
 */
export const McpHttpSettingsSchema = z
  .strictObject({
    agents: z.array(McpHttpAgentSchema).max(1000).default([]),
    allowedHosts: z.array(HostName).max(100).default([]),
    allowedOrigins: z.array(OriginName).max(100).default([]),
    /** A session with no open request for this long is closed (its upstream too): clients that vanish leak nothing. */
    sessionIdle: z
      .union([
        z.int().positive(),
        z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'expected a duration such as 30s, 5m, 1h or 7d'),
      ])
      .default('30m'),
  })
  .superRefine((http, ctx) => {
    const seen = new Map<string, number>();
    http.agents.forEach((a, i) => {
      const first = seen.get(a.tokenSha256);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['agents', i, 'tokenSha256'],
          message: `the same token digest as agents[${first}]: one token names one agent`,
        });
      } else seen.set(a.tokenSha256, i);
    });
  });
export type McpHttpSettings = z.infer<typeof McpHttpSettingsSchema>;

const HTTP_DEFAULTS = { agents: [], allowedHosts: [], allowedOrigins: [], sessionIdle: '30m' };

export const McpSettingsSchema = z
  .strictObject({
    /** The upstream's name in rules, audit lines and `mcp_tool_call` targets (`--server` overrides). */
    server: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'expected a server name such as filesystem')
      .default('upstream'),
    /** How long a call is held for a slow judge or a person before the answer is "pending: call again later". */
    holdFor: Duration.default('30s'),
    /** How long an approved proxied call may take to be forwarded and report its outcome. */
    performWithin: Duration.default('10m'),
    /**
     * How soon after a call its decision must come to be leased to the call by the Update that waits for it (the
     * policy, the rules); a later one (a model, a person) is leased by one round trip more (docs/mcp.md).
     */
    leaseWindow: Duration.default('2s'),
    rules: z.array(McpRuleSchema).max(1000).default([]),
    /** The Streamable HTTP front (`--http`): per-agent tokens and accepted Host/Origin headers. */
    http: McpHttpSettingsSchema.default(HTTP_DEFAULTS),
  })
  .default({
    server: 'upstream',
    holdFor: '30s',
    performWithin: '10m',
    leaseWindow: '2s',
    rules: [],
    http: HTTP_DEFAULTS,
  });
export type McpSettings = z.infer<typeof McpSettingsSchema>;

/** The hold bound in milliseconds. */
export function holdForMs(settings: Pick<McpSettings, 'holdFor'>): number {
  return durationMs(settings.holdFor);
}

/** The lease window in milliseconds (`leaseWindow`). */
export function leaseWindowMs(settings: Pick<McpSettings, 'leaseWindow'>): number {
  return durationMs(settings.leaseWindow);
}

/** The action type of tool calls no rule names: a person decides them by default. */
export const MCP_TOOL_CALL = 'mcp_tool_call';
/**
 * The action type of a tool call no rule maps that did not come through MCP (a coding agent's hook, a framework
 * adapter, the gate service's API): the same shape as an `mcp_tool_call`, named for what it is.
 */
export const TOOL_CALL = 'tool_call';

/** The property the proxy adds to every tool's input schema for the agent's justification. */
export const AGENT_JUDGE_ARGUMENT = '_agent_judge';

/** The `_meta` key under which every judged outcome carries its verdict. */
export const VERDICT_META_KEY = 'dev.agent-judge/verdict';
