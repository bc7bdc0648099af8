/**
 * `agent-judge mcp`: the MCP judge proxy in front of one stdio upstream, and `agent-judge mcp check`, which shows
 * what the policy makes of each of the upstream's tools. MCP clients start stdio servers with a near-empty
 * environment, so everything comes from flags and the policy file; anything missing or wrong refuses the start.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AgentJudgeError, BadInputError } from '../contracts/errors';
import { AgentIdSchema } from '../contracts/proposal';
import type { CompliancePolicy } from '../contracts/policy';
import { taskQueuesFor } from '../names';
import { loadPolicy } from '../policy/load';
import { tierFor } from '../policy/classify';
import { printJson } from './io';
import { matchRule } from '../mcp/mapping';
import { MCP_TOOL_CALL } from '../contracts/mcp';

interface McpFlags {
  agent?: string;
  policy?: string;
  server?: string;
  address?: string;
  namespace?: string;
  taskQueuePrefix?: string;
  stateDir: string;
}

function requireFlag(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value.trim() === '') throw new BadInputError(`${flag}: required (${what})`);
  return value;
}

async function policyFrom(flag: string | undefined): Promise<CompliancePolicy> {
  return loadPolicy({ path: requireFlag(flag, '--policy', 'the CompliancePolicy file with spec.mcp') });
}

function upstreamOf(args: string[]): { command: string; args: string[] } {
  const [command, ...rest] = args;
  if (!command) throw new BadInputError('upstream: required (the MCP server command after --, e.g. -- npx -y server)');
  return { command, args: rest };
}

function serverName(flag: string | undefined, policy: CompliancePolicy): string {
  if (flag === undefined) return policy.spec.mcp.server;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(flag)) {
    throw new BadInputError(`--server: expected a server name such as filesystem, got ${JSON.stringify(flag)}`);
  }
  return flag;
}

function childEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}

export function registerMcpCommands(program: Command): void {
  program.enablePositionalOptions();
  const mcp = program
    .command('mcp')
    .description('judge every tools/call of one MCP server: a stdio MCP server in front of the upstream command')
    .usage('--agent <id> --policy <file> [options] [--] <upstream command...>')
    .argument('[upstream...]', 'the upstream MCP server command and its arguments')
    .option('--agent <id>', 'the agent whose calls these are (e.g. @engineering)')
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
    .passThroughOptions()
    .action(async (upstream: string[], opts: { policy?: string; server?: string }) => {
      const policy = await policyFrom(opts.policy);
      const server = serverName(opts.server, policy);
      const { command, args } = upstreamOf(upstream);
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const client = new Client({ name: 'agent-judge-mcp-check', version: '1' });
      await client.connect(new StdioClientTransport({ command, args, env: childEnv(), stderr: 'ignore' }));
      try {
        const rows = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          for (const tool of page.tools) {
            const matched = matchRule(policy.spec.mcp, server, tool.name);
            const actionType = matched?.rule?.actionType ?? (matched?.rule?.tier ? null : MCP_TOOL_CALL);
            rows.push({
              tool: tool.name,
              rule: matched?.name ?? null,
              tier: matched?.rule?.tier ?? tierFor(policy, actionType ?? MCP_TOOL_CALL),
              action_type: actionType,
              unmapped: matched === null,
            });
          }
          cursor = page.nextCursor;
        } while (cursor);
        printJson({ server, tools: rows, unmapped: rows.filter((r) => r.unmapped).map((r) => r.tool) });
      } finally {
        await client.close();
      }
    });
}

/** Runs the proxy until the agent disconnects; resolves to the exit code. */
async function runProxy(upstreamArgs: string[], flags: McpFlags): Promise<number> {
  // Everything is checked before the upstream starts: nothing can be forwarded unjudged by a half-started proxy.
  const agent = AgentIdSchema.safeParse(requireFlag(flags.agent, '--agent', 'the agent id, e.g. @engineering'));
  if (!agent.success) throw new BadInputError(`--agent: ${agent.error.issues[0]?.message ?? 'invalid'}`);
  const policy = await policyFrom(flags.policy);
  const server = serverName(flags.server, policy);
  const { command, args } = upstreamOf(upstreamArgs);

  const { connectClient, temporalTarget } = await import('../client/connection');
  const target = temporalTarget({ address: flags.address, namespace: flags.namespace });
  let client;
  try {
    client = await connectClient(target);
    await client.workflowService.describeNamespace({ namespace: target.namespace });
  } catch (err) {
    await client?.connection.close().catch(() => undefined);
    throw new AgentJudgeError(
      `cannot reach Temporal at ${target.address} (namespace ${target.namespace}): ${(err as Error).message}; ` +
        'refusing to start, so no call is forwarded unjudged',
    );
  }

  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { McpJudgeProxy } = await import('../mcp/proxy');
  let exitCode = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => (finish = r));
  const proxy = new McpJudgeProxy({
    front: new StdioServerTransport(),
    upstream: new StdioClientTransport({ command, args, env: childEnv(), stderr: 'inherit' }),
    settings: policy.spec.mcp,
    server,
    agentId: agent.data,
    temporal: { client, taskQueue: taskQueuesFor(flags.taskQueuePrefix).workflow },
    auditLog: resolve(flags.stateDir, 'mcp-audit.jsonl'),
    log: (line) => process.stderr.write(`agent-judge mcp: ${line}\n`),
    onFatal: (message, code) => {
      process.stderr.write(`${message.replace(/\s*[\r\n]+\s*/g, ' ')}\n`);
      exitCode = code;
      finish();
    },
  });
  // The SDK's stdio server transport does not notice stdin ending: the agent left, so nothing held is forwarded.
  process.stdin.on('end', finish);
  process.stdin.on('close', finish);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') finish();
  });
  try {
    await proxy.start();
  } catch (err) {
    await client.connection.close().catch(() => undefined);
    throw new AgentJudgeError(`cannot start the upstream ${command}: ${(err as Error).message}`);
  }
  await finished;
  await proxy.close();
  await client.connection.close().catch(() => undefined);
  return exitCode;
}
