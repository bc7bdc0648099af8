/**
 * Shared setup of the MCP proxy's end-to-end tests: a policy with `spec.mcp` for server-filesystem, the proxy started
 * as a user's MCP client starts it (`bin/agent-judge.mjs mcp` over stdio, driven by the real SDK client), and small
 * readers of its answers. Everything the proxy needs comes from flags (MCP clients give stdio servers no settings).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Client as TemporalClient } from '@temporalio/client';
import { inject } from 'vitest';
import { getStatus } from '../../src/client/proposals';
import { VERDICT_META_KEY } from '../../src/contracts/mcp';
import { generateIdentity } from '../../src/identity/keys';
import { createJudgeDepsFromEnv } from '../../src/judge';
import { startSystem, testPolicy, type TestSystem } from './system';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/agent-judge.mjs');
export const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const EVERYTHING_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
/** Logs (and can hold) every tools/call on its way to a real upstream: see the script's header. */
export const TAP = join(ROOT, 'test/helpers/mcp-tap-upstream.mjs');

/** The approver of held calls in these tests. */
export const scott = generateIdentity();
/** The rules ask every file write for evidence (evidence.missing): the agent cites the task it works on. */
export const EVIDENCE = [{ type: 'task', source: 'ops ticket 12: write the weekly report' }];

export interface McpSpecOptions {
  /** How full-judge-review calls are decided with no model: a person, or a CLARIFY. */
  withoutModel?: 'escalate' | 'clarify' | 'approve';
  holdFor?: string;
  performWithin?: string;
  /** The action type `create_directory` maps to (lightweight); a file of its own keeps its proposals apart. */
  mkdirActionType?: string;
  /** More risk-matrix rows and `spec.mcp` rules (after the filesystem ones), a shadow list, the HTTP front. */
  riskMatrix?: Record<string, unknown>[];
  rules?: Record<string, unknown>[];
  shadow?: string[];
  http?: Record<string, unknown>;
}

/** The policy the workers and the proxy share: reads pass through, writes are judged (a person decides them). */
export function mcpSpec(o: McpSpecOptions = {}): Record<string, unknown> {
  const mkdir = o.mkdirActionType ?? 'workspace_dir_create';
  return {
    riskMatrix: [
      ...testPolicy('/tmp').spec.riskMatrix,
      { actionType: mkdir, surface: 'directories', surfaceArea: 1, actionRisk: 1, tier: 'lightweight-approval' },
      ...(o.riskMatrix ?? []),
    ],
    judge: { withoutModel: o.withoutModel ?? 'escalate' },
    escalation: { timeout: '5m', approvers: ['scott'], approverKeys: { scott: scott.public_key }, reminderAt: 0 },
    clarify: { maxRounds: 2, timeout: '5m' },
    lightweight: { deny: [{ name: 'paths.forbidden', pattern: 'FORBIDDEN' }], topics: {} },
    ...(o.shadow ? { shadow: o.shadow } : {}),
    mcp: {
      server: 'fs',
      holdFor: o.holdFor ?? '10s',
      performWithin: o.performWithin ?? '2m',
      ...(o.http ? { http: o.http } : {}),
      rules: [
        { name: 'fs.read', tool: 'read_*', tier: 'no-judge' },
        { name: 'fs.list', tool: 'list_*', tier: 'no-judge' },
        {
          name: 'fs.write',
          tool: 'write_file',
          actionType: 'file_write',
          target: { path: '$.path' },
          parameters: { content: '$.content', mode: 'overwrite' },
        },
        {
          name: 'fs.mkdir',
          tool: 'create_directory',
          actionType: mkdir,
          target: { path: '$.path' },
          parameters: {},
        },
        ...(o.rules ?? []),
      ],
    },
  };
}

/** Where a proxy finds its policy, state and workers. */
export interface ProxyTarget {
  baseDir: string;
  policyFile: string;
  /** The workers' task queue prefix. */
  taskQueuePrefix: string;
  address: string;
  namespace: string;
  /** Variables the proxy gets on top of the MCP SDK's default environment. */
  env?: Record<string, string>;
  /** The stdio proxy's `--agent` (default `@engineering`). */
  agent?: string;
}

export interface McpEnv extends ProxyTarget {
  sys: TestSystem;
  workspace: string;
}

/** Workers (workflow, judge, executor) on the run's shared server, a workspace, and the policy file for the proxy. */
export async function startMcpEnv(spec: Record<string, unknown> = mcpSpec()): Promise<McpEnv> {
  return mcpEnvOf(await startSystem({ spec, judge: mcpJudge(spec) }));
}

/** The judge the MCP tests' workers run: no model, so `judge.withoutModel` decides full-judge-review calls. */
export const mcpJudge = (spec: Record<string, unknown>) => createJudgeDepsFromEnv(testPolicy('/tmp', spec), {});

/** A workspace and the policy file for a proxy in front of `sys`'s workers. */
export function mcpEnvOf(sys: TestSystem): McpEnv {
  const workspace = join(sys.baseDir, '.agent-judge/workspace');
  mkdirSync(workspace, { recursive: true });
  const policyFile = join(sys.baseDir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify(sys.policy));
  return {
    sys,
    workspace,
    baseDir: sys.baseDir,
    policyFile,
    taskQueuePrefix: sys.taskQueues.workflow,
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
  };
}

/** server-filesystem on the target's folder. */
export const fsUpstream = (t: Pick<ProxyTarget, 'baseDir'>): string[] => [process.execPath, FS_SERVER, t.baseDir];

/** server-filesystem behind the tap, which logs every tools/call to `log` (and holds what `mode` says). */
export const tappedFsUpstream = (t: Pick<ProxyTarget, 'baseDir'>, log: string, mode = 'pass'): string[] => [
  process.execPath,
  TAP,
  log,
  mode,
  ...fsUpstream(t),
];

/** `agent-judge mcp ...` as an MCP client config would run it (the upstream after `--`). */
export function proxyArgs(t: ProxyTarget, upstream: string[] = fsUpstream(t)): string[] {
  return [
    BIN,
    'mcp',
    '--agent',
    t.agent ?? '@engineering',
    '--policy',
    t.policyFile,
    '--address',
    t.address,
    '--namespace',
    t.namespace,
    '--task-queue-prefix',
    t.taskQueuePrefix,
    '--state-dir',
    join(t.baseDir, '.agent-judge'),
    '--',
    ...upstream,
  ];
}

/** `agent-judge mcp ...` in front of a Streamable HTTP upstream (`--upstream-url`) instead of a command. */
export function proxyArgsForUrl(t: ProxyTarget, url: string): string[] {
  return [...proxyArgs(t, []).slice(0, -1), '--upstream-url', url];
}

export interface ConnectedProxy {
  agent: Client;
  /** The proxy's process id (what a test kills). */
  pid: number;
  /** Everything the proxy wrote on stderr so far. */
  stderr: () => string;
}

/** Starts the proxy the way an MCP client does (the real SDK client over stdio) and connects to it. */
export async function connectProxy(t: ProxyTarget, upstream?: string[]): Promise<ConnectedProxy> {
  const agent = new Client({ name: 'test-agent', version: '1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: proxyArgs(t, upstream),
    cwd: t.baseDir,
    stderr: 'pipe',
    ...(t.env ? { env: { ...getDefaultEnvironment(), ...t.env } } : {}),
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await agent.connect(transport);
  if (transport.pid === null) throw new Error('the proxy process has no pid');
  return { agent, pid: transport.pid, stderr: () => stderr };
}

/**
 * The SDK's stdio framing over a child the test spawned itself (StdioClientTransport spawns its own and keeps the exit
 * code to itself): a test of how the proxy ends can see its exit code.
 */
class SpawnedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  constructor(private readonly child: ChildProcess) {}

  start(): Promise<void> {
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      try {
        for (let m = this.buffer.readMessage(); m !== null; m = this.buffer.readMessage()) this.onmessage?.(m);
      } catch (err) {
        this.onerror?.(err as Error);
      }
    });
    this.child.stdin!.on('error', (err) => this.onerror?.(err));
    this.child.once('close', () => this.onclose?.());
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.stdin!.write(serializeMessage(message))) resolve();
      else this.child.stdin!.once('drain', resolve);
    });
  }

  close(): Promise<void> {
    this.child.stdin!.end();
    return Promise.resolve();
  }
}

export interface SpawnedProxy extends ConnectedProxy {
  child: ChildProcess;
  /** Resolves with the proxy's exit code once it has exited. */
  exited: Promise<number | null>;
}

/** As {@link connectProxy} (the real SDK client, the near-empty environment MCP clients give), with the exit code. */
export async function spawnProxy(t: ProxyTarget, args: string[]): Promise<SpawnedProxy> {
  const child = spawn(process.execPath, args, { cwd: t.baseDir, env: getDefaultEnvironment(), stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const agent = new Client({ name: 'test-agent', version: '1' });
  await agent.connect(new SpawnedStdioTransport(child));
  return { agent, pid: child.pid!, child, exited, stderr: () => stderr };
}

/** The upstream itself, with the same SDK client (what the proxy must look like). */
export async function connectDirect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

export interface CallResult {
  isError?: boolean;
  content?: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
}

export const callTool = (
  c: Client,
  name: string,
  args: Record<string, unknown>,
  opts: Parameters<Client['callTool']>[2] = {},
) => c.callTool({ name, arguments: args }, undefined, opts) as Promise<CallResult>;
export const verdictOf = (r: CallResult): Record<string, unknown> | undefined =>
  r._meta?.[VERDICT_META_KEY] as Record<string, unknown> | undefined;
export const textOf = (r: CallResult): string => (r.content ?? []).map((c) => c.text ?? '').join('\n');

/** Polls `probe` until it returns a value (not undefined), up to `tries` x `everyMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, tries = 80) {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** The workflow id of the running proposal, on `taskQueue`, that writes `path` and waits for a person. */
export async function heldProposalFor(client: TemporalClient, taskQueue: string, path: string): Promise<string> {
  return until(`a proposal writing ${path} held for a person`, async () => {
    const list = client.workflow.list({
      query: `WorkflowType = 'proposalWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`,
    });
    for await (const wf of list) {
      const st = await getStatus(client, wf.workflowId).catch(() => null);
      if (st?.proposal.target.path === path && st.status === 'awaiting_human') return wf.workflowId;
    }
    return undefined;
  });
}

/** One line of the tap's log. */
export interface TapEntry {
  pid: number;
  /** `message`: anything but a tools/call reached the upstream (its method, null for a response); `batch`: an array. */
  event: 'call' | 'answer-held' | 'message' | 'batch';
  id: string | number | null;
  method?: string | null;
  methods?: Array<string | null>;
  tool?: string;
  arguments?: Record<string, unknown>;
  held?: string | null;
}

export function readTap(log: string): TapEntry[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as TapEntry);
}

/** The tools/calls of `tool` that reached the upstream, across every proxy that used this log. */
export const upstreamCalls = (log: string, tool: string): TapEntry[] =>
  readTap(log).filter((e) => e.event === 'call' && e.tool === tool && e.held !== 'hold-request');
