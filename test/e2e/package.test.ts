/**
 * The package as a user installs it: `npm pack` of this checkout, `npm install <tarball>` into an empty folder, a
 * TypeScript consumer of `agent-judge/client`, `/contracts`, `/gate`, `/openai-agents`, `/ai-sdk` and `/langchain`
 * type-checked under `nodenext` with `skipLibCheck: false` and run, and the installed `agent-judge` CLI against the
 * run's Temporal server. One pack and one install per run; dist/ is built by test/build-setup.ts.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const { dependencies, devDependencies } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const CONSUMER = `
import { connectClient, proposalWorkflowId, submitAndWait, type SubmitOptions } from 'agent-judge/client';
import { BadInputError, parseProposal, type Proposal, type ProposalOutcome } from 'agent-judge/contracts';
import { createGate, type GateAnswer } from 'agent-judge/gate';

const [address, namespace, taskQueue, input] = process.argv.slice(2) as [string, string, string, string];
const proposal: Proposal = parseProposal(JSON.parse(input));
const options: SubmitOptions = { taskQueue };
const client = await connectClient({ address, namespace });
try {
  const outcome: ProposalOutcome = await submitAndWait(client, proposal, options);
  let refused = '';
  try {
    await submitAndWait(client, { ...proposal, action_type: '' }, options);
  } catch (err) {
    if (err instanceof BadInputError) refused = err.name;
  }
  // The gate, as a runtime adapter uses it: a call no rule maps goes to a person, so a short hold answers pending.
  const gate = createGate({
    client,
    taskQueue,
    rules: { rules: [] },
    performer: { agentId: '@engineering', redeemer: 'hook:package-test' },
    holdMs: 300,
  });
  const answer: GateAnswer = await gate.decide({
    runtime: 'package-test',
    server: 'shell',
    tool: 'run',
    arguments: { command: proposal.proposal_id },
  });
  const gated = answer.kind === 'pending' ? answer.waitingFor : answer.kind;
  console.log(
    JSON.stringify({ workflow_id: proposalWorkflowId(proposal), status: outcome.status, refused, gated }),
  );
} finally {
  await client.connection.close();
}
`;

/** The OpenAI Agents SDK adapter as an app uses it: one line wraps the agent; an unmapped call waits for a person. */
const AGENTS_CONSUMER = `
import { Agent, RunContext, tool, type FunctionTool } from '@openai/agents';
import { connectClient } from 'agent-judge/client';
import { createGate } from 'agent-judge/gate';
import { withAgentJudge } from 'agent-judge/openai-agents';

const [address, namespace, taskQueue, marker] = process.argv.slice(2) as [string, string, string, string];
const client = await connectClient({ address, namespace });
try {
  let ran = false;
  const shell = tool({
    name: 'run',
    description: 'Runs a shell command',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string' } },
      required: ['command'],
      additionalProperties: false,
    },
    strict: true,
    execute: async () => {
      ran = true;
      return 'done';
    },
  });
  const gate = createGate({
    client,
    taskQueue,
    rules: { rules: [] },
    performer: { agentId: '@engineering', redeemer: 'openai-agents:package-test' },
    holdMs: 300,
  });
  const agent = withAgentJudge(new Agent({ name: 'assistant', tools: [shell] }), { gate });
  const judged = agent.tools[0] as FunctionTool;
  // What the SDK's runner does for each call of this tool: parsed arguments, the call id.
  const needsApproval = judged.needsApproval as (c: RunContext, args: unknown, callId: string) => Promise<boolean>;
  const asks = await needsApproval(new RunContext(), { command: marker }, 'call-1');
  console.log(JSON.stringify({ asks, ran }));
} finally {
  await client.connection.close();
}
`;

/**
 * The AI SDK 7 adapter in an app on Node 20 without `ai` installed (`ai` 7 needs Node 22; the SDK itself is driven by
 * test/integration/adapter-ai-sdk.test.ts): its declarations need nothing of `ai`, and the approval hook the SDK would
 * call answers an unmapped call with the SDK's approval request, the tool not run.
 */
const AI_SDK_CONSUMER = `
import { connectClient } from 'agent-judge/client';
import { createGate } from 'agent-judge/gate';
import { withAgentJudge, type AgentJudgeApprovalStatus } from 'agent-judge/ai-sdk';

const [address, namespace, taskQueue, marker] = process.argv.slice(2) as [string, string, string, string];
const client = await connectClient({ address, namespace });
try {
  let ran = false;
  const tools = {
    run: {
      description: 'Runs a shell command',
      inputSchema: { type: 'object', properties: { command: { type: 'string' } } },
      execute: async (input: { command: string }) => {
        ran = true;
        return input.command;
      },
    },
  };
  const gate = createGate({
    client,
    taskQueue,
    rules: { rules: [] },
    performer: { agentId: '@engineering', redeemer: 'ai-sdk:package-test' },
    holdMs: 300,
  });
  const judged = withAgentJudge(tools, { gate });
  // What the SDK does for each call: the approval hook with the parsed input and the call id.
  const status: AgentJudgeApprovalStatus = await judged.toolApproval({
    toolCall: { toolCallId: 'call-1', toolName: 'run', input: { command: marker } },
    messages: [{ role: 'user', content: 'run it' }],
  });
  console.log(JSON.stringify({ status: typeof status === 'string' ? status : status.type, ran }));
} finally {
  await client.connection.close();
}
`;

/**
 * The LangChain adapter as an app uses it: a real `createAgent` with LangChain's scripted model and a checkpointer, the
 * one middleware line; a call no rule maps waits for a person, so the run pauses with agent-judge's interrupt.
 */
const LANGCHAIN_CONSUMER = `
import { MemorySaver } from '@langchain/langgraph';
import { createAgent, fakeModel, tool } from 'langchain';
import { connectClient } from 'agent-judge/client';
import { createGate } from 'agent-judge/gate';
import { agentJudgeMiddleware, type AgentJudgeInterrupt } from 'agent-judge/langchain';

const [address, namespace, taskQueue, marker] = process.argv.slice(2) as [string, string, string, string];
const client = await connectClient({ address, namespace });
try {
  let ran = false;
  const shell = tool(
    () => {
      ran = true;
      return 'done';
    },
    {
      name: 'run',
      description: 'Runs a shell command',
      schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  );
  const gate = createGate({
    client,
    taskQueue,
    rules: { rules: [] },
    performer: { agentId: '@engineering', redeemer: 'langchain:package-test' },
    holdMs: 300,
  });
  const agent = createAgent({
    model: fakeModel().respondWithTools([{ name: 'run', args: { command: marker }, id: 'call-1' }]),
    tools: [shell],
    checkpointer: new MemorySaver(),
    middleware: [agentJudgeMiddleware({ gate })],
  });
  const result = await agent.invoke(
    { messages: [{ role: 'user', content: 'run it' }] },
    { configurable: { thread_id: marker } },
  );
  const interrupts = (result as { __interrupt__?: Array<{ value: AgentJudgeInterrupt }> }).__interrupt__ ?? [];
  console.log(JSON.stringify({ interrupts: interrupts.map((i) => [i.value.type, i.value.waitingFor]), ran }));
} finally {
  await client.connection.close();
}
`;

let dir: string;
let sys: TestSystem;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-package-'));
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: REPO });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const consumer = join(dir, 'consumer');
  mkdirSync(join(consumer, 'src'), { recursive: true });
  // An app on Node 20 pins the SDK's openai to 6.x as this package does (openai 7 declares Node 22).
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({
      name: 'consumer',
      private: true,
      type: 'module',
      overrides: { '@openai/agents': { openai: dependencies.openai } },
    }),
  );
  writeFileSync(join(consumer, 'src/index.ts'), CONSUMER);
  writeFileSync(join(consumer, 'src/agents.ts'), AGENTS_CONSUMER);
  writeFileSync(join(consumer, 'src/ai-sdk.ts'), AI_SDK_CONSUMER);
  writeFileSync(join(consumer, 'src/langchain.ts'), LANGCHAIN_CONSUMER);
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'out',
        rootDir: 'src',
      },
    }),
  );
  // The registry is reachable; the npm cache (warm after `npm ci`) keeps this to one quick install.
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      resolve(dir, filename),
      `@types/node@${devDependencies['@types/node']}`,
      `@openai/agents@${devDependencies['@openai/agents']}`,
      `openai@${dependencies.openai}`,
      `langchain@${devDependencies.langchain}`,
      `@langchain/core@${devDependencies['@langchain/core']}`,
      `@langchain/langgraph@${devDependencies['@langchain/langgraph']}`,
    ],
    { cwd: consumer },
  );
  sys = await startSystem();
}, 600_000);

afterAll(async () => {
  await sys?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('type-checks and runs consumers of /client, /contracts, /gate and the adapters (nodenext, strict)', async () => {
    const consumer = join(dir, 'consumer');
    const typecheck = await run(process.execPath, [TSC, '-p', consumer], { cwd: consumer }).catch(
      (err: { stdout?: string; message?: string }) => ({ stdout: err.stdout ?? err.message ?? 'tsc failed' }),
    );
    expect(typecheck.stdout).toBe('');
    const input = JSON.stringify(proposal('memory_write'));
    const { stdout } = await run(process.execPath, [
      join(consumer, 'out/index.js'),
      inject('temporalAddress'),
      inject('temporalNamespace'),
      sys.taskQueues.workflow,
      input,
    ]);
    const result = JSON.parse(stdout) as { workflow_id: string; status: string; refused: string; gated: string };
    expect(result.workflow_id).toMatch(/^proposal-[0-9a-f]{32}$/);
    expect(result).toMatchObject({ status: 'executed', refused: 'BadInputError', gated: 'human' });
  }, 600_000);

  it('runs a consumer of agent-judge/openai-agents: the wrapped tool asks the gate; unmapped calls wait', async () => {
    const consumer = join(dir, 'consumer');
    const { stdout } = await run(process.execPath, [
      join(consumer, 'out/agents.js'),
      inject('temporalAddress'),
      inject('temporalNamespace'),
      sys.taskQueues.workflow,
      `package-test-${Date.now()}`,
    ]);
    // needsApproval true: the SDK interrupts the run for this call; the tool itself never ran.
    expect(JSON.parse(stdout)).toEqual({ asks: true, ran: false });
  }, 600_000);

  it('runs a consumer of agent-judge/ai-sdk on Node 20 without ai installed: an unmapped call waits', async () => {
    const consumer = join(dir, 'consumer');
    const { stdout } = await run(process.execPath, [
      join(consumer, 'out/ai-sdk.js'),
      inject('temporalAddress'),
      inject('temporalNamespace'),
      sys.taskQueues.workflow,
      `package-test-${Date.now()}`,
    ]);
    expect(JSON.parse(stdout)).toEqual({ status: 'user-approval', ran: false });
  }, 600_000);

  it('runs a consumer of agent-judge/langchain: createAgent pauses on an unmapped call, the tool unrun', async () => {
    const consumer = join(dir, 'consumer');
    const { stdout } = await run(process.execPath, [
      join(consumer, 'out/langchain.js'),
      inject('temporalAddress'),
      inject('temporalNamespace'),
      sys.taskQueues.workflow,
      `package-test-${Date.now()}`,
    ]);
    expect(JSON.parse(stdout)).toEqual({ interrupts: [['agent-judge', 'human']], ran: false });
  }, 600_000);

  it("runs the installed CLI: propose --wait of the package's own example (what `dev` suggests) executes", async () => {
    const consumer = join(dir, 'consumer');
    // examples/ ships in the package: `dev` on an installed package suggests this file by its installed path.
    const file = join(consumer, 'node_modules/agent-judge/examples/memory-write.json');
    const { stdout } = await run(join(consumer, 'node_modules/.bin/agent-judge'), [
      'propose',
      file,
      '--wait',
      '--task-queue',
      sys.taskQueues.workflow,
      '--address',
      inject('temporalAddress'),
      '--namespace',
      inject('temporalNamespace'),
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'executed' });
  });

  it('lists every command in --help without loading the Temporal client or zod', async () => {
    const installed = join(dir, 'consumer/node_modules/agent-judge');
    const { stdout } = await run(join(dir, 'consumer/node_modules/.bin/agent-judge'), ['--help']);
    expect(stdout).toContain('status [options] <proposal_id>');
    expect(stdout).toContain('policy ');
    expect(stdout).toContain('circles [options]');
    // What `--help` loads: dist/cli/main.js and its static imports (commands are dynamic imports).
    expect(packagesLoadedBy(join(installed, 'dist/cli/main.js'))).toEqual(['commander']);
  });

  it('answers status without loading the Temporal SDK client, @temporalio/workflow, envconfig or zod', () => {
    const installed = join(dir, 'consumer/node_modules/agent-judge');
    const main = readFileSync(join(installed, 'dist/cli/main.js'), 'utf8');
    const chunk = /import\("(\.\.\/chunks\/status-[^"]+)"\)\)\.registerStatusCommand/.exec(main)?.[1];
    expect(chunk, 'dist/cli/main.js loads `status` from a chunk of its own').toBeDefined();
    const loaded = packagesLoadedBy(join(installed, 'dist/cli/main.js'), join(installed, 'dist/cli', chunk as string));
    // zod comes only with the environment's schema, loaded when a variable it could refuse is set.
    expect(loaded).toEqual(['commander']);
  });
});

/**
 * The packages (bare specifiers, Node's built-ins left out) that built modules load with static imports, their own
 * and their chunks'. Package code bundled into a chunk (src/client/status-rpc.ts's grpc-js) is no package import:
 * the list says what Node resolves and loads from node_modules.
 */
function packagesLoadedBy(...entries: string[]): string[] {
  const visited = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (visited.has(file)) return;
    visited.add(file);
    const code = readFileSync(file, 'utf8');
    for (const [, spec] of code.matchAll(/^import\s[^;]*?from\s*["']([^"']+)["']/gm)) {
      if (spec?.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec?.startsWith('node:')) packages.add(spec as string);
    }
  };
  entries.forEach(visit);
  return [...packages].sort();
}
