/**
 * Judged calls decided by a slow model. A fresh proposal's settling Update carries the proxy's lease: an approval
 * decided within the lease window of the call (`spec.mcp.leaseWindow`, 2 s by default) comes back redeemed and leased
 * for it (no round trip after the decision). These are
 * the cases around that lease: the client cancels before the decision (the lease the Update then takes is recorded at
 * once as never forwarded); a slower decision is not leased by the Update (the proxy redeems and leases it in one
 * Update after it); the hold ends before the decision (nothing leased: the re-issued call is forwarded once). The
 * judge is a scripted model on loopback answering APPROVE after a delay set per file name, driven by the real ollama
 * client inside the judge worker.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus } from '../../src/client/proposals';
import { answerJson, startFakeOllama, type FakeOllama } from '../helpers/fake-ollama';
import {
  callTool,
  connectProxy,
  EVIDENCE,
  mcpSpec,
  startMcpEnv,
  until,
  verdictOf,
  type ConnectedProxy,
  type McpEnv,
} from '../helpers/mcp';

/** How long the model takes to answer APPROVE, by the file the proposal writes. */
const JUDGE_MS: Record<string, number> = {
  'cancelled-while-judged.md': 300, // inside the eager proxy's 20 s lease window, even on a loaded cluster
  'slow-but-held.md': 3000, // past the patient proxy's 2 s lease window, within its hold
  'held-past-the-judge.md': 4000, // past the hasty proxy's 2 s hold
};

let fake: FakeOllama;
let env: McpEnv;
/**
 * A proxy that holds a call longer than the judge takes, one that gives up before it answers, and one whose lease
 * window outlasts the judge however long the cluster takes to ask it.
 */
let patient: ConnectedProxy;
let hasty: ConnectedProxy;
let eager: ConnectedProxy;
/** Called when the model is asked about a file, before it answers (the cancelled case cancels there). */
const onJudged = new Map<string, () => void>();

beforeAll(async () => {
  fake = await startFakeOllama({
    respond: (req) => {
      const text = req.messages.map((m) => m.content).join('\n');
      const file = Object.keys(JUDGE_MS).find((f) => text.includes(f));
      if (!file) throw new Error('unexpected judge call');
      onJudged.get(file)?.();
      return { content: answerJson('APPROVE', 0.95, 'writes the report the task names'), delayMs: JUDGE_MS[file] };
    },
  });
  const spec = (holdFor: string) => ({
    ...mcpSpec({ holdFor }),
    judge: { model: 'judge-test:latest', host: fake.host, timeoutMs: 20_000 },
  });
  env = await startMcpEnv(spec('30s'));
  patient = await connectProxy(env);
  // The hold and the lease window are the proxy's own settings: the others read the same policy with a 2 s hold, or
  // a 20 s lease window.
  const variant = async (name: string, mcp: Record<string, string>) => {
    const file = join(env.baseDir, `policy-${name}.json`);
    const policy = JSON.parse(readFileSync(env.policyFile, 'utf8')) as { spec: { mcp: Record<string, unknown> } };
    Object.assign(policy.spec.mcp, mcp);
    writeFileSync(file, JSON.stringify(policy));
    return connectProxy({ ...env, policyFile: file });
  };
  hasty = await variant('hasty', { holdFor: '2s' });
  eager = await variant('eager', { leaseWindow: '20s' });
});
afterAll(async () => {
  await patient?.agent.close();
  await hasty?.agent.close();
  await eager?.agent.close();
  await env?.sys.stop();
  await fake?.close();
});

const writeArgs = (path: string) => ({
  path,
  content: '# report\n',
  _agent_judge: { justification: 'the weekly report the ticket asks for', cited_evidence: EVIDENCE },
});

/** The one proposal on this file's task queue that writes `path` (any state). */
async function proposalWriting(path: string): Promise<string> {
  return until(`a proposal writing ${path}`, async () => {
    const list = env.sys.client.workflow.list({
      query: `WorkflowType = 'proposalWorkflow' AND TaskQueue = '${env.sys.taskQueues.workflow}'`,
    });
    for await (const wf of list) {
      const st = await getStatus(env.sys.client, wf.workflowId).catch(() => null);
      if (st?.proposal.target.path === path) return wf.workflowId;
    }
    return undefined;
  });
}

describe('a judged call that outlives the proxy waiting for it', () => {
  it('cancelled while the model judges: never forwarded, and recorded as not forwarded at once', async () => {
    const path = join(env.workspace, 'cancelled-while-judged.md');
    const controller = new AbortController();
    // Cancelled when the model is asked, so always before it answers: the settling Update is on its way by then. (A
    // fixed delay raced the judge on a loaded cluster, and so did the default 2 s lease window: the model was asked
    // more than 2 s after the call, its answer came after the window, nothing was leased and nothing recorded.)
    onJudged.set('cancelled-while-judged.md', () => controller.abort());
    const pending = callTool(eager.agent, 'write_file', writeArgs(path), { signal: controller.signal });
    await expect(pending).rejects.toThrow();
    const workflowId = await proposalWriting(path);
    // The model approves 0.3 s later, inside the lease window: the settling Update leased the approval to the call
    // that is gone; the proxy records that it was never forwarded, long before the 2-minute window would have.
    const st = await until('the outcome recorded', async () => {
      const s = await getStatus(env.sys.client, workflowId);
      return s.caller?.outcome ? s : undefined;
    });
    expect(st.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge' });
    expect(st.caller).toMatchObject({ outcome: 'upstream_failure' });
    expect(st.caller?.detail).toMatch(/client cancelled .* it was not forwarded/);
    expect(st.status).toBe('failed');
    expect(existsSync(path)).toBe(false);
  });

  it('decided after the lease window: not leased by the settling Update; redeemed and leased after it', async () => {
    const path = join(env.workspace, 'slow-but-held.md');
    const r = await callTool(patient.agent, 'write_file', writeArgs(path));
    expect(r.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('# report\n');
    const workflowId = await proposalWriting(path);
    const st = await until('the outcome recorded', async () => {
      const s = await getStatus(env.sys.client, workflowId);
      return s.caller?.outcome ? s : undefined;
    });
    expect(st.caller).toMatchObject({ outcome: 'ok' });
    expect(st.capability?.redemption?.redeemer).toBe('mcp-proxy');
    const history = await env.sys.client.workflow.getHandle(workflowId).fetchHistory();
    const updates = (history.events ?? []).flatMap((e) => {
      const name = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
      return name ? [name] : [];
    });
    expect(updates).toEqual(['awaitSettled', 'redeemCapability', 'callerOutcome']);
  });

  it('the hold ends before the model answers: pending, no lease after it; the re-call is forwarded once', async () => {
    const path = join(env.workspace, 'held-past-the-judge.md');
    const first = await callTool(hasty.agent, 'write_file', writeArgs(path));
    expect(verdictOf(first)).toMatchObject({ outcome: 'PENDING' });
    const workflowId = String(verdictOf(first)!.workflow_id);
    // The model approves after the hold: the settling Update, still open, leases nothing (past its lease_before).
    const approved = await until('the judge approves', async () => {
      const s = await getStatus(env.sys.client, workflowId);
      return s.status === 'approved' ? s : undefined;
    });
    expect(approved.capability?.redemption).toBeNull();
    expect(approved.caller?.forwarded_at).toBeNull();
    // The identical call now redeems the token and is forwarded, once.
    const again = await callTool(hasty.agent, 'write_file', writeArgs(path));
    expect(again.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('# report\n');
    const st = await until('the outcome recorded', async () => {
      const s = await getStatus(env.sys.client, workflowId);
      return s.caller?.outcome ? s : undefined;
    });
    expect(st.caller).toMatchObject({ outcome: 'ok' });
    expect(st.capability?.redemption).toMatchObject({ redeemer: 'mcp-proxy' });
    fake.assertDone();
  });
});
