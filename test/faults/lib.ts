/**
 * Fault-suite helpers: agent-judge workers as real child processes (the built CLI), killed with
 * SIGKILL as an operator's crash would, and side effects counted on disk.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { CompliancePolicy } from '../../src/contracts/policy';
import type { ProposalOutcome } from '../../src/contracts/status';
import { expect } from 'vitest';
import { submitProposal } from '../../src/client/proposals';
import { defaultPolicyWith } from '../../src/policy/load';
import { proposal } from '../helpers/system';
import { generateCapabilityKey } from '../../src/identity/capability-key';

export const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));

/**
 * Policy overrides the fault scenarios run under: rules-only approvals (no model here), `sh`
 * allowlisted so an exec can take a while and leave a countable trace, a short heartbeat timeout.
 */
export function faultSpec(heartbeatTimeout = '2s'): Record<string, unknown> {
  const { allowlist } = defaultPolicyWith().spec.exec;
  return {
    judge: { withoutModel: 'approve' },
    exec: { allowlist: [...allowlist, { command: 'sh', pathArgs: false }] },
    execution: { heartbeatTimeout },
  };
}

/** The capability key worker processes sign tokens with; {@link writePolicy} lists it. */
const FAULT_CAPABILITY_KEY = generateCapabilityKey('faults');

/** Writes the policy where a worker process can load it (JSON is YAML), with the processes' capability key. */
export function writePolicy(dir: string, policy: CompliancePolicy): string {
  const file = join(dir, 'fault-policy.yaml');
  const { issuers } = policy.spec.capabilities;
  const listed = { ...issuers, [FAULT_CAPABILITY_KEY.kid]: FAULT_CAPABILITY_KEY.public_key };
  writeFileSync(
    file,
    JSON.stringify({
      ...policy,
      spec: { ...policy.spec, capabilities: { ...policy.spec.capabilities, issuers: listed } },
    }),
  );
  return file;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the worker logged that it runs (it polls from then on). */
  ready: Promise<void>;
  /** Everything it wrote to stderr so far (JSON log lines). */
  log(): string;
}

/** `agent-judge worker --role <roles>` as a child process, in `cwd` (its ledger lives there). */
export function startWorkerProcess(opts: {
  roles: string;
  policyFile: string;
  prefix: string;
  cwd: string;
  address: string;
  namespace: string;
}): WorkerProcess {
  const child = spawn(
    process.execPath,
    [BIN, 'worker', '--role', opts.roles, '--policy', opts.policyFile, '--task-queue-prefix', opts.prefix],
    {
      cwd: opts.cwd,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: opts.address,
        TEMPORAL_NAMESPACE: opts.namespace,
        AGENT_JUDGE_POLICY: '',
        AGENT_JUDGE_APPROVERS: '',
        AGENT_JUDGE_MODEL: 'off',
        DISCORD_TOKEN: '',
        LOG_FORMAT: 'json',
        AGENT_JUDGE_CAPABILITY_KEY: `${FAULT_CAPABILITY_KEY.kid}:${FAULT_CAPABILITY_KEY.private_key}`,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let text = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('workers running')) resolve();
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`worker (${opts.roles}) exited before running: ${code ?? signal}\n${text.slice(-2000)}`)),
    );
  });
  ready.catch(() => {});
  return { child, ready, log: () => text };
}

/** SIGKILL: no shutdown, no goodbye, exactly what a crash or OOM kill looks like. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Lines of a trace file (empty when the file does not exist yet). */
export function lines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** How often each line occurs. */
export function counts(file: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines(file)) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
}

/** Polls until `check` holds; a hang guard fails with `what`, it does not time anything. */
export async function until(check: () => boolean, what: string, guardMs = 120_000): Promise<void> {
  const end = Date.now() + guardMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`still waiting after ${guardMs / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every proposal's final outcome (its workflow's result). A proposal that does not finish within the
 * hang guard fails the test naming it: before heartbeats, a killed executor left it pending for 1 h.
 */
export async function finalOutcomes(
  client: Client,
  workflowIds: string[],
  guardMs = 120_000,
): Promise<Map<string, ProposalOutcome>> {
  const out = new Map<string, ProposalOutcome>();
  await Promise.all(
    workflowIds.map(async (id) => {
      let timer: NodeJS.Timeout | undefined;
      const guard = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${id} still not final after ${guardMs / 1000} s`)), guardMs);
      });
      try {
        out.set(id, await Promise.race([client.workflow.getHandle(id).result() as Promise<ProposalOutcome>, guard]));
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return out;
}

/** An exec that leaves a trace: one `start <tag>` line, `seconds` of work, one `done <tag>` line. */
export function slowExec(traceDir: string, tag: string, seconds: number): string[] {
  const started = join(traceDir, 'exec-started.log');
  const done = join(traceDir, 'exec-done.log');
  return ['sh', '-c', `echo "start ${tag}" >> '${started}'; sleep ${seconds}; echo "done ${tag}" >> '${done}'`];
}

/** Memory lines per workflow id in `<memoryDir>/<store>.jsonl`. */
export function memoryLines(memoryDir: string, store: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines(join(memoryDir, `${store}.jsonl`))) {
    const id = (JSON.parse(l) as { workflow_id: string }).workflow_id;
    m.set(id, (m.get(id) ?? 0) + 1);
  }
  return m;
}

/** A batch of proposals in flight: slow execs that leave a trace, and memory writes. */
export interface Mix {
  trace: string;
  store: string;
  tags: string[];
  execs: string[];
  memories: string[];
}

/** Submits `execs` slow execs (`seconds` each) and `memories` memory writes without waiting. */
export async function submitMix(
  client: Client,
  taskQueue: string,
  opts: { trace: string; execs: number; memories: number; seconds: number },
): Promise<Mix> {
  const store = `engineering.fault-${randomUUID().slice(0, 8)}`;
  const tags = Array.from({ length: opts.execs }, () => randomUUID().slice(0, 8));
  const submit = async (p: Record<string, unknown>) => (await submitProposal(client, p, { taskQueue })).workflow_id;
  const execs = await Promise.all(
    tags.map((tag) => submit(proposal('exec', { parameters: { command: slowExec(opts.trace, tag, opts.seconds) } }))),
  );
  const memories = await Promise.all(
    Array.from({ length: opts.memories }, (_, n) =>
      submit(proposal('memory_write', { target: { store }, parameters: { content: `write ${n}` } })),
    ),
  );
  return { trace: opts.trace, store, tags, execs, memories };
}

/**
 * 0 lost, 0 run twice: every proposal final, every exec started at most once (exactly once when
 * it ended executed), every memory write one line.
 */
export function expectNoneLostNoneTwice(
  mix: Mix,
  outcomes: Map<string, ProposalOutcome>,
  memoryDir: string,
  execStatus: 'executed' | 'uncertain',
): void {
  const starts = counts(join(mix.trace, 'exec-started.log'));
  const dones = counts(join(mix.trace, 'exec-done.log'));
  for (const [i, tag] of mix.tags.entries()) {
    const out = outcomes.get(mix.execs[i]!);
    expect(out?.status, `${mix.execs[i]}: ${JSON.stringify(out?.execution)}`).toBe(execStatus);
    expect(starts.get(`start ${tag}`), `exec ${tag} starts`).toBe(1);
    if (execStatus === 'executed') expect(dones.get(`done ${tag}`), `exec ${tag} completions`).toBe(1);
  }
  const mem = memoryLines(memoryDir, mix.store);
  for (const id of mix.memories) {
    expect(outcomes.get(id)).toMatchObject({ status: 'executed', execution: { status: 'succeeded' } });
    expect(mem.get(id), `memory lines of ${id}`).toBe(1);
  }
}
