/**
 * The A2A front at the circle boundary, driven by the A2A SDK's own client against the front on
 * loopback, with the SDK's own server as the agents behind it and a real circle registry on the
 * shared Temporal dev server. Circle A: parent A with sub-agent a1; circle B: parent B with b1;
 * X: a top-level agent of another organisation.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { AGENT_CARD_PATH, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { generateIdentity } from '../../src/identity/keys';
import type { KeyFile } from '../../src/contracts/identity';
import type { CircleRegistryClient } from '../../src/client/circles';
import { startA2AFront, type A2AFront } from '../../src/a2a/front';
import { upstreamExecutor } from '../../src/a2a/upstream';
import { bridgeMessage, knockMessage, knockRequestOptions } from '../../src/a2a/caller';
import { A2A_METADATA, A2A_TASK_METADATA, agentUrl, KNOCK_EXTENSION_URI } from '../../src/a2a/names';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';
import { startLoopbackAgent, type LoopbackAgent } from '../helpers/a2a-agent';
import { recordingLogger } from '../helpers/logger';

type Agent = KeyFile & { circle: string };

let env: CirclesEnv;
let reg: CircleRegistryClient;
let front: A2AFront;
const log = recordingLogger();
let A: Agent, B: Agent, X: Agent, a1: Agent, b1: Agent;
const behind = new Map<string, LoopbackAgent>();

async function top(org?: string): Promise<Agent> {
  const key = generateIdentity();
  const r = await reg.registerTopLevel({ public_key: key.public_key, ...(org ? { org } : {}) });
  return { ...key, circle: r.circle_id };
}
async function sub(parent: Agent): Promise<Agent> {
  const key = generateIdentity();
  const r = await reg.spawnSubAgent({ parentKey: parent, childPublicKey: key.public_key });
  return { ...key, circle: r.circle_id };
}

beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'a2a');
  reg = env.registry();
  A = await top();
  B = await top();
  X = await top('partner');
  a1 = await sub(A);
  b1 = await sub(B);
  // Every agent has an A2A server of its own, sub-agents too: the front must never forward to those.
  for (const [name, agent] of Object.entries({ A, B, X, a1, b1 }))
    behind.set(agent.amid, await startLoopbackAgent(name));
  front = await startA2AFront({
    registry: reg,
    deliverTo: (amid) => {
      const agent = behind.get(amid);
      return agent ? upstreamExecutor(agent.url) : undefined;
    },
    logger: log,
  });
});
afterAll(async () => {
  await front?.close();
  for (const agent of behind.values()) await agent.close();
  await env?.stop();
});

const clientFor = (amid: string): Promise<Client> => new ClientFactory().createFromUrl(agentUrl(front.url, amid));
const send = async (client: Client, message: Message) =>
  client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined }, knockRequestOptions());
const textOf = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n');

describe('agent cards', () => {
  it('lists only the top-level agents, and serves a card for each and for nobody else', async () => {
    const listing = (await (await fetch(`${front.url}/agents`)).json()) as { agents: Array<{ amid: string }> };
    expect(listing.agents.map((a) => a.amid).sort()).toEqual([A.amid, B.amid, X.amid].sort());

    const card = (await (await fetch(`${agentUrl(front.url, A.amid)}${AGENT_CARD_PATH}`)).json()) as AgentCard;
    expect(card.name).toBe(`agent ${A.amid}`);
    expect(card.supportedInterfaces[0]?.url).toBe(agentUrl(front.url, A.amid));
    expect(card.skills.map((s) => s.id)).toEqual(['message', 'cross-circle-request']);
    expect(JSON.stringify(card)).not.toContain(a1.amid);
    expect(JSON.stringify(card)).not.toContain(A.circle);

    const subCard = await fetch(`${agentUrl(front.url, a1.amid)}${AGENT_CARD_PATH}`);
    expect(subCard.status).toBe(404);
    expect(((await subCard.json()) as { error: string }).error).toContain(`${a1.amid} is not a top-level agent`);
    await expect(clientFor(a1.amid)).rejects.toThrow(/404/);
  });
});

describe('messages', () => {
  it('a top-level peer passes KNOCK and the agent receives the message with the verified sender', async () => {
    const answer = await send(await clientFor(B.amid), knockMessage(A, B.amid, 'hello B'));
    expect('messageId' in answer && textOf(answer)).toBe(`B received "hello B" from ${A.amid}`);
    expect(behind.get(B.amid)?.received.map(textOf)).toEqual(['hello B']);
    expect(log.lines('knock allowed').at(-1)).toMatchObject({ level: 'info', from: A.amid, to: B.amid });
  });

  it('a sub-agent reaches its own parent', async () => {
    const answer = await send(await clientFor(A.amid), knockMessage(a1, A.amid, 'report ready'));
    expect('messageId' in answer && textOf(answer)).toBe(`A received "report ready" from ${a1.amid}`);
  });

  it('a message addressed to a sub-agent is refused and never reaches it', async () => {
    const card = (await (await fetch(`${agentUrl(front.url, A.amid)}${AGENT_CARD_PATH}`)).json()) as AgentCard;
    // A caller that forges a card pointing at the sub-agent's path.
    const forged = await new ClientFactory().createFromAgentCard({
      ...card,
      supportedInterfaces: [{ ...card.supportedInterfaces[0]!, url: agentUrl(front.url, a1.amid) }],
    });
    const knocksBefore = (await reg.stats()).knocks;
    await expect(send(forged, knockMessage(A, a1.amid, 'psst'))).rejects.toThrow(
      `${a1.amid} is not a top-level agent served by this front`,
    );
    expect(behind.get(a1.amid)?.received).toEqual([]);
    expect((await reg.stats()).knocks).toBe(knocksBefore);
    expect(log.lines('refused: not an active top-level agent').at(-1)).toMatchObject({ method: 'POST', amid: a1.amid });
  });
});

const asTask = (answer: Message | Task): Task => {
  expect('status' in answer).toBe(true);
  return answer as Task;
};

describe('across circles', () => {
  it('a sub-agent of B is denied a direct message; its cross-circle request waits for both parents', async () => {
    const denied = asTask(await send(await clientFor(A.amid), knockMessage(b1, A.amid, 'hi A, from b1')));
    expect(denied.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(denied.metadata?.[A2A_TASK_METADATA.code]).toBe('cross-circle');
    expect(textOf(denied.status?.message)).toContain('Cross-circle traffic goes through the parents');

    const requested = asTask(await send(await clientFor(A.amid), bridgeMessage(b1, A.amid, 'need the Q3 chart')));
    expect(requested.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const requestId = String(requested.metadata?.[A2A_TASK_METADATA.bridgeRequestId]);
    expect(textOf(requested.status?.message)).toContain(`${requestId} awaits parent ${B.amid}`);
    expect(log.lines('cross-circle request made').at(-1)).toMatchObject({
      from: b1.amid,
      to: A.amid,
      request_id: requestId,
    });
    expect(behind.get(A.amid)?.received.map(textOf)).not.toContain('need the Q3 chart');

    // The bridge as the circles run it: B forwards, A delivers, A reads it.
    await reg.decideCrossCircle({ key: B, requestId, decision: 'forward' });
    await reg.decideCrossCircle({ key: A, requestId, decision: 'deliver' });
    const inbox = (await reg.bridgeFor(A.amid)).find((r) => r.request_id === requestId);
    expect(inbox).toMatchObject({ from: b1.amid, to: A.amid, status: 'delivered', message: 'need the Q3 chart' });
    const hops = (await reg.events()).events.filter((e) => e.request_id === requestId).map((e) => e.code);
    expect(hops).toEqual(['requested', 'forwarded', 'delivered']);
  });

  it('a top-level agent may not use the bridge: the refusal is a rejected task and a governance event', async () => {
    const refused = asTask(await send(await clientFor(A.amid), bridgeMessage(B, A.amid, 'bridge me')));
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(refused.metadata?.[A2A_TASK_METADATA.code]).toBe('not-sub-agent');
    expect(log.lines('cross-circle request refused').at(-1)).toMatchObject({ from: B.amid, code: 'not-sub-agent' });
    const last = (await reg.events()).events.at(-1);
    expect(last).toMatchObject({ kind: 'bridge-refused', code: 'not-sub-agent', from: B.amid, to: A.amid });
  });
});

describe('denied KNOCKs', () => {
  it('another organisation is denied unless allowlisted, and each denial is a governance event', async () => {
    const before = (await reg.events()).total;
    const denied = asTask(await send(await clientFor(A.amid), knockMessage(X, A.amid, 'hello from partner')));
    expect(denied.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(denied.status?.message)).toContain('KNOCK denied (not-allowlisted)');
    expect(log.lines('knock denied').at(-1)).toMatchObject({ from: X.amid, to: A.amid, code: 'not-allowlisted' });
    const events = await reg.events();
    expect(events.total).toBe(before + 1);
    expect(events.events.at(-1)).toMatchObject({ kind: 'knock-denied', code: 'not-allowlisted', from: X.amid });
    expect(behind.get(A.amid)?.received.map(textOf)).not.toContain('hello from partner');

    await reg.allowPair(X.amid, A.amid);
    const allowed = await send(await clientFor(A.amid), knockMessage(X, A.amid, 'hello again'));
    expect('messageId' in allowed && textOf(allowed)).toBe(`A received "hello again" from ${X.amid}`);
  });

  it('a replayed message is denied as a replay', async () => {
    const client = await clientFor(B.amid);
    const message = knockMessage(A, B.amid, 'once only');
    expect('messageId' in (await send(client, message))).toBe(true);
    const replay = asTask(await send(client, message));
    expect(replay.metadata?.[A2A_TASK_METADATA.code]).toBe('replay');
    expect(
      behind
        .get(B.amid)
        ?.received.map(textOf)
        .filter((t) => t === 'once only'),
    ).toHaveLength(1);
  });
});

describe('malformed A2A input', () => {
  it('no extension header, no KNOCK, a KNOCK for other text or agent, a data part: each is refused', async () => {
    const client = await clientFor(B.amid);
    const undeclared = client.sendMessage({
      tenant: '',
      message: knockMessage(A, B.amid, 'no extension header'),
      configuration: undefined,
      metadata: undefined,
    });
    await expect(undeclared).rejects.toThrow(
      `Client must declare support for required extensions: ${KNOCK_EXTENSION_URI}`,
    );

    const bare = knockMessage(A, B.amid, 'x');
    bare.metadata = {};
    await expect(send(client, bare)).rejects.toThrow(`message.metadata["${A2A_METADATA.knock}"]: required`);

    const swapped = knockMessage(A, B.amid, 'the signed text');
    swapped.parts = [{ ...swapped.parts[0]!, content: { $case: 'text', value: 'other text' } }];
    await expect(send(client, swapped)).rejects.toThrow('statement.nonce: must be the digest of this message');

    const elsewhere = knockMessage(A, X.amid, 'for X');
    await expect(send(client, elsewhere)).rejects.toThrow(`statement.to: must be ${B.amid}`);

    const data = knockMessage(A, B.amid, 'x');
    data.parts = [{ ...data.parts[0]!, content: { $case: 'data', value: { a: 1 } } }];
    await expect(send(client, data)).rejects.toThrow('message.parts[0]: only text parts are accepted');
    expect(behind.get(B.amid)?.received.map(textOf)).not.toContain('other text');
  });

  it('broken JSON-RPC gets the JSON-RPC parse error', async () => {
    const res = await fetch(agentUrl(front.url, B.amid), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: '{"jsonrpc": "2.0", "method": ',
    });
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32700);
  });
});
