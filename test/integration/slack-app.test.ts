/**
 * End to end: a real Temporal dev server, the real workers, the real Bolt app (HTTP receiver, signing secret) and
 * the @slack/web-api notifier, against the loopback Slack. A proposal escalates, the dispute is posted as Block Kit,
 * people click, the workflow acts, and the message tells everyone what happened.
 */
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import type { KeyFile } from '../../src/contracts/identity';
import { grantStatus, revokeGrant } from '../../src/client/grants';
import { decide, submitProposal } from '../../src/client/proposals';
import type { ProposalRecord } from '../../src/contracts/status';
import { buttonCustomId, revokeGrantCustomId } from '../../src/escalation/custom-id';
import { startSlackApp, type SlackApp } from '../../src/escalation/slack-app';
import type { SlackGovernanceEvent } from '../../src/escalation/slack-interaction';
import { REASON_NEEDED } from '../../src/escalation/slack-reason-form';
import { createSlackNotifier } from '../../src/escalation/slack-notifier';
import { statusQuery } from '../../src/names';
import {
  FAKE_SLACK_APP_TOKEN,
  FAKE_SLACK_BOT_TOKEN,
  FAKE_SLACK_SIGNING_SECRET,
  FakeSlack,
  type FakeSlackMessage,
} from '../helpers/fake-slack';
import { approveAndGrant } from '../helpers/grants';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

interface Harness {
  fake: FakeSlack;
  system: TestSystem;
  alice: string;
  bob: string;
  mallory: string;
  governance: SlackGovernanceEvent[];
  app: SlackApp;
  escalate(): Promise<{ workflowId: string; message: FakeSlackMessage }>;
  click(
    message: FakeSlackMessage,
    action: 'approve' | 'reject' | 'reject_reason',
    userId: string,
    workflowId: string,
  ): Promise<number>;
  status(workflowId: string): Promise<ProposalRecord>;
  stop(): Promise<void>;
}

async function harness(
  opts: {
    escalation?: Record<string, unknown>;
    channel?: boolean;
    signingKey?: KeyFile;
    socket?: boolean;
    grants?: Record<string, unknown>;
  } = {},
): Promise<Harness> {
  const fake = await FakeSlack.start();
  const alice = fake.userId('alice');
  const bob = fake.userId('bob');
  const mallory = fake.userId('mallory');
  const notifier = createSlackNotifier({
    token: FAKE_SLACK_BOT_TOKEN,
    apiUrl: fake.apiUrl,
    channelId: opts.channel ? fake.channelId : undefined,
    logger: pino({ level: 'silent' }),
  });
  const system = await startSystem({
    notifiers: [notifier],
    spec: {
      escalation: {
        approvers: ['scott', `slack:${alice}`, `slack:${bob}`],
        timeout: '2m',
        reminderAt: 0,
        ...opts.escalation,
      },
      ...(opts.grants ? { grants: opts.grants } : {}),
    },
  });
  const governance: SlackGovernanceEvent[] = [];
  const app = await startSlackApp({
    botToken: FAKE_SLACK_BOT_TOKEN,
    ...(opts.socket ? { appToken: FAKE_SLACK_APP_TOKEN } : { signingSecret: FAKE_SLACK_SIGNING_SECRET }),
    apiUrl: fake.apiUrl,
    port: 0,
    client: system.client,
    policy: system.policy,
    logger: pino({ level: 'silent' }),
    signingKey: opts.signingKey,
    onGovernanceEvent: (e) => governance.push(e),
  });
  const h: Harness = {
    fake,
    system,
    alice,
    bob,
    mallory,
    governance,
    app,
    async escalate() {
      const { workflow_id } = await submitProposal(system.client, proposal('financial_op'), {
        taskQueue: system.taskQueues.workflow,
      });
      const message = await fake.waitFor(() => fake.messagesFor(workflow_id)[0], `the escalation of ${workflow_id}`);
      return { workflowId: workflow_id, message };
    },
    click: (message, action, userId, workflowId) =>
      fake.click({ appUrl: app.url!, message, actionId: buttonCustomId(action, workflowId), userId }),
    status: (workflowId) => system.client.workflow.getHandle(workflowId).query(statusQuery),
    async stop() {
      await app.stop();
      await system.stop();
      await fake.stop();
    },
  };
  return h;
}

const blockIds = (m: FakeSlackMessage) => m.blocks.map((b) => b.block_id ?? b.type);
const hasButtons = (m: FakeSlackMessage) => m.blocks.some((b) => b.type === 'actions');

describe('Slack escalation over HTTP, one approval', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('DMs the dispute, refuses a bad signature and a non-approver; an approver’s click approves it', async () => {
    const { workflowId, message } = await h.escalate();
    expect(h.app.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/slack\/events$/);
    expect(message.channel).toBe(h.fake.dmOf(h.alice));
    await h.fake.waitFor(() => h.fake.messagesFor(workflowId).length === 2, 'two DMs');
    // bob's screen before anything is decided: a stale copy, still with its buttons.
    const bobsStale = structuredClone(h.fake.messagesFor(workflowId).find((m) => m !== message)!);
    expect(message.text).toBe('Decision needed: financial_op by @engineering (human-only)');
    expect(message.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'financial_op → account: ops', emoji: false },
    });
    expect(blockIds(message)).toContain(`aj:actions:${workflowId}`);
    expect(blockIds(message)).toContain(`aj:escalation:${workflowId}`);
    expect(JSON.stringify(message.blocks)).toContain('Agent: @engineering');

    // Not signed with the app's secret: Bolt answers 401 and nothing runs.
    const forged = await h.fake.click({
      appUrl: h.app.url!,
      message,
      actionId: buttonCustomId('approve', workflowId),
      userId: h.alice,
      badSignature: true,
    });
    expect(forged).toBe(401);
    expect((await h.status(workflowId)).decisions).toEqual([]);
    expect(h.fake.ephemerals).toEqual([]);

    expect(await h.click(message, 'approve', h.mallory, workflowId)).toBe(200);
    const refused = await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.mallory), 'the refusal');
    expect(refused.text).toBe('You are not an approver for this proposal. Nothing was done; the attempt was recorded.');
    expect(h.governance).toContainEqual(
      expect.objectContaining({ kind: 'unauthorized_click', actor: `slack:${h.mallory}`, workflow_id: workflowId }),
    );
    expect((await h.status(workflowId)).stage).toBe('awaiting_human');

    expect(await h.click(message, 'approve', h.alice, workflowId)).toBe(200);
    await h.fake.waitFor(() => !hasButtons(message), 'the message to close');
    const record = await h.status(workflowId);
    expect(record.status).toBe('approved');
    expect(record.verdict?.decided_by).toBe(`human:slack:${h.alice}`);
    expect(record.decisions).toEqual([
      expect.objectContaining({ decision: 'approve', approver: `slack:${h.alice}`, via: 'slack' }),
    ]);
    expect(message.text).toBe(`✅ Approved by <@${h.alice}>`);
    expect(message.blocks[1]).toMatchObject({ block_id: 'aj:outcome' });
    // The dispute stays under the outcome.
    expect(JSON.stringify(message.blocks)).toContain('Agent: @engineering');
    // The workflow's own resolve edits bob's copy too.
    const bobs = h.fake.messagesFor(workflowId).find((m) => m !== message)!;
    await h.fake.waitFor(() => !hasButtons(bobs), "bob's copy to close");
    expect(bobs.text).toBe(`✅ Approved by <@${h.alice}>`);

    // A late click on a stale copy is told what happened.
    await h.click(bobsStale, 'approve', h.bob, workflowId);
    const late = await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.bob), 'the late notice');
    expect(late.text).toBe(`This proposal is no longer waiting for a decision. ✅ Approved by <@${h.alice}>.`);
  });

  it('"Reject with reason…" opens a form; an approver’s non-empty reason rejects and is recorded', async () => {
    const { workflowId, message } = await h.escalate();
    const buttons = message.blocks.find((b) => b.type === 'actions')!.elements as Array<{ text: { text: string } }>;
    expect(buttons.map((b) => b.text.text)).toEqual(['Approve', 'Reject', 'Reject with reason…']);

    // Not an approver: no form, a note only they see.
    await h.click(message, 'reject_reason', h.mallory, workflowId);
    await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.mallory), 'the refusal');
    expect(h.fake.views).toEqual([]);

    await h.click(message, 'reject_reason', h.alice, workflowId);
    const view = await h.fake.waitFor(() => h.fake.views.find((v) => v.userId === h.alice), 'the reason form');
    expect(view.view).toMatchObject({
      type: 'modal',
      callback_id: `aj:v1:reason:${workflowId}`,
      title: { type: 'plain_text', text: 'Reject with reason' },
      submit: { type: 'plain_text', text: 'Reject' },
    });
    expect(JSON.stringify(view.view.blocks)).toContain('Reject financial_op → account: ops by @engineering');
    const input = (view.view.blocks as Array<Record<string, unknown>>).find((b) => b.type === 'input');
    expect(input).toMatchObject({
      block_id: 'reason',
      element: { type: 'plain_text_input', action_id: 'reason', multiline: true, min_length: 1, max_length: 1000 },
    });
    const submit = (text: string, userId?: string) =>
      h.fake.submitView({ view, userId, values: { reason: { reason: text } }, appUrl: h.app.url! });

    // Only spaces: the form stays open and says why.
    expect(await submit('   ')).toEqual({ response_action: 'errors', errors: { reason: REASON_NEEDED } });
    // The same form submitted by someone not in the policy: refused in the form, recorded, nothing decided.
    expect(await submit('looks wrong', h.mallory)).toEqual({
      response_action: 'errors',
      errors: { reason: 'You are not an approver for this proposal. Nothing was done; the attempt was recorded.' },
    });
    expect(h.governance).toContainEqual(
      expect.objectContaining({
        kind: 'unauthorized_click',
        actor: `slack:${h.mallory}`,
        workflow_id: workflowId,
        channel_id: message.channel,
        message_ts: message.ts,
      }),
    );
    expect((await h.status(workflowId)).stage).toBe('awaiting_human');

    // bob's screen before the decision, still with its buttons.
    await h.fake.waitFor(() => h.fake.messagesFor(workflowId).length === 2, 'two DMs');
    const bobsStale = structuredClone(h.fake.messagesFor(workflowId).find((m) => m !== message)!);

    // The approver's reason closes the form, rejects, and is the reason the agent is given.
    expect(await submit('Account ops is frozen until the audit ends.\nAsk finance.')).toEqual({});
    await h.fake.waitFor(() => !hasButtons(message), 'the message to close');
    const record = await h.status(workflowId);
    expect(record.status).toBe('rejected');
    expect(record.decisions).toEqual([
      expect.objectContaining({
        decision: 'reject',
        approver: `slack:${h.alice}`,
        via: 'slack',
        reason: 'Account ops is frozen until the audit ends.\nAsk finance.',
      }),
    ]);
    expect(record.verdict?.reason).toContain('Account ops is frozen until the audit ends.');
    expect(message.text).toMatch(/^❌ Rejected by/);
    expect(JSON.stringify(message.blocks)).toContain('Account ops is frozen until the audit ends.');

    // Too late for a form: the proposal is closed, and a note says what happened instead.
    const before = h.fake.ephemerals.length;
    await h.click(bobsStale, 'reject_reason', h.bob, workflowId);
    const late = await h.fake.waitFor(
      () => h.fake.ephemerals.slice(before).find((e) => e.user === h.bob),
      'the late notice',
    );
    expect(late.text).toMatch(/^This proposal is no longer waiting for a decision\. ❌ Rejected by/);
    expect(h.fake.views.filter((v) => v.userId === h.bob)).toEqual([]);
  });

  it('refuses a button that is not on the message it came from', async () => {
    const { workflowId, message } = await h.escalate();
    const other = await h.escalate();
    // alice's copy of the first escalation, with the second one's button data.
    await h.fake.click({
      appUrl: h.app.url!,
      message,
      actionId: buttonCustomId('approve', other.workflowId),
      userId: h.alice,
    });
    await h.fake.waitFor(() => h.governance.find((g) => g.kind === 'forged_interaction'), 'the forged click');
    expect((await h.status(workflowId)).decisions).toEqual([]);
    expect((await h.status(other.workflowId)).decisions).toEqual([]);
  });
});

describe('Slack escalation in a channel, quorum of two with a deadline', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ escalation: { quorum: { 'human-only': 2 }, timeout: '8s', reminderAt: 0.5 }, channel: true });
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('needs two distinct approvers; the first approval keeps the buttons', async () => {
    const { workflowId, message } = await h.escalate();
    expect(message.channel).toBe(h.fake.channelId);
    expect(h.fake.messagesFor(workflowId)).toHaveLength(1);
    expect(message.text).toContain('· 2 approvals needed');

    await h.click(message, 'approve', h.alice, workflowId);
    await h.fake.waitFor(() => message.text.startsWith('⏳'), 'the progress edit');
    expect(message.text).toBe('⏳ 1 of 2 approvals · waiting for 1 more');
    expect(hasButtons(message)).toBe(true);
    expect((await h.status(workflowId)).stage).toBe('awaiting_human');

    await h.click(message, 'approve', h.alice, workflowId);
    const again = await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.alice), 'the repeat notice');
    expect(again.text).toBe('You have already decided this proposal; waiting for 1 more approval(s).');

    await h.click(message, 'approve', h.bob, workflowId);
    await h.fake.waitFor(() => !hasButtons(message), 'the message to close');
    const s = await h.status(workflowId);
    expect(s.status).toBe('approved');
    expect(s.decisions.map((d) => d.approver)).toEqual([`slack:${h.alice}`, `slack:${h.bob}`]);
    expect(message.text).toBe(`✅ Approved by <@${h.alice}>, <@${h.bob}>`);
  });

  it('reminds in the thread after half the deadline, once, then marks the message expired', async () => {
    const { workflowId, message } = await h.escalate();
    const reminder = await h.fake.waitFor(() => h.fake.repliesTo(message.ts)[0], 'the reminder');
    expect(reminder.text).toContain(
      `<@${h.alice}> <@${h.bob}> ⏰ Reminder: financial_op by @engineering still needs a decision (0 of 2 approvals)`,
    );
    await h.fake.waitFor(() => message.text.startsWith('⌛'), 'the expired message');
    expect(message.text).toBe('⌛ Expired: no decision before the deadline, so it was rejected');
    expect(hasButtons(message)).toBe(false);
    expect(h.fake.repliesTo(message.ts)).toHaveLength(1);
    expect((await h.status(workflowId)).status).toBe('rejected');
  });
});

describe('Slack escalation with the app’s key: only decisions the app signed count', () => {
  const appKey = generateIdentity();
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ escalation: { slackBotKey: appKey.public_key }, signingKey: appKey });
  });
  afterAll(async () => h?.stop());

  it('an unsigned claim to be a Slack approver is refused; the click, signed by the app, approves', async () => {
    const { workflowId, message } = await h.escalate();
    await expect(
      decide(h.system.client, workflowId, { decision: 'approve', approver: `slack:${h.alice}`, via: 'slack' }),
    ).rejects.toThrow(/must sign decisions/);
    expect((await h.status(workflowId)).decisions).toEqual([]);
    await h.click(message, 'approve', h.alice, workflowId);
    await h.fake.waitFor(() => !hasButtons(message), 'the message to close');
    const record = await h.status(workflowId);
    expect(record.status).toBe('approved');
    expect(record.decisions[0]).toMatchObject({ approver: `slack:${h.alice}`, via: 'slack', signature: {} });
  });
});

describe('Slack escalation over Socket Mode (no public URL)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ socket: true });
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('connects with the app-level token; clicks come as envelopes, are acked, and decide the proposal', async () => {
    expect(h.app.mode).toBe('socket');
    expect(h.app.url).toBeUndefined();
    // The socket was opened with the app-level token, never the bot token.
    const opens = h.fake.calls.filter((c) => c.method === 'apps.connections.open');
    expect(opens.map((c) => c.auth)).toEqual([`Bearer ${FAKE_SLACK_APP_TOKEN}`]);
    expect(h.fake.sockets.size).toBe(1);
    expect(h.fake.refusedSockets).toEqual([]);

    const { workflowId, message } = await h.escalate();
    const click = (userId: string) =>
      h.fake.clickOverSocket({ message, actionId: buttonCustomId('approve', workflowId), userId });

    // A user not in the policy: the envelope is acked, the click refused with a note only they see.
    const refusedAck = await click(h.mallory);
    expect(refusedAck.envelope_id).toMatch(/^[0-9a-f]{32}$/);
    const refused = await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.mallory), 'the refusal');
    expect(refused.text).toBe('You are not an approver for this proposal. Nothing was done; the attempt was recorded.');
    expect(h.governance).toContainEqual(
      expect.objectContaining({ kind: 'unauthorized_click', actor: `slack:${h.mallory}`, workflow_id: workflowId }),
    );
    expect((await h.status(workflowId)).stage).toBe('awaiting_human');

    // An approver's click over the socket approves the real proposal and the message tells everyone.
    const ack = await click(h.alice);
    expect(ack.envelope_id).not.toBe(refusedAck.envelope_id);
    await h.fake.waitFor(() => !hasButtons(message), 'the message to close');
    const record = await h.status(workflowId);
    expect(record.status).toBe('approved');
    expect(record.decisions).toEqual([
      expect.objectContaining({ decision: 'approve', approver: `slack:${h.alice}`, via: 'slack' }),
    ]);
    expect(message.text).toBe(`✅ Approved by <@${h.alice}>`);
    // Every message the app sent over the socket was an ack of an envelope it was given.
    expect(h.fake.socketMessages).toEqual([
      { envelope_id: refusedAck.envelope_id, payload: {} },
      { envelope_id: ack.envelope_id, payload: {} },
    ]);
  });

  it('the reason form works over the socket: its answer goes back in the ack', async () => {
    const { workflowId, message } = await h.escalate();
    await h.fake.clickOverSocket({ message, actionId: buttonCustomId('reject_reason', workflowId), userId: h.alice });
    const view = await h.fake.waitFor(() => h.fake.views.find((v) => v.userId === h.alice), 'the reason form');
    const submit = (text: string) => h.fake.submitView({ view, values: { reason: { reason: text } } });
    expect(await submit('')).toEqual({ response_action: 'errors', errors: { reason: REASON_NEEDED } });
    expect(await submit('Not this account.')).toEqual({});
    await h.fake.waitFor(() => !hasButtons(message), 'the message to close');
    const record = await h.status(workflowId);
    expect(record.status).toBe('rejected');
    expect(record.decisions[0]).toMatchObject({ approver: `slack:${h.alice}`, reason: 'Not this account.' });
  });

  it('a wrong app-level token does not start the app', async () => {
    await expect(
      startSlackApp({
        botToken: FAKE_SLACK_BOT_TOKEN,
        appToken: 'xapp-1-not-the-token',
        apiUrl: h.fake.apiUrl,
        client: h.system.client,
        policy: h.system.policy,
        logger: pino({ level: 'silent' }),
      }),
    ).rejects.toThrow(/invalid_auth/);
    expect(h.fake.sockets.size).toBe(1);
  });
});

describe('Slack: a grant made while deciding shows on the message, with a "Revoke grant" button', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ channel: true, grants: { tiers: ['human-only'] } });
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  const revokeButton = (m: FakeSlackMessage, grantId: string) =>
    m.blocks.some(
      (b) =>
        b.type === 'actions' &&
        (b.elements as Array<{ action_id?: string }>).some((e) => e.action_id === revokeGrantCustomId(grantId)),
    );

  it('only a listed approver revokes it; the grant ends and the message says who revoked it', async () => {
    const { workflowId, message } = await h.escalate();
    const grantId = await approveAndGrant(h.system, workflowId);
    await h.fake.waitFor(() => revokeButton(message, grantId), 'the grant on the message');
    // The decision's outcome stays; the grant sits under it.
    expect(message.text).toBe('✅ Approved by scott');
    expect(hasButtons(message)).toBe(true);
    const grantLine = JSON.stringify(message.blocks.find((b) => b.block_id === `aj:grant:${grantId}`));
    expect(grantLine).toContain(`*Grant* \`${grantId}\` by scott: the identical action of @engineering (financial_op)`);
    expect(grantLine).toContain('up to 5 uses until');

    const click = (userId: string, on: FakeSlackMessage = message) =>
      h.fake.click({ appUrl: h.app.url!, message: on, actionId: revokeGrantCustomId(grantId), userId });

    // Not in the policy: refused, recorded, and the grant stays live.
    expect(await click(h.mallory)).toBe(200);
    const refused = await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.mallory), 'the refusal');
    expect(refused.text).toBe('You are not an approver for this proposal. Nothing was done; the attempt was recorded.');
    expect(h.governance).toContainEqual(
      expect.objectContaining({
        kind: 'unauthorized_click',
        actor: `slack:${h.mallory}`,
        workflow_id: `grant-${grantId}`,
      }),
    );
    expect((await grantStatus(h.system.client, grantId)).state).toBe('live');

    const stale = structuredClone(message);
    await click(h.alice);
    await h.fake.waitFor(() => !revokeButton(message, grantId), 'the button to go');
    const after = await grantStatus(h.system.client, grantId);
    expect(after.state).toBe('revoked');
    expect(after.revoked).toMatchObject({ by: `slack:${h.alice}`, reason: 'revoked from Slack' });
    expect(JSON.stringify(message.blocks)).toContain(`revoked by <@${h.alice}>`);
    expect(JSON.stringify(message.blocks)).toContain('after 0 of 5 uses');
    expect(message.text).toBe('✅ Approved by scott');

    // A second click on a stale copy: the grant is no longer live, and nothing changes.
    await click(h.bob, stale);
    const late = await h.fake.waitFor(() => h.fake.ephemerals.find((e) => e.user === h.bob), 'the late notice');
    expect(late.text).toMatch(/^This grant is no longer live \(.*\)\. Nothing was done\.$/);
    expect((await grantStatus(h.system.client, grantId)).revoked?.by).toBe(`slack:${h.alice}`);
  });

  it('a grant revoked with the CLI: its workflow updates the message, and the button goes', async () => {
    const { workflowId, message } = await h.escalate();
    const grantId = await approveAndGrant(h.system, workflowId);
    await h.fake.waitFor(() => revokeButton(message, grantId), 'the grant on the message');
    await revokeGrant(h.system.client, grantId, { by: 'scott', reason: 'done for today' });
    await h.fake.waitFor(() => !revokeButton(message, grantId), 'the button to go');
    const line = JSON.stringify(message.blocks.find((b) => b.block_id === `aj:grant:${grantId}`));
    expect(line).toContain(`\`${grantId}\`: revoked by scott <!date^`);
    expect(line).toContain('after 0 of 5 uses');
    expect(message.text).toBe('✅ Approved by scott');
  });

  it('a revoke button copied onto another message is refused', async () => {
    const first = await h.escalate();
    // Escalated before the grant exists (the grant covers the identical action, so it would approve it).
    const other = await h.escalate();
    const grantId = await approveAndGrant(h.system, first.workflowId);
    await h.fake.waitFor(() => revokeButton(first.message, grantId), 'the grant on the message');
    await h.fake.click({
      appUrl: h.app.url!,
      message: other.message,
      actionId: revokeGrantCustomId(grantId),
      userId: h.alice,
    });
    await h.fake.waitFor(
      () => h.governance.find((g) => g.kind === 'forged_interaction' && g.workflow_id === `grant-${grantId}`),
      'the forged click',
    );
    expect((await grantStatus(h.system.client, grantId)).state).toBe('live');
  });
});
