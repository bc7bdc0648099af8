/**
 * Time from an escalation to the web inbox showing it (issue 25). A human-only proposal is submitted and waited for
 * until it escalates (`awaiting_human`: the notice with the page's link goes out then); from that moment the bench
 * asks, as a signed-in approver's browser would, (a) the proposal's own page, the link every notice carries, until it
 * shows the proposal waiting, and (b) the inbox's pending list until it lists the proposal. The page reads the
 * workflow by a Query, so it shows at once; the list comes from Temporal's visibility store, which lags a little
 * behind the workflow. Each sample polls every 10 ms, a new proposal each time; the approver enrolled a passkey by
 * invite and signed in with it first, as in docs/inbox.md, through the same HTTP endpoints the pages use.
 *
 * Sizes: BENCH_INBOX_N escalations (default 40).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { submitAndWait } from '../src/client/proposals';
import { InviteStore } from '../src/inbox/invites';
import { startInbox } from '../src/inbox/server';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { softAuthenticator } from '../test/helpers/authenticator';
import { InboxBrowser } from '../test/helpers/inbox-browser';
import { summarize, type BenchServer, type Row } from './lib';

const N = Number(process.env.BENCH_INBOX_N ?? 40);
const POLL_MS = 10;
/** One wait for a page to show a proposal; past it the sample fails the bench rather than being left out. */
const GIVE_UP_MS = 30_000;

/** Polls `shows` until it is true; the milliseconds from `since`. */
async function until(since: number, what: string, shows: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await shows()) return performance.now() - since;
    if (performance.now() - since > GIVE_UP_MS)
      throw new Error(`bench inbox: ${what} not shown within ${GIVE_UP_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export async function benchInbox(server: BenchServer): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-inbox-'));
  const policy = defaultPolicyWith({
    escalation: { approvers: ['scott'], timeout: '30m', reminderAt: 0, quorum: { 'human-only': 1 } },
  });
  const queues = taskQueuesFor(`bench-inbox-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
  });
  const inbox = await startInbox({
    client: system.client,
    policy,
    registryPath: join(dir, 'passkeys.json'),
    stateDir: join(dir, 'state'),
    port: 0,
    taskQueue: queues.workflow,
    logger: pino({ level: 'silent' }),
  });
  const page: number[] = [];
  const list: number[] = [];
  try {
    // Enrol by invite and sign in, as the pages do.
    const browser = new InboxBrowser(inbox.url);
    const scott = softAuthenticator('localhost', inbox.url);
    const { token } = new InviteStore(join(dir, 'state', 'invites')).create('scott', 3_600_000);
    await browser.get(`/enrol/${token}`);
    const options = await browser.post(`/enrol/${token}/options`, {});
    const enrolled = await browser.post(`/enrol/${token}`, {
      challenge: options.json.challenge,
      response: scott.register(String(options.json.challenge)),
    });
    if (enrolled.status !== 200) throw new Error(`bench inbox: enrolment refused: ${enrolled.text.slice(0, 200)}`);
    await browser.get('/');
    const challenge = await browser.post('/sign-in/challenge', {});
    const signedIn = await browser.post('/sign-in', {
      challenge: challenge.json.challenge,
      assertion: scott.assert(String(challenge.json.challenge)),
    });
    if (signedIn.status !== 200) throw new Error(`bench inbox: sign-in refused: ${signedIn.text.slice(0, 200)}`);

    for (let i = 0; i < N; i++) {
      const proposal = {
        agent_id: '@bench',
        action_type: 'financial_op',
        target: { account: 'ops' },
        parameters: { amount: i + 1, currency: 'EUR', memo: `bench ${randomUUID()}` },
        justification: 'Pay the invoice from the budget.',
        cited_evidence: [],
      };
      const out = await submitAndWait(system.client, proposal, { taskQueue: queues.workflow });
      if (out.status !== 'awaiting_human') throw new Error(`bench inbox: expected awaiting_human, got ${out.status}`);
      const escalated = performance.now();
      const link = `/p/${out.workflow_id}`;
      page.push(
        await until(escalated, 'the proposal page', async () => {
          const answer = await browser.get(link);
          return answer.status === 200 && answer.text.includes('Waiting for approvals');
        }),
      );
      // Counted from the escalation too; its polls begin once the page showed.
      list.push(
        await until(escalated, 'the pending list', async () =>
          (await browser.get('/')).text.includes(`href="${link}"`),
        ),
      );
    }
  } finally {
    await inbox.close();
    await system.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    summarize('escalation -> its page (the notice link) shows it', page, `a Query per poll, every ${POLL_MS} ms`),
    summarize('escalation -> the pending list shows it', list, 'visibility store; polled after the page showed'),
  ];
}
