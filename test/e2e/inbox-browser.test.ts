/**
 * The web approval inbox in headless Chromium, driven by clicks: the page's own script runs the WebAuthn ceremonies
 * against a virtual authenticator of the Chrome DevTools Protocol (a platform authenticator with user verification),
 * so enrolment, sign-in and the passkey-signed approval go through the browser's real `navigator.credentials`, on
 * the real Temporal dev server with real workers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus, submitAndWait } from '../../src/client/proposals';
import { PasskeyRegistryReader } from '../../src/identity/passkey-registry';
import { InviteStore } from '../../src/inbox/invites';
import { inviteLink, startInbox, type InboxServer } from '../../src/inbox/server';
import { proposal, startSystem, type TestSystem } from '../helpers/system';
import { toolPath } from '../helpers/tools';

const WAIT = { timeout: 30_000 };

describe('the inbox in a browser', () => {
  let sys: TestSystem;
  let dir: string;
  let inbox: InboxServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-inbox-browser-'));
    const registry = join(dir, 'passkeys.json');
    const reader = new PasskeyRegistryReader(registry, () => {}, 0);
    sys = await startSystem({
      spec: {
        escalation: {
          timeout: '5m',
          approvers: ['scott'],
          quorum: { 'human-only': 1 },
          requireSignedDecisions: true,
          reminderAt: 0,
        },
      },
      passkeys: () => reader.current(),
    });
    inbox = await startInbox({
      client: sys.client,
      policy: sys.policy,
      registryPath: registry,
      stateDir: join(dir, 'state'),
      port: 0,
      taskQueue: sys.taskQueues.workflow,
    });
    browser = await puppeteer.launch({ executablePath: toolPath('chromium'), args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
    await page.setViewport({ width: 390, height: 844, isMobile: true });
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
  });
  afterAll(async () => {
    await browser?.close();
    await inbox?.close();
    await sys?.stop();
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

    const status = await getStatus(sys.client, submitted.workflow_id);
    expect(status.status).toMatch(/^(approved|executed)$/);
    expect(status.decisions[0]?.signature?.webauthn).toBeDefined();
    // No script error, no blocked inline script (the Content-Security-Policy would say so on the console). Chromium
    // warns that RS256 is not offered: on purpose, the workflow verifies ES256 and EdDSA only (docs/inbox.md).
    expect(problems.filter((p) => !p.includes('missing at least one of the default algorithm identifiers'))).toEqual(
      [],
    );
  });
});
