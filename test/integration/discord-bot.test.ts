/**
 * End to end: a real Temporal dev server, the real workers, the real discord.js bot and
 * @discordjs/rest notifier, against the loopback Discord. A proposal escalates, the dispute is
 * posted, people click, the workflow acts, and the message tells everyone what happened.
 */
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import type { KeyFile } from '../../src/contracts/identity';
import { grantStatus, revokeGrant } from '../../src/client/grants';
import { decide, getStatus, submitProposal } from '../../src/client/proposals';
import type { ProposalRecord } from '../../src/contracts/status';
import { proposalContentDigest } from '../../src/contracts/digest';
import { startDiscordBot, type DiscordBot, type GovernanceEvent } from '../../src/escalation/bot';
import { buttonCustomId, modalCustomId, revokeGrantCustomId } from '../../src/escalation/custom-id';
import { createDiscordNotifier } from '../../src/escalation/discord-notifier';
import type { EscalationNotifier } from '../../src/escalation/notifier';
import { statusQuery } from '../../src/names';
import { FAKE_TOKEN, FakeDiscord, type FakeMessage, type FakeUser } from '../helpers/fake-discord';
import { approveAndGrant } from '../helpers/grants';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

interface Harness {
  fake: FakeDiscord;
  system: TestSystem;
  alice: FakeUser;
  bob: FakeUser;
  mallory: FakeUser;
  logs: Array<Record<string, unknown>>;
  governance: GovernanceEvent[];
  bot?: DiscordBot;
  startBot(opts?: { deferAfterMs?: number; policy?: TestSystem['policy']; signingKey?: KeyFile }): Promise<DiscordBot>;
  escalate(overrides?: Record<string, unknown>): Promise<{ workflowId: string; message: FakeMessage }>;
  status(workflowId: string): Promise<ProposalRecord>;
  stop(): Promise<void>;
}

function capturingLogger(logs: Array<Record<string, unknown>>): Logger {
  return pino(
    { level: 'info' },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
}

async function harness(
  opts: {
    escalation?: Record<string, unknown>;
    wrapNotifier?: (n: EscalationNotifier) => EscalationNotifier;
    channel?: boolean;
    grants?: Record<string, unknown>;
  } = {},
): Promise<Harness> {
  const fake = await FakeDiscord.start({ withGuildChannel: opts.channel ?? false });
  const alice = fake.addUser('alice');
  const bob = fake.addUser('bob');
  const mallory = fake.addUser('mallory');
  const notifier = createDiscordNotifier({
    token: FAKE_TOKEN,
    apiUrl: fake.apiUrl,
    channelId: opts.channel ? fake.guildChannelId : undefined,
    logger: pino({ level: 'silent' }),
  });
  const system = await startSystem({
    notifiers: [opts.wrapNotifier ? opts.wrapNotifier(notifier) : notifier],
    spec: {
      escalation: {
        approvers: ['scott', `discord:${alice.id}`, `discord:${bob.id}`],
        timeout: '2m',
        reminderAt: 0,
        ...opts.escalation,
      },
      ...(opts.grants ? { grants: opts.grants } : {}),
    },
  });
  const logs: Array<Record<string, unknown>> = [];
  const governance: GovernanceEvent[] = [];
  const h: Harness = {
    fake,
    system,
    alice,
    bob,
    mallory,
    logs,
    governance,
    async startBot(botOpts = {}) {
      h.bot = await startDiscordBot({
        deferAfterMs: botOpts.deferAfterMs,
        signingKey: botOpts.signingKey,
        token: FAKE_TOKEN,
        apiUrl: fake.apiUrl,
        client: system.client,
        policy: botOpts.policy ?? system.policy,
        logger: capturingLogger(logs),
        onGovernanceEvent: (e) => governance.push(e),
      });
      return h.bot;
    },
    async escalate(overrides = {}) {
      const { workflow_id } = await submitProposal(system.client, proposal('financial_op', overrides), {
        taskQueue: system.taskQueues.workflow,
      });
      const message = await fake.waitFor(
        () => fake.messagesFor(workflow_id)[0],
        20_000,
        `the escalation of ${workflow_id}`,
      );
      return { workflowId: workflow_id, message };
    },
    status: (workflowId) => system.client.workflow.getHandle(workflowId).query(statusQuery),
    async stop() {
      await h.bot?.stop();
      await system.stop();
      await fake.stop();
    },
  };
  return h;
}

async function waitForStage(
  h: Harness,
  workflowId: string,
  stage: string,
  timeoutMs = 20_000,
): Promise<ProposalRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await h.status(workflowId);
    if (s.stage === stage) return s;
    if (Date.now() > deadline) throw new Error(`stage is ${s.stage}, expected ${stage}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Discord escalation, one approval', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    await h.startBot();
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('posts the dispute, refuses a non-approver, and an approver’s click executes and closes it', async () => {
    const { workflowId, message } = await h.escalate();
    expect(message.channel_id).toBe(h.fake.dmChannelOf(h.alice.id)!.id);
    // alice and bob get a DM each; scott has no Discord id.
    await h.fake.waitFor(() => h.fake.messagesFor(workflowId).length === 2, 10_000, 'two DMs');
    expect(message.content).toMatch(
      /^\*\*Decision needed:\*\* financial\\_op by @\u200bengineering \(human-only\) · decide <t:\d+:R>$/,
    );
    const embed = message.embeds[0] as {
      title: string;
      fields: Array<{ name: string; value: string }>;
      footer: { text: string };
    };
    expect(embed.title).toBe('financial\\_op → account: ops');
    expect(embed.fields.find((f) => f.name === 'Tier')!.value).toBe('human-only');
    expect(embed.fields.find((f) => f.name === "Actor's justification")!.value).toMatch(/^Test financial\\_op /);
    expect(embed.footer.text.startsWith(`${workflowId} · proposal `)).toBe(true);

    const refused = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.mallory.id,
    });
    expect(refused.ephemeral).toBe(true);
    expect(refused.callback.data?.content).toBe(
      'You are not an approver for this proposal. Nothing was done; the attempt was recorded.',
    );
    expect(h.governance).toContainEqual(
      expect.objectContaining({
        kind: 'unauthorized_click',
        actor: `discord:${h.mallory.id}`,
        workflow_id: workflowId,
      }),
    );
    expect(h.logs).toContainEqual(
      expect.objectContaining({ event: 'governance', kind: 'unauthorized_click', level: 40 }),
    );
    expect((await h.status(workflowId)).stage).toBe('awaiting_human');

    const click = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.alice.id,
    });
    expect(click.latencyMs).toBeLessThan(3000);
    const final = await click.final();
    expect(final.ephemeral).toBe(false);
    const record = await h.status(workflowId);
    expect(record.status).toBe('approved');
    expect(record.verdict?.decided_by).toBe(`human:discord:${h.alice.id}`);
    expect(record.decisions).toEqual([
      expect.objectContaining({ decision: 'approve', approver: `discord:${h.alice.id}`, via: 'discord' }),
    ]);

    const edited = h.fake.messages.get(message.id)!;
    expect(edited.content).toBe(`✅ Approved by <@${h.alice.id}>`);
    expect(edited.components).toEqual([]);
    expect(JSON.stringify(edited.embeds)).toContain(`<@${h.alice.id}> ✅ approved <t:`);
    // The workflow's own resolve updates bob's copy too.
    const bobs = h.fake.messagesFor(workflowId).find((m) => m.id !== message.id)!;
    await h.fake.waitFor(() => bobs.components.length === 0, 10_000, "bob's copy to close");
    expect(bobs.content).toBe(`✅ Approved by <@${h.alice.id}>`);
  });

  it('a click on a decided proposal gets an ephemeral notice', async () => {
    const { workflowId, message } = await h.escalate();
    await decide(h.system.client, workflowId, {
      decision: 'reject',
      approver: 'scott',
      via: 'cli',
      reason: 'not this quarter',
    });
    const late = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.bob.id,
    });
    expect(late.ephemeral).toBe(true);
    expect(late.callback.data?.content).toBe(
      'This proposal is no longer waiting for a decision. ❌ Rejected by scott.',
    );
    expect((await h.status(workflowId)).status).toBe('rejected');
  });

  it('a decision through the CLI updates the Discord messages', async () => {
    const { workflowId } = await h.escalate();
    await decide(h.system.client, workflowId, {
      decision: 'reject',
      approver: 'scott',
      via: 'cli',
      reason: 'budget **frozen**',
    });
    for (const m of h.fake.messagesFor(workflowId)) {
      await h.fake.waitFor(() => m.content.startsWith('❌'), 10_000, 'the message to show the CLI rejection');
      expect(m.content).toBe('❌ Rejected by scott');
      expect(m.components).toEqual([]);
      expect(JSON.stringify(m.embeds)).toContain('via CLI: budget \\\\*\\\\*frozen\\\\*\\\\*');
    }
  });

  it('reject with reason opens a modal whose submit rejects with that reason', async () => {
    const { workflowId, message } = await h.escalate();
    const open = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('reject_reason', workflowId),
      userId: h.bob.id,
    });
    expect(open.callback.type).toBe(9);
    expect(open.callback.data?.custom_id).toBe(modalCustomId(workflowId));
    const submit = await h.fake.submitModal({
      messageId: message.id,
      customId: modalCustomId(workflowId),
      userId: h.bob.id,
      fields: { reason: '  Vendor not on the approved list.  ' },
    });
    await submit.final();
    const record = await h.status(workflowId);
    expect(record.status).toBe('rejected');
    expect(record.decisions).toEqual([
      expect.objectContaining({
        decision: 'reject',
        approver: `discord:${h.bob.id}`,
        reason: 'Vendor not on the approved list.',
        via: 'discord',
      }),
    ]);
    expect(record.verdict?.reason).toBe('Vendor not on the approved list.');
    const edited = h.fake.messages.get(message.id)!;
    expect(edited.content).toBe(`❌ Rejected by <@${h.bob.id}>`);
    expect(edited.components).toEqual([]);
  });

  it('refuses malformed and forged button data, and a modal from a non-approver', async () => {
    const a = await h.escalate();
    const b = await h.escalate();
    const before = h.governance.length;

    const malformed = await h.fake.click({
      messageId: a.message.id,
      customId: `aj:v1:approve:${a.workflowId}:x`,
      userId: h.alice.id,
    });
    expect(malformed.ephemeral).toBe(true);
    expect(malformed.callback.data?.content).toBe('This button is not one agent-judge recognises. Nothing was done.');
    const oversized = await h.fake.click({ messageId: a.message.id, customId: 'x'.repeat(150), userId: h.alice.id });
    expect(oversized.ephemeral).toBe(true);
    // Well-formed data naming another proposal than the message it came from.
    const forged = await h.fake.click({
      messageId: a.message.id,
      customId: buttonCustomId('approve', b.workflowId),
      userId: h.alice.id,
    });
    expect(forged.ephemeral).toBe(true);
    expect(forged.callback.data?.content).toBe(
      'This button does not belong to this message. Nothing was done; the attempt was recorded.',
    );
    const forgedModal = await h.fake.submitModal({
      messageId: a.message.id,
      customId: modalCustomId(b.workflowId),
      userId: h.alice.id,
      fields: { reason: 'x' },
    });
    expect(forgedModal.ephemeral).toBe(true);
    const outsider = await h.fake.submitModal({
      messageId: a.message.id,
      customId: modalCustomId(a.workflowId),
      userId: h.mallory.id,
      fields: { reason: 'x' },
    });
    expect(outsider.ephemeral).toBe(true);

    expect(h.governance.slice(before).map((e) => e.kind)).toEqual([
      'malformed_interaction',
      'malformed_interaction',
      'forged_interaction',
      'forged_interaction',
      'unauthorized_click',
    ]);
    for (const wf of [a.workflowId, b.workflowId]) {
      const s = await h.status(wf);
      expect(s.stage).toBe('awaiting_human');
      expect(s.decisions).toEqual([]);
    }
  });

  it('the workflow is the authority: an approver only in the bot’s policy is refused', async () => {
    const { workflowId, message } = await h.escalate();
    await h.bot!.stop();
    const stale = structuredClone(h.system.policy);
    stale.spec.escalation.approvers.push(`discord:${h.mallory.id}`);
    await h.startBot({ policy: stale });
    try {
      const click = await h.fake.click({
        messageId: message.id,
        customId: buttonCustomId('approve', workflowId),
        userId: h.mallory.id,
      });
      const final = await click.final();
      expect(final.ephemeral).toBe(true);
      expect(final.body.content).toBe(`Not accepted: discord:${h.mallory.id} is not an approver for this proposal`);
      expect(h.governance.at(-1)).toMatchObject({ kind: 'refused_by_workflow', workflow_id: workflowId });
      expect((await h.status(workflowId)).decisions).toEqual([]);
    } finally {
      await h.bot!.stop();
      await h.startBot();
    }
  });

  it('a pending escalation posted before a bot restart can be decided after it', async () => {
    const { workflowId, message } = await h.escalate();
    await h.bot!.stop();
    const identifies = h.fake.identifies;
    await h.startBot();
    expect(h.fake.identifies).toBe(identifies + 1);
    const click = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('reject', workflowId),
      userId: h.alice.id,
    });
    await click.final();
    expect((await h.status(workflowId)).status).toBe('rejected');
    expect(h.fake.messages.get(message.id)!.content).toBe(`❌ Rejected by <@${h.alice.id}>`);
  });
});

describe('Discord escalation when Temporal is slower than the defer threshold', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    // Defer at once: the same path a slow Temporal takes after 1.5 s.
    await h.startBot({ deferAfterMs: 0 });
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('defers first, then edits the message to the outcome', async () => {
    const { workflowId, message } = await h.escalate();
    const click = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.bob.id,
    });
    expect(click.callback.type).toBe(6);
    const final = await click.final();
    expect(final.type).toBe('edit_original');
    expect(final.body.content).toBe(`✅ Approved by <@${h.bob.id}>`);
    expect(h.fake.messages.get(message.id)!.components).toEqual([]);
    expect((await h.status(workflowId)).status).toBe('approved');
  });

  it('defers first, then answers a refusal with an ephemeral follow-up', async () => {
    const { workflowId, message } = await h.escalate();
    await decide(h.system.client, workflowId, { decision: 'approve', approver: 'scott', via: 'cli' });
    const click = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('reject', workflowId),
      userId: h.alice.id,
    });
    expect(click.callback.type).toBe(6);
    const final = await click.final();
    expect(final).toMatchObject({ type: 'followup', ephemeral: true });
    expect(final.body.content).toBe('This proposal is no longer waiting for a decision. ✅ Approved by scott.');
  });
});

describe('Discord escalation with a bot key: only decisions the bot signed count', () => {
  const botKey = generateIdentity();
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ escalation: { discordBotKey: botKey.public_key } });
    await h.startBot({ signingKey: botKey });
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('an unsigned claim to be a Discord approver is refused; the click, signed by the bot, approves', async () => {
    const { workflowId, message } = await h.escalate();
    await expect(
      decide(h.system.client, workflowId, { decision: 'approve', approver: `discord:${h.alice.id}`, via: 'discord' }),
    ).rejects.toThrow(/must sign decisions/);
    expect((await h.status(workflowId)).decisions).toEqual([]);
    const click = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.alice.id,
    });
    await click.final();
    const record = await h.status(workflowId);
    expect(record.status).toBe('approved');
    // The bot signed for the content and the run the click was on (statement v2).
    const { raw } = await h.system.client.workflow.getHandle(workflowId).describe();
    expect(record.decisions[0]).toMatchObject({
      approver: `discord:${h.alice.id}`,
      signature: {
        binds: {
          run_id: raw.workflowExecutionInfo?.firstRunId,
          content_sha256: proposalContentDigest(record.proposal),
        },
      },
    });
    expect(record.decisions[0]?.signature?.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('Discord escalation, quorum of two with a deadline', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ escalation: { quorum: { 'human-only': 2 }, timeout: '8s', reminderAt: 0.5 }, channel: true });
    await h.startBot();
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('needs two distinct approvers; the first approval keeps the buttons', async () => {
    const { workflowId, message } = await h.escalate();
    expect(message.channel_id).toBe(h.fake.guildChannelId);
    expect(h.fake.messagesFor(workflowId)).toHaveLength(1);
    expect(message.content).toContain('· 2 approvals needed ·');

    const first = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.alice.id,
    });
    await first.final();
    let s = await h.status(workflowId);
    expect(s.stage).toBe('awaiting_human');
    const progress = h.fake.messages.get(message.id)!;
    expect(progress.content).toBe('⏳ 1 of 2 approvals · waiting for 1 more');
    expect(progress.components).toHaveLength(1);

    const again = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.alice.id,
    });
    expect(again.ephemeral).toBe(true);
    expect(again.callback.data?.content).toBe(
      'You have already decided this proposal; waiting for 1 more approval(s).',
    );

    const second = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.bob.id,
    });
    await second.final();
    s = await h.status(workflowId);
    expect(s.status).toBe('approved');
    expect(s.decisions.map((d) => d.approver)).toEqual([`discord:${h.alice.id}`, `discord:${h.bob.id}`]);
    const done = h.fake.messages.get(message.id)!;
    expect(done.content).toBe(`✅ Approved by <@${h.alice.id}>, <@${h.bob.id}>`);
    expect(done.components).toEqual([]);
  });

  it('reminds after half the deadline, then marks the message expired', async () => {
    const { workflowId, message } = await h.escalate();
    const reminder = await h.fake.waitFor(() => h.fake.repliesTo(message.id)[0], 15_000, 'the reminder');
    expect(reminder.content).toContain(
      '⏰ **Reminder:** financial\\_op by @\u200bengineering still needs a decision (0 of 2 approvals)',
    );
    expect(reminder.content).toContain(`<@${h.alice.id}> <@${h.bob.id}>`);
    expect(reminder.allowed_mentions).toEqual({ parse: [], users: [h.alice.id, h.bob.id] });
    await waitForStage(h, workflowId, 'rejected', 20_000);
    await h.fake.waitFor(
      () => h.fake.messages.get(message.id)!.content.startsWith('⌛'),
      10_000,
      'the expired message',
    );
    const expired = h.fake.messages.get(message.id)!;
    expect(expired.content).toBe('⌛ Expired: no decision before the deadline, so it was rejected');
    expect(expired.components).toEqual([]);
    const late = await h.fake.click({
      messageId: message.id,
      customId: buttonCustomId('approve', workflowId),
      userId: h.alice.id,
    });
    expect(late.ephemeral).toBe(true);
    expect(String(late.callback.data?.content)).toContain('⌛ Expired');
  });
});

describe('Discord escalation, retried announcement', () => {
  let h: Harness;
  let attempts = 0;
  beforeAll(async () => {
    // The first attempt posts and then fails (a worker crash after the REST call): Temporal retries it.
    h = await harness({
      wrapNotifier: (n) => ({
        ...n,
        name: n.name,
        async announce(notice) {
          attempts += 1;
          const refs = await n.announce(notice);
          if (attempts === 1) throw new Error('simulated crash after posting');
          return refs;
        },
      }),
    });
    await h.startBot();
  });
  afterAll(async () => h?.stop());

  it('posts once, and the stored refs still let the workflow edit the message', async () => {
    const { workflowId, message } = await h.escalate();
    await h.fake.waitFor(() => attempts >= 2, 15_000, 'the retried activity');
    await new Promise((r) => setTimeout(r, 300));
    expect(h.fake.messagesFor(workflowId).filter((m) => m.channel_id === message.channel_id)).toHaveLength(1);
    expect(h.fake.messagesFor(workflowId)).toHaveLength(2); // alice + bob, one each
    await decide(h.system.client, workflowId, { decision: 'approve', approver: 'scott', via: 'cli' });
    for (const m of h.fake.messagesFor(workflowId)) {
      await h.fake.waitFor(() => m.components.length === 0, 10_000, 'the message to close');
      expect(m.content).toBe('✅ Approved by scott');
    }
    expect((await getStatus(h.system.client, workflowId)).status).toBe('approved');
  });
});

const fieldsOf = (m: FakeMessage) =>
  (m.embeds[0] as { fields?: Array<{ name: string; value: string }> } | undefined)?.fields ?? [];

describe('Discord: a grant made while deciding shows on the message, with a "Revoke grant" button', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ channel: true, grants: { tiers: ['human-only'] } });
    await h.startBot();
  });
  afterAll(async () => h?.stop());
  afterEach(() => expect(h.fake.unexpected).toEqual([]));

  it('only a listed approver revokes it; a copied button is refused; the message says who revoked it', async () => {
    const { workflowId, message } = await h.escalate();
    // Escalated before the grant exists (the grant covers the identical action, so it would approve it).
    const other = await h.escalate();
    const grantId = await approveAndGrant(h.system, workflowId);
    const revokeId = revokeGrantCustomId(grantId);
    const current = () => h.fake.messagesFor(workflowId).find((m) => m.id === message.id)!;
    await h.fake.waitFor(() => JSON.stringify(current().components).includes(revokeId), 20_000, 'the grant');
    const shown = current();
    expect(shown.content).toContain('Approved by scott');
    const grantField = fieldsOf(shown).find((f) => f.name === 'Grant')!;
    // Agent text is made inert (a zero-width space after @, markdown escaped).
    expect(grantField.value).toContain(`\`${grantId}\` by scott: the identical action of @\u200bengineering`);
    expect(grantField.value).toMatch(/up to 5 uses until <t:\d+:f>$/);
    expect(
      fieldsOf(shown)
        .map((f) => f.name)
        .slice(0, 2),
    ).toEqual(['Outcome', 'Grant']);

    // Not in the policy: refused, recorded, and the grant stays live.
    const refused = await h.fake.click({ messageId: message.id, customId: revokeId, userId: h.mallory.id });
    expect(refused.ephemeral).toBe(true);
    expect(refused.callback.data?.content).toBe(
      'You are not an approver for this proposal. Nothing was done; the attempt was recorded.',
    );
    expect(h.governance).toContainEqual(
      expect.objectContaining({ kind: 'unauthorized_click', workflow_id: `grant-${grantId}` }),
    );
    // The revoke button's data on another message (the other proposal's): refused as forged.
    const forged = await h.fake.click({ messageId: other.message.id, customId: revokeId, userId: h.alice.id });
    expect(forged.callback.data?.content).toBe(
      'This button does not belong to this message. Nothing was done; the attempt was recorded.',
    );
    expect((await grantStatus(h.system.client, grantId)).state).toBe('live');

    const click = await h.fake.click({ messageId: message.id, customId: revokeId, userId: h.alice.id });
    const final = await click.final();
    expect(final.ephemeral).toBe(false);
    const after = await grantStatus(h.system.client, grantId);
    expect(after.state).toBe('revoked');
    expect(after.revoked).toMatchObject({ by: `discord:${h.alice.id}`, reason: 'revoked from Discord' });
    await h.fake.waitFor(() => !JSON.stringify(current().components).includes(revokeId), 10_000, 'the button to go');
    const revokedField = fieldsOf(current()).find((f) => f.name === 'Grant')!;
    expect(revokedField.value).toContain(`revoked by <@${h.alice.id}>`);
    expect(revokedField.value).toContain('after 0 of 5 uses');

    // Revoked: a second revoke (the CLI, say) is refused by the grant's workflow.
    // (refused while its run is still closing, or not running any more once it has).
    await expect(revokeGrant(h.system.client, grantId, { by: 'scott' })).rejects.toThrow(
      /already revoked|is not running/,
    );
    expect((await grantStatus(h.system.client, grantId)).revoked?.by).toBe(`discord:${h.alice.id}`);
  });

  it('a grant revoked with the CLI: its workflow updates the message, and the button goes', async () => {
    const { workflowId, message } = await h.escalate();
    const grantId = await approveAndGrant(h.system, workflowId);
    const revokeId = revokeGrantCustomId(grantId);
    const current = () => h.fake.messagesFor(workflowId).find((m) => m.id === message.id)!;
    await h.fake.waitFor(() => JSON.stringify(current().components).includes(revokeId), 20_000, 'the grant');
    await revokeGrant(h.system.client, grantId, { by: 'scott' });
    await h.fake.waitFor(() => !JSON.stringify(current().components).includes(revokeId), 20_000, 'the button to go');
    const line = fieldsOf(current()).find((f) => f.name === 'Grant')!;
    expect(line.value).toMatch(new RegExp(`^\`${grantId}\`: revoked by scott <t:\\d+:f> after 0 of 5 uses$`));
  });
});
