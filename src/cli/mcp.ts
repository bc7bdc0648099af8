/**
 * `agent-judge mcp`: the MCP judge proxy in front of one upstream (a stdio command or `--upstream-url`), served to
 * the agent over stdio or, with `--http`, over Streamable HTTP to several agents with their own tokens;
 * `agent-judge mcp check`, which shows what the policy makes of each of the upstream's tools; `agent-judge mcp
 * token`, which makes an agent's bearer token. MCP clients start stdio servers with a near-empty environment, so
 * everything comes from flags and the policy file; anything missing or wrong refuses the start.
 */
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { Client } from '@temporalio/client';
import type { LimitName } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import type { McpCounters } from '../metrics/mcp';
import { AgentJudgeError, BadInputError } from '../contracts/errors';
import { AgentIdSchema } from '../contracts/proposal';
import type { CompliancePolicy } from '../contracts/policy';
import { taskQueuesFor } from '../names';
import { loadPolicyLayers, type LoadedPolicy } from '../policy/load';
import { tierFor } from '../policy/classify';
import { printJson } from './io';
import { chooseOutputFormat } from './outcome-text';
import { matchRule } from '../mcp/mapping';
import { MCP_TOOL_CALL } from '../contracts/mcp';
import { describeUpstream, oneLine, upstreamSpec, type UpstreamSpec } from '../mcp/upstream';

interface McpFlags {
  agent?: string;
  policy?: string;
  server?: string;
  address?: string;
  namespace?: string;
  taskQueuePrefix?: string;
  stateDir: string;
  upstreamUrl?: string;
  http?: string;
  allowRemote?: boolean;
  metrics?: string;
}

function requireFlag(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value.trim() === '') throw new BadInputError(`${flag}: required (${what})`);
  return value;
}

async function policyFrom(flag: string | undefined): Promise<LoadedPolicy> {
  return loadPolicyLayers({ path: requireFlag(flag, '--policy', 'the CompliancePolicy file with spec.mcp') });
}

function serverName(flag: string | undefined, policy: CompliancePolicy): string {
  if (flag === undefined) return policy.spec.mcp.server;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(flag)) {
    throw new BadInputError(`--server: expected a server name such as filesystem, got ${JSON.stringify(flag)}`);
  }
  return flag;
}

/** `mcp check`'s flags. */
interface McpCheckOptions {
  policy?: string;
  server?: string;
  upstreamUrl?: string;
  json?: boolean;
  format?: string;
}

export function registerMcpCommands(program: Command): void {
  program.enablePositionalOptions();
  const mcp = program
    .command('mcp')
    .description('judge every tools/call of one MCP server: an MCP server (stdio or --http) in front of the upstream')
    .usage('--agent <id> --policy <file> [options] [--] <upstream command...> | --upstream-url <url>')
    .argument('[upstream...]', 'the upstream MCP server command and its arguments')
    .option('--agent <id>', 'the agent whose calls these are (e.g. @engineering); with --http the token decides')
    .option('--upstream-url <url>', 'the upstream is a Streamable HTTP MCP server at this URL (instead of a command)')
    .option('--http <host:port>', 'serve Streamable HTTP on http://HOST:PORT/mcp (bearer tokens: spec.mcp.http)')
    .option('--allow-remote', '--http on a non-loopback address (put TLS in front: tokens travel in every request)')
    .option(
      '--metrics <host:port>',
      'serve Prometheus metrics of what the proxy refuses (dropped messages, sessions, limits) on HOST:PORT/metrics',
    )
    .option('--policy <file>', 'the CompliancePolicy file (spec.mcp maps tools to action types)')
    .option('--server <name>', "the upstream's name in rules (default: the policy's spec.mcp.server)")
    .option('--address <host:port>', 'Temporal frontend (default: $TEMPORAL_ADDRESS or localhost:7233)')
    .option('--namespace <name>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE or default)')
    .option('--task-queue-prefix <prefix>', 'the workers’ task queue prefix (as given to agent-judge worker)')
    .option('--state-dir <dir>', 'where the pass-through audit log is kept', '.agent-judge')
    .passThroughOptions()
    .action(async (upstream: string[], opts: McpFlags, cmd: Command) => {
      process.exitCode = await runProxy(upstream, { ...cmd.optsWithGlobals<McpFlags>(), ...opts });
      // The agent is gone and the upstream closed: do not let a lingering handle keep a dead proxy around.
      setTimeout(() => process.exit(), 2000).unref();
    });

  mcp
    .command('check')
    .description("list the upstream's tools with the rule, tier and action type each maps to; flags unmapped ones")
    .argument('[upstream...]', 'the upstream MCP server command and its arguments')
    .option('--policy <file>', 'the CompliancePolicy file')
    .option('--server <name>', "the upstream's name in rules")
    .option('--upstream-url <url>', 'the upstream is a Streamable HTTP MCP server at this URL')
    .option('--json', 'print the JSON (the default when stdout is not a terminal)')
    .addOption(
      new Option('--format <format>', 'human (a table; the default on a terminal) or json').choices(['human', 'json']),
    )
    .passThroughOptions()
    .action(async (upstream: string[], opts: McpCheckOptions) => {
      const format = chooseOutputFormat(opts, process.stdout.isTTY);
      const { policy } = await policyFrom(opts.policy);
      const server = serverName(opts.server, policy);
      const spec = upstreamSpec(opts.upstreamUrl, upstream);
      const { probeUpstream } = await import('../mcp/upstream');
      const tools = await probeUpstream(spec);
      const rows = tools.map((tool) => {
        const matched = matchRule(policy.spec.mcp, server, tool.name);
        const actionType = matched?.rule?.actionType ?? (matched?.rule?.tier ? null : MCP_TOOL_CALL);
        return {
          tool: tool.name,
          rule: matched?.name ?? null,
          tier: matched?.rule?.tier ?? tierFor(policy, actionType ?? MCP_TOOL_CALL),
          action_type: actionType,
          unmapped: matched === null,
        };
      });
      const checked = { server, tools: rows, unmapped: rows.filter((r) => r.unmapped).map((r) => r.tool) };
      if (format === 'json') printJson(checked);
      else process.stdout.write((await import('./mcp-check-text')).renderMcpCheck(checked));
    });

  mcp
    .command('token')
    .description("make a bearer token for one agent of the --http front: the token once, and the policy line's hash")
    .option('--agent <id>', 'the agent the token stands for (e.g. @engineering)')
    .action(async (opts: { agent?: string }) => {
      const agent = AgentIdSchema.safeParse(requireFlag(opts.agent, '--agent', 'the agent id, e.g. @engineering'));
      if (!agent.success) throw new BadInputError(`--agent: ${agent.error.issues[0]?.message ?? 'invalid'}`);
      const { newAgentToken, tokenSha256 } = await import('../gate/http-auth');
      const token = newAgentToken();
      process.stdout.write(
        `${token}\n` +
          `# The token above is shown once: ${agent.data}'s MCP client sends it as "Authorization: Bearer <token>".\n` +
          '# The policy keeps only its hash; add this line under spec.mcp.http.agents:\n' +
          `- { agent: "${agent.data}", tokenSha256: "${tokenSha256(token)}" }\n`,
      );
    });
}

/** Runs the proxy until the agent disconnects; resolves to the exit code. */
async function runProxy(upstreamArgs: string[], flags: McpFlags): Promise<number> {
  // Everything is checked before the upstream starts: nothing can be forwarded unjudged by a half-started proxy.
  const agentFlag =
    flags.http === undefined ? requireFlag(flags.agent, '--agent', 'the agent id, e.g. @engineering') : flags.agent;
  const agent = agentFlag === undefined ? undefined : AgentIdSchema.safeParse(agentFlag);
  if (agent && !agent.success) throw new BadInputError(`--agent: ${agent.error.issues[0]?.message ?? 'invalid'}`);
  const loaded = await policyFrom(flags.policy);
  const policy = loaded.policy;
  const server = serverName(flags.server, policy);
  const upstream = upstreamSpec(flags.upstreamUrl, upstreamArgs);
  // Loaded here, not at the top: `mcp check` and `mcp token` log nothing.
  const logger = (await import('./shared')).createLogger().child({ component: 'mcp' });
  const listen = flags.http === undefined ? undefined : await httpListen(flags, policy, agent?.data, logger);
  const counters = flags.metrics === undefined ? undefined : await metricsCounters(flags.metrics, logger);

  const { connectCheckedClient, temporalTarget } = await import('../client/connection');
  const target = temporalTarget({ address: flags.address, namespace: flags.namespace });
  const client = await connectCheckedClient(target, 'refusing to start, so no call is forwarded unjudged');

  const temporal = {
    client,
    taskQueue: taskQueuesFor(flags.taskQueuePrefix).workflow,
    // Each judged call's proposal is held to this policy's per-agent limits; a refusal is logged too.
    limits: {
      policy,
      onRefused: (limit: LimitName) => {
        counters?.limitRefused(limit);
        logger.warn({ limit }, 'a call was refused by a limit');
      },
    },
  };
  // Which policy the workers judge with: said at start, and again on every judged call while it is not this one.
  const { PolicyWatch } = await import('../client/policy-in-force');
  const watch = new PolicyWatch({
    client,
    taskQueue: temporal.taskQueue,
    mine: loaded.own,
    logger,
  });
  const onJudgedCall = (tool: string) => watch.onCall(`tools/call ${tool}`);
  const auditLog = resolve(flags.stateDir, 'mcp-audit.jsonl');
  const { probeUpstream, openUpstream, reachUpstream, stopUpstream } = await import('../mcp/upstream');
  if (listen || upstream.kind === 'http') {
    // Reached once before anything is accepted: an unreachable upstream (or, for the HTTP front that serves many
    // sessions, a tool that collides with _agent_judge) refuses the start instead of failing the agents' calls.
    try {
      await (listen ? probeUpstream(upstream) : reachUpstream(upstream));
    } catch (err) {
      await client.connection.close().catch(() => undefined);
      throw err;
    }
  }
  if (listen) {
    // Said once everything else is checked: a refused start stays one line.
    await watch.start();
    return serveHttp(listen, {
      policy,
      server,
      upstream,
      agent: agent?.data,
      temporal,
      auditLog,
      client,
      onJudgedCall,
      counters,
      logger,
    });
  }

  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { McpJudgeProxy } = await import('../mcp/proxy');
  const { withoutBatches } = await import('../mcp/stdio-front');
  let exitCode = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => (finish = r));
  const upstreamTransport = await openUpstream(upstream);
  const proxy = new McpJudgeProxy({
    // Batches are taken out before the SDK's framing (which cannot parse them) and refused by the proxy.
    front: new StdioServerTransport(
      withoutBatches(process.stdin, (batch) => proxy.refuseBatch(batch)),
      process.stdout,
    ),
    upstream: upstreamTransport,
    settings: policy.spec.mcp,
    provenance: policy.spec.provenance,
    server,
    agentId: agent!.data,
    temporal,
    auditLog,
    logger,
    onJudgedCall,
    ...(counters ? { counters } : {}),
    // The reason the command ends, as the CLI says any error it ends with (src/cli/main.ts): one line, not a log line.
    onFatal: (message, code) => {
      process.stderr.write(`${message.replace(/\s*[\r\n]+\s*/g, ' ')}\n`);
      exitCode = code;
      finish();
    },
  });
  // The SDK's stdio server transport does not notice stdin ending: the agent left, so nothing held is forwarded.
  let stdinEnded = false;
  const agentLeft = () => {
    stdinEnded = true;
    finish();
  };
  process.stdin.on('end', agentLeft);
  process.stdin.on('close', agentLeft);
  // Told to stop (an MCP client sends SIGTERM when the proxy has not exited soon after its stdin closed; Ctrl-C): the
  // upstream stops with the proxy. Left running, it would keep the stderr this proxy passed on to it open, and a
  // client that reads that stderr to its end would wait until the upstream dies on its own.
  const stop = (signal: NodeJS.Signals) => {
    stopUpstream(upstreamTransport);
    // After the agent closed stdin, SIGTERM is the normal MCP shutdown sequence, not a failure.
    if (!stdinEnded) exitCode = signal === 'SIGINT' ? 130 : 143;
    finish();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') finish();
  });
  try {
    await proxy.start();
  } catch (err) {
    await client.connection.close().catch(() => undefined);
    throw new AgentJudgeError(`cannot start the upstream ${describeUpstream(upstream)}: ${oneLine(err)}`);
  }
  await watch.start();
  await finished;
  await proxy.close();
  await client.connection.close().catch(() => undefined);
  return exitCode;
}

/**
 * `--http`'s checks, all before Temporal is reached: a valid HOST:PORT, loopback unless `--allow-remote`, at least
 * one agent token in the policy, and `--agent` (if given) one of those agents.
 */
async function httpListen(
  flags: McpFlags,
  policy: CompliancePolicy,
  agent: string | undefined,
  logger: Logger,
): Promise<{ host: string; port: number }> {
  const { parseListen } = await import('../mcp/http-front');
  const { isLoopbackHost } = await import('../gate/service/http');
  const listen = parseListen(flags.http!);
  if (!isLoopbackHost(listen.host)) {
    if (!flags.allowRemote) {
      throw new BadInputError(
        `--http: ${listen.host} is not a loopback address; add --allow-remote to serve other machines ` +
          '(and put TLS in front: every request carries a bearer token)',
      );
    }
    logger.warn(
      { host: listen.host },
      'serving a non-loopback address, reachable from other machines; bearer tokens travel in clear over plain ' +
        'HTTP: put a TLS terminator in front and list its names in spec.mcp.http.allowedHosts',
    );
  }
  const agents = policy.spec.mcp.http.agents;
  if (agents.length === 0) {
    throw new BadInputError(
      'spec.mcp.http.agents: --http needs at least one agent token (make one with agent-judge mcp token --agent @x)',
    );
  }
  if (agent !== undefined && !agents.some((a) => a.agent === agent)) {
    throw new BadInputError(`--agent: ${agent} has no token in spec.mcp.http.agents (with --http the token decides)`);
  }
  return listen;
}

/** Serves the Streamable HTTP front until SIGINT or SIGTERM; resolves to the exit code. */
async function serveHttp(
  listen: { host: string; port: number },
  o: {
    policy: CompliancePolicy;
    server: string;
    upstream: UpstreamSpec;
    agent: string | undefined;
    temporal: { client: Client; taskQueue: string };
    auditLog: string;
    client: Client;
    onJudgedCall: (tool: string) => void;
    counters: McpCounters | undefined;
    logger: Logger;
  },
): Promise<number> {
  const { McpHttpFront } = await import('../mcp/http-front');
  const front = new McpHttpFront({
    host: listen.host,
    port: listen.port,
    settings: o.policy.spec.mcp,
    provenance: o.policy.spec.provenance,
    server: o.server,
    upstream: o.upstream,
    ...(o.agent !== undefined ? { onlyAgent: o.agent } : {}),
    sessionsPerAgent: o.policy.spec.limits.httpSessionsPerAgent,
    temporal: o.temporal,
    auditLog: o.auditLog,
    logger: o.logger,
    onJudgedCall: o.onJudgedCall,
    ...(o.counters ? { counters: o.counters } : {}),
  });
  let url: string;
  try {
    url = await front.start();
  } catch (err) {
    await o.client.connection.close().catch(() => undefined);
    throw new AgentJudgeError(`--http: cannot listen on ${listen.host}:${listen.port}: ${(err as Error).message}`);
  }
  const agents = [...new Set(o.policy.spec.mcp.http.agents.map((a) => a.agent))].filter(
    (a) => o.agent === undefined || a === o.agent,
  );
  o.logger.info({ url, agents, upstream: describeUpstream(o.upstream) }, 'listening');
  await new Promise<void>((r) => {
    process.once('SIGINT', r);
    process.once('SIGTERM', r);
  });
  await front.close();
  await o.client.connection.close().catch(() => undefined);
  return 0;
}

/**
 * `--metrics`: the SDK runtime's Prometheus exporter, as the workers use it, with the proxy's own counters. Loaded
 * only with the flag: the native runtime is not needed to relay and judge calls.
 */
async function metricsCounters(address: string, logger: Logger): Promise<McpCounters> {
  const { parseBindAddress, telemetryOptions } = await import('../metrics/telemetry');
  const bind = parseBindAddress(address, '--metrics');
  const { Runtime } = await import('@temporalio/worker');
  Runtime.install({ telemetryOptions: telemetryOptions({ prometheus: bind }) });
  const { mcpCounters } = await import('../metrics/mcp');
  logger.info({ url: `http://${bind}/metrics` }, 'metrics served');
  return mcpCounters(Runtime.instance().metricMeter);
}
