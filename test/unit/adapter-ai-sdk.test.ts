/**
 * The AI SDK adapter's own logic without the SDK (which needs Node 22: test/integration/adapter-ai-sdk.test.ts drives
 * the real one): which tools it refuses to wrap, a tool added after wrapping, a streaming tool's outcome reported
 * when the SDK has read it, a throwing tool reported as a performer failure, and how a resumed run is recognised.
 * The gate is a stand-in answering what each test says; the lease records its reports.
 */
import { describe, expect, it } from 'vitest';
import { isResumed, withAgentJudge } from '../../src/adapters/ai-sdk';
import type { Gate, GateAnswer, GateOutcome, Lease } from '../../src/gate';

function gateAnswering(answer: GateAnswer): { gate: Gate; asked: string[] } {
  const asked: string[] = [];
  const gate = {
    decide: (call: { tool: string }) => {
      asked.push(call.tool);
      return Promise.resolve(answer);
    },
  } as unknown as Gate;
  return { gate, asked };
}

function leased(): { answer: GateAnswer; reports: Array<[GateOutcome, string | undefined]> } {
  const reports: Array<[GateOutcome, string | undefined]> = [];
  const lease = {
    proposalId: 'call-0',
    report: (outcome: GateOutcome, detail?: string) => {
      reports.push([outcome, detail]);
      return Promise.resolve();
    },
  } as unknown as Lease;
  return { answer: { kind: 'forward', rule: 'r', lease, arguments: { x: '1' } }, reports };
}

const request = (toolName: string, toolCallId = 'c1') => ({
  toolCall: { toolCallId, toolName, input: { x: '1' } },
  messages: [{ role: 'user', content: 'go' }],
});
const execution = (toolCallId = 'c1') => ({ toolCallId, messages: [], context: undefined });
type Run = (input: unknown, options: unknown) => unknown;

describe('withAgentJudge (AI SDK)', () => {
  it('refuses provider-executed tools and tools without execute rather than passing them unjudged', () => {
    const { gate } = gateAnswering({ kind: 'forward', rule: 'r', lease: null, arguments: {} });
    expect(() => withAgentJudge({ search: { type: 'provider' } }, { gate })).toThrow(
      /cannot judge the provider tool search/,
    );
    expect(() => withAgentJudge({ ask: { description: 'Ask the user' } }, { gate })).toThrow(
      /cannot judge the tool ask: it has no execute/,
    );
  });

  it('denies a call of a tool added to the set after wrapping, without asking the gate', async () => {
    const { gate, asked } = gateAnswering({ kind: 'forward', rule: 'r', lease: null, arguments: {} });
    const judged = withAgentJudge({ read: { execute: () => 'x' } }, { gate });
    await expect(judged.toolApproval(request('shell'))).resolves.toEqual({
      type: 'denied',
      reason: 'agent-judge REJECT: the tool shell is not behind agent-judge. Not performed.',
    });
    expect(asked).toEqual([]);
  });

  it("reports a streaming tool's outcome once it was read, and a throwing tool as a performer failure", async () => {
    const stream = leased();
    let read = 0;
    const { gate } = gateAnswering(stream.answer);
    const judged = withAgentJudge(
      {
        progress: {
          execute: async function* () {
            yield 'half';
            await Promise.resolve();
            read++;
            yield 'done';
          },
        },
      },
      { gate },
    );
    await expect(judged.toolApproval(request('progress'))).resolves.toBe('not-applicable');
    const output = (await (judged.tools.progress.execute as unknown as Run)({ x: '1' }, execution())) as
      | AsyncIterable<string>
      | undefined;
    expect(stream.reports).toEqual([]);
    const parts: string[] = [];
    for await (const part of output!) parts.push(part);
    expect(parts).toEqual(['half', 'done']);
    expect(read).toBe(1);
    expect(stream.reports).toEqual([['ok', undefined]]);

    const failing = leased();
    const broken = withAgentJudge(
      {
        deploy: {
          execute: () => {
            throw new Error('boom');
          },
        },
      },
      { gate: gateAnswering(failing.answer).gate },
    );
    await broken.toolApproval(request('deploy', 'c2'));
    await expect(
      Promise.resolve((broken.tools.deploy.execute as unknown as Run)({ x: '1' }, execution('c2'))),
    ).rejects.toThrow('boom');
    expect(failing.reports).toEqual([['performer_failure', 'boom']]);
  });

  it('recognises a resumed run: the messages end with an approval response to this call', () => {
    const asked = {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'c1', toolName: 'deploy', input: {} },
        { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
      ],
    };
    const answered = { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] };
    expect(isResumed('c1', [{ role: 'user', content: 'go' }, asked, answered])).toBe(true);
    expect(isResumed('c2', [{ role: 'user', content: 'go' }, asked, answered])).toBe(false);
    expect(isResumed('c1', [{ role: 'user', content: 'go' }, asked])).toBe(false);
    expect(isResumed('c1', [asked, { role: 'tool', content: [] }])).toBe(false);
  });
});
