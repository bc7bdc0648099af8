/**
 * The web approval inbox in headless Chromium, driven by clicks: the page's own script runs the WebAuthn ceremonies
 * against a virtual authenticator of the Chrome DevTools Protocol (a platform authenticator with user verification),
 * so enrolment, sign-in and the passkey-signed approval go through the browser's real `navigator.credentials`, on
 * the real Temporal dev server with real workers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { Client, Connection, WorkflowIdReusePolicy } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LiveGrants } from '../../src/activities/live-grants';
import { createGrant, grantStatus } from '../../src/client/grants';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import type { GrantRequest, GrantStatus } from '../../src/contracts/grant';
import { PasskeyRegistryReader } from '../../src/identity/passkey-registry';
import { GRANT_MEMO_KEY, GRANT_WORKFLOW_TYPE, grantWorkflowId } from '../../src/names';
import { InviteStore } from '../../src/inbox/invites';
import { inviteLink, type InboxServer } from '../../src/inbox/server';
import { startTestInbox } from '../helpers/inbox-server';
import { silentLogger } from '../helpers/logger';
import { proposal, startSystem, type TestSystem } from '../helpers/system';
import { toolPath } from '../helpers/tools';

const WAIT = { timeout: 30_000 };

/** A virtual platform authenticator with user verification, for this page's WebAuthn ceremonies. */
async function withAuthenticator(page: Page): Promise<void> {
  const cdp = await page.createCDPSession();
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

describe('the inbox in a browser', () => {
  let sys: TestSystem;
  let dir: string;
  let inbox: InboxServer;
  let browser: Browser;
  let page: Page;
  let connection: Connection;
  let grants: LiveGrants;
  const problems: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-inbox-browser-'));
    const registry = join(dir, 'passkeys.json');
    const reader = new PasskeyRegistryReader(registry, silentLogger, 0);
    connection = await Connection.connect({ address: inject('temporalAddress') });
    // The test's own index of live grants, refreshed on demand.
    const queue = `inbox-browser-${Math.random().toString(36).slice(2)}`;
    grants = new LiveGrants({
      client: new Client({ connection, namespace: inject('temporalNamespace') }),
      taskQueue: queue,
      logger: pino({ level: 'silent' }),
    });
    sys = await startSystem({
      grants,
      taskQueuePrefix: queue,
      spec: {
        escalation: {
          timeout: '5m',
          approvers: ['scott'],
          quorum: { 'human-only': 1 },
          requireSignedDecisions: true,
          reminderAt: 0,
        },
        grants: { tiers: ['human-only'], maxLifetime: '1h', maxUses: 50 },
      },
      passkeys: () => reader.current(),
    });
    inbox = await startTestInbox(sys, { dir, registry: registry }, silentLogger);
    browser = await puppeteer.launch({ executablePath: toolPath('chromium'), args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
    await page.setViewport({ width: 390, height: 844, isMobile: true });
    await withAuthenticator(page);
  });
  afterAll(async () => {
    await browser?.close();
    await inbox?.close();
    grants?.stop();
    await sys?.stop();
    await connection?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The text a person reads in the element `selector` (as rendered: whitespace collapsed). */
  const textOf = (selector: string) => page.$eval(selector, (el) => (el as { innerText: string }).innerText.trim());

  it('enrols by invite, signs in and approves by clicking', async () => {
    const { token } = new InviteStore(join(dir, 'state', 'invites')).create('scott', 3_600_000);
    await page.goto(inviteLink(inbox.url, token), { waitUntil: 'load', ...WAIT });
    expect(await textOf('h1')).toBe('Enrol a passkey for scott');
    await page.type('input[name="name"]', 'virtual');
    await page.click('#enrol button[type="submit"]');
    await page.waitForFunction(`!document.getElementById('message').hidden`, WAIT);
    expect(await textOf('#message')).toMatch(/^Passkey enrolled for scott\./);

    // Started after the enrolment, so its run holds scott's passkey.
    const p = proposal('financial_op', { justification: 'Pay invoice 7 <b>now</b>' });
    const submitted = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(submitted.status).toBe('awaiting_human');

    await page.goto(inbox.url, { waitUntil: 'load', ...WAIT });
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', ...WAIT }), page.click('#sign-in')]);
    expect(await textOf('h1')).toBe('Pending for scott');

    await Promise.all([
      page.waitForNavigation({ waitUntil: 'load', ...WAIT }),
      page.click(`a[href="/p/${submitted.workflow_id}"]`),
    ]);
    expect(await textOf('#outcome')).toBe('Waiting for approvals: 0 of 1');
    expect(await page.$eval('pre.agent', (el) => (el as { textContent: string }).textContent)).toBe(
      'Pay invoice 7 <b>now</b>',
    );
    await page.type('textarea[name="reason"]', 'invoice checked');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', ...WAIT }), page.click('button[value="approve"]')]);
    expect(await textOf('#message')).toBe('Your decision was recorded.');
    expect(await textOf('#outcome')).toMatch(/^Approved/);
    expect(await textOf('#decisions')).toMatch(/scott approved .* \(signed with a passkey\): invoice checked/);

    const record = await getStatus(sys.client, submitted.workflow_id);
    expect(record.status).toMatch(/^(approved|executed)$/);
    expect(record.decisions[0]?.signature?.webauthn).toBeDefined();
    // No script error, no blocked inline script (the Content-Security-Policy would say so on the console). Chromium
    // warns that RS256 is not offered: on purpose, the workflow verifies ES256 and EdDSA only (docs/inbox.md).
    expect(problems.filter((p) => !p.includes('missing at least one of the default algorithm identifiers'))).toEqual(
      [],
    );
  });

  /**
   * Opens a pending proposal's page from the inbox's list (scott is signed in from the test before). The list reads
   * visibility, which lags the start (more on the multi-process cluster): the page is loaded again until the proposal
   * is listed, for at most 15 s.
   */
  async function openProposal(workflowId: string): Promise<void> {
    const link = `a[href="/p/${workflowId}"]`;
    for (let tries = 0; ; tries++) {
      await page.goto(inbox.url, { waitUntil: 'load', ...WAIT });
      if ((await page.$(link)) !== null || tries >= 60) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', ...WAIT }), page.click(link)]);
  }
  const submit = (parameters: Record<string, unknown>) =>
    submitAndWait(sys.client, proposal('financial_op', { parameters }), { taskQueue: sys.taskQueues.workflow });

  it('edits then approves, approves with a grant that approves the next call, revokes; replays fail', async () => {
    // Approve with edits: the amount lowered and the memo shortened in the page's own form.
    const edited = await submit({ amount: 800, currency: 'EUR', memo: 'invoice 8, in full' });
    expect(edited.status).toBe('awaiting_human');
    await openProposal(edited.workflow_id);
    await page.click('#edits summary');
    const field = (path: string) => `textarea[data-edit-path="${path}"]`;
    expect(await page.$eval(field('parameters.amount'), (el) => (el as { value: string }).value)).toBe('800');
    for (const [path, value] of [
      ['parameters.amount', '200'],
      ['parameters.memo', 'invoice 8, part'],
    ] as const) {
      await page.$eval(field(path), (el) => ((el as { value: string }).value = ''));
      await page.type(field(path), value);
    }
    await page.type('textarea[name="reason"]', 'a quarter now');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', ...WAIT }), page.click('button[value="approve"]')]);
    expect(await textOf('#message')).toBe('Your decision was recorded.');
    expect(await textOf('#edited')).toContain('parameters.amount');
    expect(await textOf('#decisions')).toMatch(
      /scott approved with 2 edits at .* via the inbox \(signed with a passkey\)/,
    );
    const afterEdit = await getStatus(sys.client, edited.workflow_id);
    expect(afterEdit.decisions).toMatchObject([
      {
        approver: 'scott',
        via: 'inbox',
        edits: [
          { path: 'parameters.amount', value: 200 },
          { path: 'parameters.memo', value: 'invoice 8, part' },
        ],
      },
    ]);
    expect(afterEdit.edited?.changes).toEqual([
      { path: 'parameters.amount', from: 800, to: 200 },
      { path: 'parameters.memo', from: 'invoice 8, in full', to: 'invoice 8, part' },
    ]);

    // Approve and grant: two assertions by the virtual authenticator, the decision's and the grant's.
    const params = { amount: 55, currency: 'EUR' };
    const first = await submit(params);
    await openProposal(first.workflow_id);
    await page.click('#grant summary');
    await page.click('input[name="grant"]');
    await page.$eval('input[name="grant-uses"]', (el) => ((el as { value: string }).value = ''));
    await page.type('input[name="grant-uses"]', '3');
    // Before the passkey is asked, the page says what the grant will cover; it signs once the approver confirms.
    await page.click('button[value="approve"]');
    await page.waitForFunction(`!document.getElementById('grant-confirm').hidden`, WAIT);
    expect(await textOf('#grant-coverage')).toMatch(
      new RegExp(
        '^financial_op by @engineering: only the identical action: target\\.account "ops" exactly, ' +
          'parameters\\.amount 55 exactly, parameters\\.currency "EUR" exactly; in any session; ' +
          'for 30 minutes \\(until \\S+\\); at most 3 uses$',
      ),
    );
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', ...WAIT }), page.click('#grant-sign')]);
    const notice = await textOf('#message');
    expect(notice).toMatch(/^Your decision was recorded\. Grant g[a-z2-7]{20} is live \(see Your grants\)\.$/);
    const grantId = /Grant (g[a-z2-7]{20})/.exec(notice)![1]!;
    expect(await grantStatus(sys.client, grantId)).toMatchObject({
      state: 'live',
      definition: { approver: 'scott', max_uses: 3, match: { kind: 'identical' } },
    });

    // The next identical proposal is approved by the grant, not by a person.
    await grants.refresh();
    const second = await submit(params);
    expect(second.status).toBe('approved');
    expect(second.verdict?.decided_by).toBe(`grant:${grantId}`);

    // A replayed assertion, refused by the workflow itself: the recorded passkey decision sent to another proposal.
    const third = await submit({ amount: 56, currency: 'EUR' });
    expect(third.status).toBe('awaiting_human');
    const recorded = (await getStatus(sys.client, first.workflow_id)).decisions[0]!;
    expect(recorded.signature?.webauthn).toBeDefined();
    const { at: _at, ...replayed } = recorded;
    await expect(decide(sys.client, third.workflow_id, replayed)).rejects.toThrow(/signed for another run/);
    // The grant's passkey-signed request, as the grant workflow received it.
    const history = await sys.client.workflow.getHandle(grantWorkflowId(grantId)).fetchHistory();
    const startInput = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const grantRequest = JSON.parse(Buffer.from(startInput!).toString('utf8')) as GrantRequest;
    expect(grantRequest.signature?.webauthn).toBeDefined();

    // The approver's grants in the inbox: listed with its use, revoked by a click.
    await page.goto(`${inbox.url}/grants`, { waitUntil: 'load', ...WAIT });
    expect(await textOf(`.card.grant[data-grant-id="${grantId}"]`)).toMatch(/1 of 3 uses/);
    await page.type(`form.revoke[data-grant-id="${grantId}"] input[name="reason"]`, 'enough');
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'load', ...WAIT }),
      page.click(`form.revoke[data-grant-id="${grantId}"] button`),
    ]);
    expect(await textOf('#message')).toBe(`Grant ${grantId} was revoked.`);
    expect(await textOf('#no-grants')).toBe('You have no live grants.');
    expect(await grantStatus(sys.client, grantId)).toMatchObject({
      state: 'revoked',
      revoked: { by: 'scott', reason: 'enough' },
    });
    await grants.refresh();
    expect((await submit(params)).status).toBe('awaiting_human');
    // The grant's signed request replayed as createGrant sends it: Temporal refuses the spent id. Forced past that
    // (another id reuse policy): the grant workflow refuses it itself.
    await expect(createGrant(sys.client, grantRequest, { taskQueue: sys.taskQueues.workflow })).rejects.toThrow(
      /already started/,
    );
    const forced = await sys.client.workflow.start(GRANT_WORKFLOW_TYPE, {
      taskQueue: sys.taskQueues.workflow,
      workflowId: grantWorkflowId(grantId),
      args: [grantRequest],
      memo: { [GRANT_MEMO_KEY]: grantRequest.definition },
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    expect((await forced.result()) as GrantStatus).toMatchObject({
      state: 'refused',
      refusal: `grant ${grantId} already ran; a grant id starts once`,
    });
    expect(problems.filter((p) => !p.includes('missing at least one of the default algorithm identifiers'))).toEqual(
      [],
    );
  });

  it("an MCP tool's argument names: shown by the one rule in the edit labels, named exactly by an edit", async () => {
    // Issue 38, second review: the agent names the arguments; a direction override, a fake ✅ and a zero-width space
    // in them are named inside the agent's frame (src/contracts/untrusted-text.ts), never obeyed or hidden.
    const override = 'limit\u202e✅ verified by the judge';
    const lookAlike = 'ops-\u200bmain';
    const call = proposal('mcp_tool_call', {
      target: { server: 'deploy', tool: 'release' },
      parameters: { arguments: { [override]: 5, [lookAlike]: 'prod-and-staging' } },
    });
    const out = await submitAndWait(sys.client, call, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('awaiting_human');
    await openProposal(out.workflow_id);
    await page.click('#edits summary');
    const labels = await page.$$eval('#edits label', (els) => els.map((el) => (el as { innerText: string }).innerText));
    expect(labels.join('\n')).toContain('parameters.arguments.limit⟨U+202E⟩(icon) verified by the judge');
    expect(labels.join('\n')).toContain('parameters.arguments.ops-⟨U+200B⟩main');
    const framed = await page.$$eval('#edits label > span.agent', (els) =>
      els.map((el) => (el as { textContent: string }).textContent),
    );
    expect(framed).toEqual(['limit⟨U+202E⟩(icon) verified by the judge', 'ops-⟨U+200B⟩main']);
    // What the page shows (the editable textareas aside, which hold the exact bytes) has no override and no ✅.
    const shown = await page.$eval('main', (el) => {
      type Node = { querySelectorAll(s: string): { remove(): void }[]; textContent: string };
      const copy = (el as unknown as { cloneNode(deep: boolean): Node }).cloneNode(true);
      copy.querySelectorAll('textarea').forEach((t) => t.remove());
      return copy.textContent;
    });
    expect(shown).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff✅]/u);
    // The edit still names the argument by its exact bytes: narrowing it through the page is what is performed.
    const field = `textarea[data-edit-path="parameters.arguments.${lookAlike}"]`;
    await page.$eval(field, (el) => ((el as { value: string }).value = ''));
    await page.type(field, 'prod');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', ...WAIT }), page.click('button[value="approve"]')]);
    expect(await textOf('#message')).toBe('Your decision was recorded.');
    const after = await getStatus(sys.client, out.workflow_id);
    expect(after.decisions).toMatchObject([
      { approver: 'scott', edits: [{ path: `parameters.arguments.${lookAlike}`, value: 'prod' }] },
    ]);
  });

  it('a proposal started before the approver was listed: marked with the reason, no Approve button', async () => {
    // The inbox runs a policy that lists tess since; the proposal's run was started with scott alone, and its
    // humanDecision Update would refuse her. Her own browser context, authenticator and passkey registry.
    const p = await submit({ amount: 12, currency: 'EUR', memo: 'before tess' });
    expect(p.status).toBe('awaiting_human');
    const tessDir = mkdtempSync(join(tmpdir(), 'agent-judge-inbox-tess-'));
    const escalation = { ...sys.policy.spec.escalation, approvers: ['scott', 'tess'] };
    const later = await startTestInbox(sys, { dir: tessDir, registry: join(tessDir, 'passkeys.json') }, silentLogger, {
      policy: { ...sys.policy, spec: { ...sys.policy.spec, escalation } },
    });
    const context = await browser.createBrowserContext();
    try {
      const tess = await context.newPage();
      await withAuthenticator(tess);
      const text = (sel: string) => tess.$eval(sel, (el) => (el as { innerText: string }).innerText.trim());
      const { token } = new InviteStore(join(tessDir, 'state', 'invites')).create('tess', 3_600_000);
      await tess.goto(inviteLink(later.url, token), { waitUntil: 'load', ...WAIT });
      await tess.type('input[name="name"]', 'virtual');
      await tess.click('#enrol button[type="submit"]');
      await tess.waitForFunction(`!document.getElementById('message').hidden`, WAIT);
      await tess.goto(later.url, { waitUntil: 'load', ...WAIT });
      await Promise.all([tess.waitForNavigation({ waitUntil: 'load', ...WAIT }), tess.click('#sign-in')]);
      expect(await text('h1')).toBe('Pending for tess');
      const reason =
        'You cannot decide this proposal: you are not among the approvers it was started with (scott); ' +
        'an approver listed since decides only proposals started after.';
      const card = `.card[data-workflow-id="${p.workflow_id}"]`;
      expect(await text(`${card} .cannot-decide`)).toBe(reason);
      await Promise.all([
        tess.waitForNavigation({ waitUntil: 'load', ...WAIT }),
        tess.click(`a[href="/p/${p.workflow_id}"]`),
      ]);
      expect(await text('.cannot-decide')).toBe(reason);
      expect(await tess.$('#decide')).toBeNull();
      expect(await tess.$('button[value="approve"]')).toBeNull();
      expect(await tess.$('button[value="reject"]')).toBeNull();
      // scott, whom the run was started with, still gets the buttons on the same proposal.
      await openProposal(p.workflow_id);
      expect(await page.$('button[value="approve"]')).not.toBeNull();
      expect(await page.$('.cannot-decide')).toBeNull();
      expect((await getStatus(sys.client, p.workflow_id)).stage).toBe('awaiting_human');
    } finally {
      await context.close();
      await later.close();
      rmSync(tessDir, { recursive: true, force: true });
    }
  });

  it('a refusal from the decision POST is shown in the form, where the buttons are', async () => {
    // The race: the page offered Approve, then the run ended before the signed decision reached it.
    const p = await submit({ amount: 13, currency: 'EUR', memo: 'race' });
    await openProposal(p.workflow_id);
    await page.setRequestInterception(true);
    const onRequest = (request: HTTPRequest) => {
      if (request.method() === 'POST' && request.url().endsWith(`/p/${encodeURIComponent(p.workflow_id)}/decide`))
        void sys.client.workflow
          .getHandle(p.workflow_id)
          .terminate('ended while the approver was signing')
          .finally(() => void request.continue());
      else void request.continue();
    };
    page.on('request', onRequest);
    try {
      await page.click('button[value="approve"]');
      await page.waitForFunction(`!document.getElementById('decide-refusal').hidden`, WAIT);
    } finally {
      page.off('request', onRequest);
      await page.setRequestInterception(false);
    }
    const inPlace = await page.$eval('#decide #decide-refusal', (el) => (el as { innerText: string }).innerText);
    expect(inPlace).toBe('Not decided: Not accepted: decision refused: the proposal is already closed');
    // It sits next to the buttons, in view.
    expect(await page.$('#decide-refusal + button[value="approve"]')).not.toBeNull();
  });
});
