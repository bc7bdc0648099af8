/**
 * Issue 10: the n-th identical MCP call. Each identical call that finished makes the next one a new proposal (the
 * next `sequence`), a rejected one stays refused. The proxy remembers, per call, where the finished ones end, so the
 * n-th identical call starts its walk there instead of at 0. These tests prove the shortcut changes no answer, and
 * that it really skips the earlier proposals (the walk's own record of the sequences it looked at).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus } from '../../src/client/proposals';
import type { Proposal } from '../../src/contracts/proposal';
import { report, resolveJudgedCall, type Resolution } from '../../src/mcp/judged-call';
import { mapCall, proposalForCall, type ToolCall } from '../../src/mcp/mapping';
import { callDigest } from '../../src/mcp/tools';
import { callTool, connectProxy, mcpSpec, startMcpEnv, until, verdictOf, type McpEnv } from '../helpers/mcp';

let env: McpEnv;
beforeAll(async () => {
  env = await startMcpEnv(mcpSpec());
});
afterAll(async () => {
  await env?.sys.stop();
});

/** One judged call as the proxy resolves it, with the proxy's memory of finished sequences for that call. */
function judgedCall(path: string) {
  const call: ToolCall = {
    server: 'fs',
    tool: 'create_directory',
    toolDefinitionHash: '0'.repeat(64),
    arguments: { path },
  };
  const mapping = mapCall(env.sys.policy.spec.mcp, call);
  if (mapping.kind !== 'judged') throw new Error('create_directory is judged by this policy');
  let finishedBelow: number | undefined;
  return {
    get finishedBelow() {
      return finishedBelow;
    },
    /** Resolves the call once; `looked` lists the sequences whose proposals the walk built (looked at). */
    async resolve(remember = true): Promise<{ resolution: Resolution; looked: number[] }> {
      const looked: number[] = [];
      const proposalAt = (sequence: number): Proposal => {
        looked.push(sequence);
        const p = proposalForCall({
          agentId: '@engineering',
          call,
          callDigest: callDigest(call),
          mapping,
          agentJudge: {},
          sequence,
        });
        if (!p.ok) throw new Error(p.refusal.reason);
        return p.value;
      };
      const resolution = await resolveJudgedCall(
        {
          client: env.sys.client,
          taskQueue: env.sys.taskQueues.workflow,
          holdMs: 10_000,
          signal: new AbortController().signal,
          firstSequence: remember ? finishedBelow : undefined,
          onFinished: (next) => (finishedBelow = Math.max(finishedBelow ?? 0, next)),
        },
        proposalAt,
        {},
      );
      return { resolution, looked };
    },
  };
}

/** The proxy's part after a `forward`: the upstream did it, the outcome is reported (the proposal finishes). */
async function performed(r: Resolution): Promise<string> {
  if (r.kind !== 'forward') throw new Error(`expected forward, got ${JSON.stringify(r)}`);
  await report(env.sys.client, r.status.workflow_id, { outcome: 'ok' });
  return r.status.workflow_id;
}

describe('the n-th identical call starts where the finished ones end', () => {
  it('finished approved calls: each identical call is a new proposal; the walk skips the finished ones', async () => {
    const c = judgedCall(join(env.workspace, 'again-and-again'));
    const ids: string[] = [];
    const first = await c.resolve();
    expect(first.looked).toEqual([0]);
    ids.push(await performed(first.resolution));

    const second = await c.resolve();
    expect(second.looked).toEqual([0, 1]); // 0 was finished: learned now
    ids.push(await performed(second.resolution));
    expect(c.finishedBelow).toBe(1);

    const third = await c.resolve();
    expect(third.looked).toEqual([1, 2]); // 0 is never looked at again
    ids.push(await performed(third.resolution));
    expect(c.finishedBelow).toBe(2);
    expect(new Set(ids).size).toBe(3);
    for (const [sequence, id] of ids.entries()) {
      const st = await getStatus(env.sys.client, id);
      expect(st.proposal.performer).toMatchObject({ by: 'caller', sequence });
    }

    // Without the memory the walk looks at every earlier proposal, and reaches the same new proposal.
    const fourth = await c.resolve(false);
    expect(fourth.looked).toEqual([0, 1, 2, 3]);
    expect(fourth.resolution).toMatchObject({ kind: 'forward' });
    await performed(fourth.resolution);
  });

  it('a rejected call stays refused: the walk never passes it, memory or not', async () => {
    const c = judgedCall(join(env.workspace, 'FORBIDDEN-dir'));
    const first = await c.resolve();
    expect(first.resolution).toMatchObject({ kind: 'answer' });
    const again = await c.resolve();
    expect(again.looked).toEqual([0]);
    expect(c.finishedBelow).toBeUndefined();
    if (again.resolution.kind !== 'answer') throw new Error('expected an answer');
    expect(verdictOf(again.resolution.answer)).toMatchObject({ outcome: 'REJECT', recorded: true });
  });

  it('through the proxy: identical calls performed, each its own proposal; a rejected one stays refused', async () => {
    const proxy = await connectProxy(env);
    try {
      const path = join(env.workspace, 'made-three-times');
      // Each call right after the last one's answer, while its outcome may still be on its way to the proposal: the
      // proxy waits for that record instead of refusing the call as "forwarded, no outcome yet".
      for (let i = 0; i < 5; i++) {
        const r = await callTool(proxy.agent, 'create_directory', { path });
        expect(r.isError, `call ${i + 1}: ${JSON.stringify(r.content)}`).toBeFalsy();
      }
      const sequences = await until('the five proposals in visibility', async () => {
        const found: number[] = [];
        const list = env.sys.client.workflow.list({
          query: `WorkflowType = 'proposalWorkflow' AND TaskQueue = '${env.sys.taskQueues.workflow}'`,
        });
        for await (const wf of list) {
          const st = await getStatus(env.sys.client, wf.workflowId);
          if (st.proposal.target.path === path) found.push(st.proposal.performer?.sequence ?? -1);
        }
        return found.length === 5 ? found.sort() : undefined;
      });
      expect(sequences).toEqual([0, 1, 2, 3, 4]);
      const forbidden = join(env.workspace, 'FORBIDDEN-proxy');
      expect(verdictOf(await callTool(proxy.agent, 'create_directory', { path: forbidden }))).toMatchObject({
        outcome: 'REJECT',
        recorded: false,
      });
      expect(verdictOf(await callTool(proxy.agent, 'create_directory', { path: forbidden }))).toMatchObject({
        outcome: 'REJECT',
        recorded: true,
      });
    } finally {
      await proxy.agent.close();
    }
  });
});
