/**
 * The web approval inbox over HTTP, on the real Temporal dev server with real workers: an approver enrols a passkey
 * by invite, signs in, finds the proposal waiting for them, and approves it with a decision their passkey signs; the
 * proposal workflow verifies the assertion. A software authenticator (test/helpers/authenticator.ts) answers the
 * WebAuthn ceremonies as a browser's would; each refusal (forged or replayed assertion, no CSRF token, another
 * origin or host, a used or expired invite) is driven and its message checked.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LiveGrants } from '../../src/activities/live-grants';
import { createGrant, grantDefinitionFor, grantStatus, revokeGrant } from '../../src/client/grants';
import { getStatus, submitAndWait } from '../../src/client/proposals';
import { parseProposal } from '../../src/contracts/proposal';
import { PasskeyRegistryReader } from '../../src/identity/passkey-registry';
import { grantPasskeyChallenge, withGrantPasskeyAssertion } from '../../src/identity/sign-grant';
import { InviteStore } from '../../src/inbox/invites';
import type { InboxServer } from '../../src/inbox/server';
import { startTestInbox } from '../helpers/inbox-server';
import { softAuthenticator, type SoftAuthenticator } from '../helpers/authenticator';
import { InboxBrowser, visibleText } from '../helpers/inbox-browser';
import { recordingLogger, silentLogger } from '../helpers/logger';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

describe('the web approval inbox', () => {
  let sys: TestSystem;
  let dir: string;
  let registry: string;
  let invites: InviteStore;
  let inbox: InboxServer;
  let scott: SoftAuthenticator;
  let browser: InboxBrowser;
  let connection: Connection;
  let grants: LiveGrants;
  const log = recordingLogger();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-inbox-'));
    registry = join(dir, 'passkeys.json');
    invites = new InviteStore(join(dir, 'state', 'invites'));
    const reader = new PasskeyRegistryReader(registry, silentLogger, 0);
    connection = await Connection.connect({ address: inject('temporalAddress') });
    // The test's own index of live grants, refreshed on demand.
    const queue = `inbox-${Math.random().toString(36).slice(2)}`;
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
          approvers: ['scott', 'alice'],
          quorum: { 'human-only': 1 },
          requireSignedDecisions: true,
          reminderAt: 0,
        },
        grants: { tiers: ['human-only', 'full-judge-review'], maxLifetime: '1h', maxUses: 50 },
      },
      passkeys: () => reader.current(),
    });
    inbox = await startTestInbox(sys, { dir, registry: registry }, log);
    scott = softAuthenticator('localhost', inbox.url);
    browser = new InboxBrowser(inbox.url);
  });
  afterAll(async () => {
    await inbox?.close();
    grants?.stop();
    await sys?.stop();
    await connection?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A pending human-only proposal started now (after the enrolment, so its run holds scott's passkey). */
  async function pending(overrides: Record<string, unknown> = {}): Promise<string> {
    const p = proposal('financial_op', {
      parameters: { amount: Math.floor(Math.random() * 1000), currency: 'EUR' },
      ...overrides,
    });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('awaiting_human');
    return out.workflow_id;
  }

  it('an expired invite and an unknown one are refused', async () => {
    const { token } = invites.create('alice', 60_000, new Date(Date.now() - 120_000));
    const expired = await browser.get(`/enrol/${token}`);
    expect(expired.status).toBe(410);
    expect(visibleText(expired.text)).toContain('This invite link has expired. Ask your operator for a new one.');
    const options = await browser.post(`/enrol/${token}/options`, {});
    expect(options.status).toBe(410);
    expect(options.json.message).toBe('This invite link has expired. Ask your operator for a new one.');
    const unknown = await browser.get(`/enrol/${'x'.repeat(43)}`);
    expect(visibleText(unknown.text)).toContain('This invite link is not valid.');
  });

  it('enrols by invite, signs in, lists, approves with a passkey-signed decision; refuses forgeries', async () => {
    // Enrolment: the invite page, the registration options, the authenticator's answer.
    const { token } = invites.create('scott', 3_600_000);
    const invitePage = await browser.get(`/enrol/${token}`);
    expect(invitePage.status).toBe(200);
    expect(visibleText(invitePage.text)).toContain('Enrol a passkey for scott');
    const options = await browser.post(`/enrol/${token}/options`, {});
    expect(options.status).toBe(200);
    expect(options.json).toMatchObject({
      rp: { id: 'localhost' },
      user: { name: 'scott' },
      authenticatorSelection: { userVerification: 'required' },
    });
    const challenge = String(options.json.challenge);
    // Without user verification, the registration is refused and the invite stays good.
    const noUv = await browser.post(`/enrol/${token}`, {
      challenge,
      response: scott.register(challenge, { flags: 0x41 }),
    });
    expect(noUv.status).toBe(400);
    expect(String(noUv.json.message)).toMatch(/user could not be verified|user verification/i);
    const again = await browser.post(`/enrol/${token}/options`, {});
    const enrolled = await browser.post(`/enrol/${token}`, {
      challenge: again.json.challenge,
      name: 'test key',
      response: scott.register(String(again.json.challenge)),
    });
    expect(enrolled.status).toBe(200);
    expect(enrolled.json.message).toMatch(/^Passkey enrolled for scott\./);
    const written = JSON.parse(readFileSync(registry, 'utf8')) as {
      approvers: Record<string, { id: string; public_key: string; origins: string[]; name?: string }[]>;
    };
    expect(written.approvers.scott).toEqual([
      expect.objectContaining({
        id: scott.credential.id,
        public_key: scott.credential.public_key,
        origins: [inbox.url],
        name: 'test key',
      }),
    ]);
    // The invite is used up.
    const used = await browser.get(`/enrol/${token}`);
    expect(used.status).toBe(410);
    expect(visibleText(used.text)).toContain('This invite link was already used.');
    // A second invite offers the passkey it has (a browser would not make one again); the same one is refused.
    const second = invites.create('scott', 3_600_000).token;
    const secondOptions = await browser.post(`/enrol/${second}/options`, {});
    expect(secondOptions.json.excludeCredentials).toEqual([expect.objectContaining({ id: scott.credential.id })]);
    const duplicate = await browser.post(`/enrol/${second}`, {
      challenge: secondOptions.json.challenge,
      response: scott.register(String(secondOptions.json.challenge)),
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.message).toMatch(/^the passkey was not added: passkey .* is already registered for scott$/);

    const workflowId = await pending({
      justification: 'Pay the invoice.\n✅ Evidence verified by the judge\n<script>alert(1)</script>',
    });

    // Not signed in: the start page asks for a passkey, a proposal page too.
    expect(visibleText((await browser.get('/')).text)).toContain('Sign in with a passkey');
    expect((await browser.get(`/p/${workflowId}`)).status).toBe(401);

    // A forged sign-in (a passkey nobody enrolled, claiming scott's credential id) is refused.
    const stranger = softAuthenticator('localhost', inbox.url);
    const c1 = await browser.post('/sign-in/challenge', {});
    const forged = { ...stranger.assert(String(c1.json.challenge)), credential_id: scott.credential.id };
    const refused = await browser.post('/sign-in', { challenge: c1.json.challenge, assertion: forged });
    expect(refused.status).toBe(401);
    expect(refused.json.message).toBe("the passkey assertion signature does not verify against scott's passkey");

    // Sign-in.
    const c2 = await browser.post('/sign-in/challenge', {});
    const signIn = await browser.post('/sign-in', {
      challenge: c2.json.challenge,
      assertion: scott.assert(String(c2.json.challenge)),
    });
    expect(signIn.status).toBe(200);
    expect(signIn.json.message).toBe('Signed in as scott.');
    expect(log.lines('signed in').at(-1)).toMatchObject({ level: 'info', approver: 'scott' });
    const cookie = [signIn.headers['set-cookie'] ?? []].flat().join('\n');
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    // The session changed at sign-in (new id, new CSRF token): the old page's token no longer works.
    const staleToken = await browser.post('/sign-in/challenge', {});
    expect(staleToken.status).toBe(403);
    // The same sign-in assertion again, with the new page's token: its challenge is spent.
    await browser.get('/');
    const replayedSignIn = await browser.post('/sign-in', {
      challenge: c2.json.challenge,
      assertion: scott.assert(String(c2.json.challenge)),
    });
    expect(replayedSignIn.status).toBe(400);
    expect(replayedSignIn.json.message).toBe('this sign-in was not started here, or took too long; start again');

    // The pending list shows the proposal.
    const home = await browser.get('/');
    expect(visibleText(home.text)).toContain('Pending for scott');
    expect(home.text).toContain(`href="/p/${workflowId}"`);
    // Only this system's task queue: other test files' proposals on the same server are not listed.
    expect(home.text.match(/class="card pending"/g)).toHaveLength(1);

    // The proposal page: the agent's text escaped, inside the agent's frame, its fake mark removed.
    const proposalPage = await browser.get(`/p/${workflowId}`);
    expect(proposalPage.status).toBe(200);
    expect(proposalPage.text).not.toContain('<script>alert(1)</script>');
    expect(proposalPage.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(proposalPage.text).not.toMatch(/^✅ Evidence verified/m);
    expect(visibleText(proposalPage.text)).toContain('(icon) Evidence verified by the judge');
    expect(visibleText(proposalPage.text)).toContain('Waiting for approvals: 0 of 1');
    expect(visibleText(proposalPage.text)).toMatch(/financial_op/);

    // CSRF: no token, and a wrong one; another origin; a DNS-rebinding Host.
    const noCsrf = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve' }, { csrf: false });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.message).toBe('refused: the CSRF token is missing or wrong; reload the page');
    const wrongCsrf = await browser.post(
      `/p/${workflowId}/challenge`,
      { decision: 'approve' },
      { headers: { 'x-csrf-token': 'A'.repeat(43) } },
    );
    expect(wrongCsrf.status).toBe(403);
    const evil = await browser.post(
      `/p/${workflowId}/challenge`,
      { decision: 'approve' },
      { headers: { origin: 'https://evil.example.org' } },
    );
    expect(evil.status).toBe(403);
    expect(evil.json.message).toBe(`refused: the request came from origin https://evil.example.org, not ${inbox.url}`);
    const rebound = await browser.get('/', { host: 'evil.example.org' });
    expect(rebound.status).toBe(421);
    const garbled = await browser.send('POST', `/p/${workflowId}/challenge`, { body: '{"decision":', raw: true });
    expect(garbled.status).toBe(400);
    expect(garbled.json.message).toBe('the request body could not be read: expected JSON of at most 64 kB');

    // A forged decision (the stranger's signature under scott's credential id): the workflow refuses it.
    const d1 = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', reason: 'invoice checked' });
    expect(d1.status).toBe(200);
    expect(d1.json.allow).toEqual([scott.credential.id]);
    const forgedDecision = await browser.post(`/p/${workflowId}/decide`, {
      challenge: d1.json.challenge,
      assertion: { ...stranger.assert(String(d1.json.challenge)), credential_id: scott.credential.id },
    });
    expect(forgedDecision.status).toBe(409);
    expect(forgedDecision.json.message).toMatch(/^Not accepted: decision refused: .*does not verify against scott/);
    expect((await getStatus(sys.client, workflowId)).decisions).toEqual([]);

    // The real decision.
    const d2 = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', reason: 'invoice checked' });
    const assertion = scott.assert(String(d2.json.challenge));
    const decided = await browser.post(`/p/${workflowId}/decide`, { challenge: d2.json.challenge, assertion });
    expect(decided.status).toBe(200);
    expect(decided.json.status).toMatch(/^(approved|executed)$/);
    expect(log.lines('decision relayed').at(-1)).toMatchObject({
      approver: 'scott',
      decision: 'approve',
      workflow_id: workflowId,
      edits: false,
    });
    // Replayed: the challenge is spent in the inbox.
    const replayed = await browser.post(`/p/${workflowId}/decide`, { challenge: d2.json.challenge, assertion });
    expect(replayed.status).toBe(400);
    expect(replayed.json.message).toMatch(/was already used/);

    const record = await getStatus(sys.client, workflowId);
    expect(record.status).toMatch(/^(approved|executed)$/);
    expect(record.decisions).toMatchObject([{ approver: 'scott', decision: 'approve', reason: 'invoice checked' }]);
    expect(record.decisions[0]!.signature?.webauthn?.credential_id).toBe(scott.credential.id);

    // What scott sees afterwards: the outcome, their own decision, the history; the list no longer has it.
    const after = visibleText((await browser.get(`/p/${workflowId}?done=approved`)).text);
    expect(after).toContain('Your decision was recorded.');
    expect(after).toMatch(/Approved/);
    expect(after).toContain('scott approved');
    expect(after).toContain('(signed with a passkey)');
    expect(after).toContain('You approved this proposal.');
    const history = visibleText((await browser.get('/history')).text);
    expect(history).toContain('Decisions by scott');
    expect(history).toMatch(/financial_op approved (Approved|Approved and executed)/);
    expect((await browser.get('/')).text).not.toContain(`href="/p/${workflowId}"`);

    // Signing out ends the session: the start page asks for a passkey again.
    const out = await browser.send('POST', '/sign-out', { body: { _csrf: browser.csrf }, form: true, csrf: false });
    expect(out.status).toBe(303);
    expect(visibleText((await browser.get('/')).text)).toContain('Sign in with a passkey');
  });

  /** Signs scott in (again) with his passkey. */
  async function signIn(): Promise<void> {
    await browser.get('/');
    const c = await browser.post('/sign-in/challenge', {});
    const signedIn = await browser.post('/sign-in', {
      challenge: c.json.challenge,
      assertion: scott.assert(String(c.json.challenge)),
    });
    expect(signedIn.status).toBe(200);
    await browser.get('/');
  }

  it('approves with edits: every field checked before anything is signed; the edited action recorded', async () => {
    await signIn();
    const workflowId = await pending({ parameters: { amount: 700, currency: 'EUR', memo: 'invoice 7, in full' } });
    const page = visibleText((await browser.get(`/p/${workflowId}`)).text);
    expect(page).toContain('Approve with edits (narrow the action)');
    expect(page).toContain('parameters.amount');
    // Refused before anything is signed, each naming the field and the rule.
    const refusals: Array<[unknown, RegExp]> = [
      [
        { decision: 'approve', edits: [{ path: 'parameters.amount', value: 7000 }] },
        /^edit parameters\.amount: may only be lowered: 7000 is more than 700$/,
      ],
      [
        { decision: 'approve', edits: [{ path: 'target.account', value: 'other' }] },
        /^edits\.0\.path: expected scope_claim\.<field> or parameters\.<field>$/,
      ],
      [
        { decision: 'approve', edits: [{ path: 'parameters.currency', value: 'USD' }] },
        /^edit parameters\.currency: not editable for financial_op/,
      ],
      [
        { decision: 'reject', edits: [{ path: 'parameters.amount', value: 1 }] },
        /^edits: only an approval carries edits$/,
      ],
      [{ decision: 'approve', approver: 'alice' }, /Unrecognized key: "approver"/],
      [{ decision: 'maybe' }, /^decision: expected approve or reject$/],
    ];
    for (const [body, message] of refusals) {
      const refused = await browser.post(`/p/${workflowId}/challenge`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(String(refused.json.message)).toMatch(message);
    }
    const edits = [
      { path: 'parameters.amount', value: 350 },
      { path: 'parameters.memo', value: 'invoice 7, half' },
    ];
    const c = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', reason: 'half now', edits });
    expect(c.status).toBe(200);
    expect(c.json.edited_sha256).toMatch(/^[0-9a-f]{64}$/);
    // A stranger's assertion over the edited challenge, under scott's credential id: the workflow refuses it.
    const stranger = softAuthenticator('localhost', inbox.url);
    const forged = await browser.post(`/p/${workflowId}/decide`, {
      challenge: c.json.challenge,
      assertion: { ...stranger.assert(String(c.json.challenge)), credential_id: scott.credential.id },
    });
    expect(forged.status).toBe(409);
    expect(forged.json.message).toMatch(/does not verify against scott's passkey/);
    expect((await getStatus(sys.client, workflowId)).decisions).toEqual([]);
    const again = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', reason: 'half now', edits });
    const decided = await browser.post(`/p/${workflowId}/decide`, {
      challenge: again.json.challenge,
      assertion: scott.assert(String(again.json.challenge)),
    });
    expect(decided.status).toBe(200);
    expect(decided.json.status).toMatch(/^(approved|executed)$/);
    const status = await getStatus(sys.client, workflowId);
    expect(status.decisions).toMatchObject([{ approver: 'scott', decision: 'approve', via: 'inbox', edits }]);
    expect(status.decisions[0]!.signature?.binds?.edited_sha256).toBe(again.json.edited_sha256);
    expect(status.edited?.to_digest).toBe(again.json.edited_sha256);
    expect(status.edited?.changes).toEqual([
      { path: 'parameters.amount', from: 700, to: 350 },
      { path: 'parameters.memo', from: 'invoice 7, in full', to: 'invoice 7, half' },
    ]);
    const after = visibleText((await browser.get(`/p/${workflowId}`)).text);
    expect(after).toContain('Approved with edits');
    expect(after).toMatch(/scott approved with 2 edits at \S+ via the inbox \(signed with a passkey\)/);
  });

  it('a grant on a shell command keeps the command: a pattern leaving it free is refused before signing', async () => {
    await signIn();
    const workflowId = await pending({
      action_type: 'shell_command',
      target: { cwd: '/srv/repo' },
      parameters: { command: 'npm test', parsed: { reducible: false, commands: [], why: 'not parsed here' } },
    });
    expect(visibleText((await browser.get(`/p/${workflowId}`)).text)).toContain(
      'A grant never widens code: a pattern on a shell_command must keep parameters.command equal.',
    );
    for (const grant of [
      { minutes: 30, uses: 5, same: ['target.cwd'] },
      { minutes: 30, uses: 5, under: '/srv/repo' },
    ]) {
      const refused = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', grant });
      expect(refused.status, JSON.stringify(grant)).toBe(400);
      expect(refused.json.message).toBe(
        'grant: grant on shell_command must keep parameters.command equal (a grant never widens code; ' +
          'spec.grants.allowUnpinnedCode does not list shell_command)',
      );
    }
    const pinned = await browser.post(`/p/${workflowId}/challenge`, {
      decision: 'approve',
      grant: { minutes: 30, uses: 5, same: ['parameters.command', 'target.cwd'] },
    });
    expect(pinned.status).toBe(200);
    expect((pinned.json.grant as { coverage: string }).coverage).toMatch(
      /^shell_command by @engineering: the command "npm test" exactly, in \/srv\/repo \(that directory only\); other/,
    );
  });

  it('approves and grants with two passkey signatures; the grant approves the next call; revoked', async () => {
    await signIn();
    const params = { amount: 42, currency: 'EUR' };
    const workflowId = await pending({ parameters: params });
    expect(visibleText((await browser.get(`/p/${workflowId}`)).text)).toContain(
      'Approve and grant calls like this one',
    );
    const refusals: Array<[unknown, RegExp]> = [
      [{ decision: 'approve', grant: { minutes: 600, uses: 5 } }, /^grant: the grant lives 36000s, longer than/],
      [{ decision: 'approve', grant: { minutes: 30, uses: 60 } }, /^grant: max_uses 60 is above the policy's/],
      [{ decision: 'approve', grant: { minutes: 'ten', uses: 5 } }, /^grant\.minutes: expected a whole number/],
      [{ decision: 'reject', grant: { minutes: 30, uses: 5 } }, /^grant: only an approval can grant$/],
      [
        { decision: 'approve', grant: { minutes: 30, uses: 5 }, edits: [{ path: 'parameters.amount', value: 1 }] },
        /^grant: a grant covers calls like the proposal, not an edited one/,
      ],
      [
        { decision: 'approve', grant: { minutes: 30, uses: 5, same: ['parameters.nothing'] } },
        /^grant\.same: the proposal has no parameters\.nothing/,
      ],
    ];
    for (const [body, message] of refusals) {
      const refused = await browser.post(`/p/${workflowId}/challenge`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(String(refused.json.message)).toMatch(message);
    }
    const ask = () =>
      browser.post(`/p/${workflowId}/challenge`, {
        decision: 'approve',
        reason: 'recurring',
        grant: { minutes: 30, uses: 2 },
      });
    // No grant assertion, and a forged one: refused before the decision is sent.
    const c1 = await ask();
    expect(c1.json.grant).toMatchObject({
      definition: { approver: 'scott', max_uses: 2, match: { kind: 'identical' } },
    });
    // What the page shows before the passkey is asked to sign the grant.
    expect((c1.json.grant as { coverage: string }).coverage).toMatch(
      new RegExp(
        '^financial_op by @engineering: only the identical action: target\\.account "ops" exactly, ' +
          'parameters\\.amount 42 exactly, parameters\\.currency "EUR" exactly; in any session; ' +
          'for 30 minutes \\(until \\S+\\); at most 2 uses$',
      ),
    );
    const noGrantSig = await browser.post(`/p/${workflowId}/decide`, {
      challenge: c1.json.challenge,
      assertion: scott.assert(String(c1.json.challenge)),
    });
    expect(noGrantSig.status).toBe(400);
    expect(noGrantSig.json.message).toMatch(/^grant_assertion: required/);
    const stranger = softAuthenticator('localhost', inbox.url);
    const c2 = await ask();
    const grantChallenge = String((c2.json.grant as { challenge: string }).challenge);
    const forgedGrant = await browser.post(`/p/${workflowId}/decide`, {
      challenge: c2.json.challenge,
      assertion: scott.assert(String(c2.json.challenge)),
      grant_assertion: { ...stranger.assert(grantChallenge), credential_id: scott.credential.id },
    });
    expect(forgedGrant.status).toBe(400);
    expect(forgedGrant.json.message).toMatch(/^grant: .*does not verify against scott's passkey; nothing was decided$/);
    // The decision's own assertion offered as the grant's: another statement.
    const c3 = await ask();
    const swapped = await browser.post(`/p/${workflowId}/decide`, {
      challenge: c3.json.challenge,
      assertion: scott.assert(String(c3.json.challenge)),
      grant_assertion: scott.assert(String(c3.json.challenge)),
    });
    expect(swapped.status).toBe(400);
    expect(swapped.json.message).toMatch(/made for another grant/);
    expect((await getStatus(sys.client, workflowId)).decisions).toEqual([]);

    const c4 = await ask();
    const done = await browser.post(`/p/${workflowId}/decide`, {
      challenge: c4.json.challenge,
      assertion: scott.assert(String(c4.json.challenge)),
      grant_assertion: scott.assert(String((c4.json.grant as { challenge: string }).challenge)),
    });
    expect(done.status).toBe(200);
    expect(done.json.status).toMatch(/^(approved|executed)$/);
    const grantId = String((done.json.grant as { grant_id: string }).grant_id);
    expect(grantId).toMatch(/^g[a-z2-7]{20}$/);
    expect(log.lines('grant made').at(-1)).toMatchObject({
      approver: 'scott',
      grant_id: grantId,
      workflow_id: workflowId,
    });
    expect((await getStatus(sys.client, workflowId)).decisions).toMatchObject([{ approver: 'scott', via: 'inbox' }]);

    // The next identical call is approved by the grant, before any person.
    await grants.refresh();
    const next = await submitAndWait(sys.client, proposal('financial_op', { parameters: params }), {
      taskQueue: sys.taskQueues.workflow,
    });
    expect(next.status).toBe('approved');
    expect(next.verdict?.decided_by).toBe(`grant:${grantId}`);

    // The approver's grants: listed with their uses, then revoked from the inbox.
    const listed = visibleText((await browser.get('/grants')).text);
    expect(listed).toContain('Grants by scott');
    expect(listed).toMatch(new RegExp(`${grantId} ?: financial_op by @engineering covers the identical action`));
    expect(listed).toContain('1 of 2 uses');
    expect((await browser.post('/grants/not-a-grant/revoke', {})).json.message).toBe(
      'grant_id: expected a grant id such as gabcdefghijklmnopqrst',
    );
    const unknown = await browser.post(`/grants/g${'a'.repeat(20)}/revoke`, {});
    expect(unknown.status).toBe(404);
    const noCsrf = await browser.post(`/grants/${grantId}/revoke`, {}, { csrf: false });
    expect(noCsrf.status).toBe(403);
    const badReason = await browser.post(`/grants/${grantId}/revoke`, { reason: 7 });
    expect(badReason.status).toBe(400);
    expect(badReason.json.message).toBe('reason: expected text');
    const revoked = await browser.post(`/grants/${grantId}/revoke`, { reason: 'done for today' });
    expect(revoked.status).toBe(200);
    expect(revoked.json.message).toBe(`Grant ${grantId} revoked after 1 of 2 uses.`);
    expect(log.lines('grant revoked').at(-1)).toMatchObject({ approver: 'scott', grant_id: grantId });
    const ended = await grantStatus(sys.client, grantId);
    expect(ended.state).toBe('revoked');
    expect(ended.revoked).toMatchObject({ by: 'scott', reason: 'done for today' });
    expect(visibleText((await browser.get('/grants')).text)).toContain('You have no live grants.');
  });

  it("a session grant from the inbox: that session's next call is covered, another session's is not", async () => {
    await signIn();
    const params = { amount: 43, currency: 'EUR' };
    const noSession = await pending({ parameters: params });
    expect(visibleText((await browser.get(`/p/${noSession}`)).text)).not.toContain('only in this session');
    const refused = await browser.post(`/p/${noSession}/challenge`, {
      decision: 'approve',
      grant: { minutes: 30, uses: 2, this_session: true },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.message).toMatch(/^grant\.this_session: this proposal carries no session id/);

    const workflowId = await pending({ parameters: params, session_id: 'sess-a' });
    expect(visibleText((await browser.get(`/p/${workflowId}`)).text)).toContain('only in this session (sess-a)');
    const c = await browser.post(`/p/${workflowId}/challenge`, {
      decision: 'approve',
      grant: { minutes: 30, uses: 3, this_session: true },
    });
    expect(c.json.grant).toMatchObject({ definition: { agent_id: '@engineering', session_id: 'sess-a' } });
    const done = await browser.post(`/p/${workflowId}/decide`, {
      challenge: c.json.challenge,
      assertion: scott.assert(String(c.json.challenge)),
      grant_assertion: scott.assert(String((c.json.grant as { challenge: string }).challenge)),
    });
    expect(done.status).toBe(200);
    const grantId = String((done.json.grant as { grant_id: string }).grant_id);
    await grants.refresh();
    const next = (session_id: string) =>
      submitAndWait(sys.client, proposal('financial_op', { parameters: params, session_id }), {
        taskQueue: sys.taskQueues.workflow,
      });
    const same = await next('sess-a');
    expect(same.verdict?.decided_by).toBe(`grant:${grantId}`);
    const other = await next('sess-b');
    expect(other.status).toBe('awaiting_human');
    expect(visibleText((await browser.get('/grants')).text)).toContain(`${grantId}`);
    expect(visibleText((await browser.get('/grants')).text)).toContain('in session sess-a only');
  });

  it('the grant workflow itself refuses a forged, unsigned, borrowed or replayed passkey grant', async () => {
    const seed = parseProposal(proposal('financial_op', { parameters: { amount: 43, currency: 'EUR' } }));
    const definitionOf = () =>
      grantDefinitionFor(seed, {
        approver: 'scott',
        lifetimeMs: 10 * 60_000,
        maxUses: 1,
        scope: { kind: 'identical' },
      });
    const start = (request: Parameters<typeof createGrant>[1]) =>
      createGrant(sys.client, request, { taskQueue: sys.taskQueues.workflow });
    const stranger = softAuthenticator('localhost', inbox.url);
    const d1 = definitionOf();
    const c1 = grantPasskeyChallenge(d1);
    await expect(
      start(
        withGrantPasskeyAssertion(d1, c1, { ...stranger.assert(c1.challenge), credential_id: scott.credential.id }),
      ),
    ).rejects.toThrow(/^grant refused: the passkey assertion signature does not verify against scott's passkey$/);
    await expect(start({ definition: definitionOf() })).rejects.toThrow(
      /^grant refused: scott must sign grants with their passkey/,
    );
    // A valid assertion for one grant, put on another definition (another id, more uses).
    const d2 = definitionOf();
    const c2 = grantPasskeyChallenge(d2);
    const good = withGrantPasskeyAssertion(d2, c2, scott.assert(c2.challenge));
    await expect(start({ ...good, definition: { ...definitionOf(), max_uses: 3 } })).rejects.toThrow(
      /made for another grant/,
    );
    // The valid one starts; replayed after it ended, its id is spent.
    expect((await start(good)).state).toBe('live');
    await revokeGrant(sys.client, d2.grant_id, { by: 'scott' });
    await expect(start(good)).rejects.toThrow(/already ran; a grant id starts once|already started/i);
  });

  it('limits sign-in and enrolment per address and per approver: a 429 with Retry-After', async () => {
    const limited = await startTestInbox(sys, { dir, registry: registry }, silentLogger, {
      rateLimits: { perIp: { max: 12, windowMs: 60_000 }, perApprover: { max: 2, windowMs: 60_000 } },
    });
    try {
      const b = new InboxBrowser(limited.url);
      await b.get('/');
      const tooMany = (r: { status: number; json: Record<string, unknown>; headers: Record<string, unknown> }) => {
        expect(r.status).toBe(429);
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
        return String(r.json.message);
      };
      // Enrolment: alice's invite, twice; the third attempt for alice is refused.
      const { token } = invites.create('alice', 3_600_000);
      expect((await b.post(`/enrol/${token}/options`, {})).status).toBe(200);
      expect((await b.post(`/enrol/${token}/options`, {})).status).toBe(200);
      expect(tooMany(await b.post(`/enrol/${token}/options`, {}))).toMatch(
        /^too many enrolment attempts for alice; try again in \d+ s$/,
      );
      // Sign-in: failures with scott's passkey id count against scott; a real sign-in still passes.
      const stranger = softAuthenticator('localhost', limited.url);
      const forged = async () => {
        const c = await b.post('/sign-in/challenge', {});
        const assertion = { ...stranger.assert(String(c.json.challenge)), credential_id: scott.credential.id };
        return b.post('/sign-in', { challenge: c.json.challenge, assertion });
      };
      expect((await forged()).status).toBe(401);
      expect((await forged()).status).toBe(401);
      expect(tooMany(await forged())).toMatch(/^too many sign-in attempts for scott; try again in \d+ s$/);
      const c = await b.post('/sign-in/challenge', {});
      const real = await b.post('/sign-in', {
        challenge: c.json.challenge,
        assertion: scott.assert(String(c.json.challenge)),
      });
      expect(real.status).toBe(200);
      expect(real.json.message).toBe('Signed in as scott.');
      // Per address: the 13th attempt from this address in the window is refused, whatever it is.
      await b.get('/');
      expect((await b.post('/sign-in/challenge', {})).status).toBe(200);
      expect(tooMany(await b.post('/sign-in/challenge', {}))).toMatch(
        /^too many sign-in attempts from this address; try again in \d+ s$/,
      );
      const enrolPage = await b.get(`/enrol/${token}`);
      expect(enrolPage.status).toBe(429);
      expect(visibleText(enrolPage.text)).toMatch(/too many enrolment attempts from this address/);
    } finally {
      await limited.close();
    }
  });
});
