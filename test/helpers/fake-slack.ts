/**
 * A loopback Slack: the Web API (node:http, form or JSON bodies, `ok` envelopes, Bearer tokens) that the real
 * @slack/web-api client talks to through its `slackApiUrl`, and the interactivity side: a click becomes a real
 * `block_actions` payload, signed with the app's signing secret the way Slack signs it (`v0=` HMAC-SHA256 of
 * `v0:<timestamp>:<body>`), posted to the Bolt HTTP receiver.
 *
 * Unknown methods answer `unknown_method` and are kept in `unexpected`; tests assert that list is empty.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_SLACK_BOT_TOKEN = 'xoxb-fake-bot-token-for-tests-only';
export const FAKE_SLACK_SIGNING_SECRET = 'fake-signing-secret-for-tests-only';

export interface FakeSlackMessage {
  channel: string;
  ts: string;
  user: string;
  bot_id: string;
  text: string;
  blocks: Array<Record<string, unknown>>;
  thread_ts?: string;
  /** Every edit, oldest first (the fake's own history). */
  edits: Array<{ text: string; blocks: unknown[] }>;
}

export interface FakeEphemeral {
  channel: string;
  user: string;
  text: string;
}

export interface ApiCall {
  method: string;
  args: Record<string, unknown>;
  auth: string | undefined;
}

/** A form or JSON field as text ('' when absent or not text). */
function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

export class FakeSlack {
  readonly messages: FakeSlackMessage[] = [];
  readonly ephemerals: FakeEphemeral[] = [];
  readonly calls: ApiCall[] = [];
  readonly unexpected: string[] = [];
  readonly botUserId = 'UBOT0AGENT';
  readonly botId = 'BAGENTJUDGE';
  readonly teamId = 'T0FAKETEAM';
  readonly channelId = 'C0ESCALATE';
  /** Methods that answer `ok: false` with this error, once each. */
  private readonly failures = new Map<string, string>();
  private readonly dms = new Map<string, string>();
  private seq = 0;
  private clock = 1_700_000_000;

  private constructor(
    private readonly server: Server,
    readonly token: string,
  ) {}

  static async start(opts: { token?: string } = {}): Promise<FakeSlack> {
    const server = createServer();
    const fake = new FakeSlack(server, opts.token ?? FAKE_SLACK_BOT_TOKEN);
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A new user id, as Slack writes them. */
  userId(name: string): string {
    return `U${name.toUpperCase().replace(/[^A-Z0-9]/g, '')}${(++this.seq).toString().padStart(4, '0')}`;
  }

  dmOf(userId: string): string | undefined {
    return this.dms.get(userId);
  }

  /** Top-level messages that carry this workflow's escalation. */
  messagesFor(workflowId: string): FakeSlackMessage[] {
    return this.messages.filter(
      (m) => !m.thread_ts && m.blocks.some((b) => b.block_id === `aj:escalation:${workflowId}`),
    );
  }

  repliesTo(ts: string): FakeSlackMessage[] {
    return this.messages.filter((m) => m.thread_ts === ts);
  }

  failNext(method: string, error: string): void {
    this.failures.set(method, error);
  }

  async waitFor<T>(predicate: () => T | undefined | false | null, what: string, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = predicate();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`fake Slack: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * A user clicks a button of a message: the `block_actions` payload Slack would send, signed with `secret`
   * (`badSignature` signs it with something else), posted to the app. Returns the app's HTTP status.
   */
  async click(opts: {
    appUrl: string;
    message: FakeSlackMessage;
    actionId: string;
    userId: string;
    secret?: string;
    badSignature?: boolean;
  }): Promise<number> {
    const { message } = opts;
    const block = message.blocks.find(
      (b) =>
        b.type === 'actions' &&
        (b.elements as Array<{ action_id?: string }>).some((e) => e.action_id === opts.actionId),
    );
    const payload = {
      type: 'block_actions',
      team: { id: this.teamId, domain: 'fake' },
      user: { id: opts.userId, username: opts.userId.toLowerCase(), team_id: this.teamId },
      api_app_id: 'AFAKEAPP',
      token: 'deprecated-verification-token',
      container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
      trigger_id: `${Date.now()}.trigger`,
      channel: { id: message.channel, name: 'escalations' },
      message: {
        type: 'message',
        user: message.user,
        bot_id: message.bot_id,
        ts: message.ts,
        text: message.text,
        blocks: message.blocks,
      },
      response_url: `${this.apiUrl}response/${randomBytes(6).toString('hex')}`,
      actions: [
        {
          type: 'button',
          action_id: opts.actionId,
          block_id: (block?.block_id as string | undefined) ?? 'unknown',
          text: { type: 'plain_text', text: 'button' },
          value: 'v',
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const secret = opts.badSignature ? 'not-the-secret' : (opts.secret ?? FAKE_SLACK_SIGNING_SECRET);
    const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    const res = await fetch(opts.appUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      },
      body,
    });
    await res.text();
    return res.status;
  }

  private nextTs(): string {
    this.clock += 1;
    return `${this.clock}.${(++this.seq).toString().padStart(6, '0')}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = url.pathname.replace(/^\/api\//, '');
    const args: Record<string, unknown> = {};
    if ((req.headers['content-type'] ?? '').includes('application/json')) {
      Object.assign(args, raw ? (JSON.parse(raw) as Record<string, unknown>) : {});
    } else {
      for (const [k, v] of new URLSearchParams(raw)) {
        // @slack/web-api sends objects and arrays as JSON text in form fields.
        args[k] = /^[[{]/.test(v) ? (JSON.parse(v) as unknown) : v;
      }
    }
    const auth = req.headers.authorization;
    this.calls.push({ method, args, auth });
    const send = (body: Record<string, unknown>) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (auth !== `Bearer ${this.token}`) return send({ ok: false, error: 'invalid_auth' });
    const failure = this.failures.get(method);
    if (failure) {
      this.failures.delete(method);
      return send({ ok: false, error: failure });
    }
    const channelOk = (c: unknown) =>
      typeof c === 'string' && (c === this.channelId || [...this.dms.values()].includes(c));
    switch (method) {
      case 'auth.test':
        return send({
          ok: true,
          url: 'https://fake.slack.com/',
          team: 'fake',
          user: 'agent-judge',
          team_id: this.teamId,
          user_id: this.botUserId,
          bot_id: this.botId,
        });
      case 'conversations.open': {
        const user = str(args.users);
        if (!/^[UW][A-Z0-9]+$/.test(user)) return send({ ok: false, error: 'user_not_found' });
        let dm = this.dms.get(user);
        if (!dm) {
          dm = `D${user.slice(1)}`;
          this.dms.set(user, dm);
        }
        return send({ ok: true, channel: { id: dm } });
      }
      case 'chat.postMessage': {
        if (!channelOk(args.channel)) return send({ ok: false, error: 'channel_not_found' });
        if (!Array.isArray(args.blocks) || args.blocks.length > 50) return send({ ok: false, error: 'invalid_blocks' });
        const m: FakeSlackMessage = {
          channel: String(args.channel),
          ts: this.nextTs(),
          user: this.botUserId,
          bot_id: this.botId,
          text: str(args.text),
          blocks: args.blocks as Array<Record<string, unknown>>,
          ...(args.thread_ts ? { thread_ts: str(args.thread_ts) } : {}),
          edits: [],
        };
        this.messages.push(m);
        return send({ ok: true, channel: m.channel, ts: m.ts, message: m });
      }
      case 'chat.update': {
        const m = this.messages.find((x) => x.channel === args.channel && x.ts === args.ts);
        if (!m) return send({ ok: false, error: 'message_not_found' });
        m.edits.push({ text: m.text, blocks: m.blocks });
        m.text = str(args.text);
        if (Array.isArray(args.blocks)) m.blocks = args.blocks as Array<Record<string, unknown>>;
        return send({ ok: true, channel: m.channel, ts: m.ts, text: m.text });
      }
      case 'chat.postEphemeral': {
        if (!channelOk(args.channel)) return send({ ok: false, error: 'channel_not_found' });
        this.ephemerals.push({ channel: String(args.channel), user: String(args.user), text: str(args.text) });
        return send({ ok: true, message_ts: this.nextTs() });
      }
      case 'conversations.history': {
        if (!channelOk(args.channel)) return send({ ok: false, error: 'channel_not_found' });
        let list = this.messages.filter((m) => m.channel === args.channel && !m.thread_ts);
        if (args.latest && args.oldest && args.inclusive) list = list.filter((m) => m.ts === args.latest);
        const limit = Number(args.limit ?? 100);
        return send({ ok: true, messages: [...list].reverse().slice(0, limit), has_more: false });
      }
      case 'conversations.replies': {
        if (!channelOk(args.channel)) return send({ ok: false, error: 'channel_not_found' });
        const parent = this.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
        if (!parent) return send({ ok: false, error: 'thread_not_found' });
        return send({ ok: true, messages: [parent, ...this.repliesTo(parent.ts)], has_more: false });
      }
      default:
        this.unexpected.push(method);
        return send({ ok: false, error: 'unknown_method' });
    }
  }
}
