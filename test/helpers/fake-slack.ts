/**
 * A loopback Slack: the Web API (node:http, form or JSON bodies, `ok` envelopes, Bearer tokens) that the real
 * @slack/web-api client talks to through its `slackApiUrl`, and the interactivity side: a click becomes a real
 * `block_actions` payload, either signed with the app's signing secret the way Slack signs it (`v0=` HMAC-SHA256 of
 * `v0:<timestamp>:<body>`) and posted to the Bolt HTTP receiver, or sent over Socket Mode: `apps.connections.open`
 * (app-level token only) hands out a single-use `ws://` URL on the same port, the socket gets Slack's `hello`, each
 * interaction goes as an `interactive` envelope with an `envelope_id`, and the app must answer with that id (its ack)
 * within Slack's 3 seconds. The server pings like Slack does, and the real @slack/socket-mode client drives it all.
 *
 * Unknown methods answer `unknown_method` and are kept in `unexpected`; tests assert that list is empty.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

export const FAKE_SLACK_BOT_TOKEN = 'xoxb-fake-bot-token-for-tests-only';
export const FAKE_SLACK_SIGNING_SECRET = 'fake-signing-secret-for-tests-only';
export const FAKE_SLACK_APP_TOKEN = 'xapp-1-AFAKEAPP-fake-app-level-token-for-tests-only';

/** What a Socket Mode client sent back for one envelope: its ack (`payload` is the optional response). */
export interface SocketAck {
  envelope_id: string;
  payload?: Record<string, unknown>;
}

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

/** A modal opened with views.open. */
export interface FakeSlackView {
  id: string;
  /** Whose screen it is on: the user whose click's trigger_id opened it. */
  userId: string;
  view: Record<string, unknown>;
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
  /** Socket Mode: tickets handed out by apps.connections.open and not used yet. */
  private readonly tickets = new Set<string>();
  /** Socket Mode: open app connections (after `hello`). */
  readonly sockets = new Set<WebSocket>();
  /** Socket Mode: every message a client sent (acks), in order. */
  readonly socketMessages: unknown[] = [];
  /** Socket Mode: connection attempts refused (bad or reused ticket). */
  readonly refusedSockets: string[] = [];
  readonly views: FakeSlackView[] = [];
  /** trigger_ids handed out with interactions: who they belong to and when (they expire after 3 s). */
  private readonly triggers = new Map<string, { userId: string; at: number }>();
  private readonly ackWaiters = new Map<string, (ack: SocketAck) => void>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private pinger: NodeJS.Timeout | undefined;

  private constructor(
    private readonly server: Server,
    readonly token: string,
    readonly appToken: string,
  ) {}

  static async start(opts: { token?: string; appToken?: string } = {}): Promise<FakeSlack> {
    const server = createServer();
    const fake = new FakeSlack(server, opts.token ?? FAKE_SLACK_BOT_TOKEN, opts.appToken ?? FAKE_SLACK_APP_TOKEN);
    server.on('request', (req, res) => void fake.handle(req, res));
    server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const ticket = url.searchParams.get('ticket') ?? '';
      // Like Slack's /link endpoint: one connection per ticket from apps.connections.open.
      if (url.pathname !== '/link/' || !fake.tickets.delete(ticket)) {
        fake.refusedSockets.push(req.url ?? '');
        socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
        return;
      }
      fake.wss.handleUpgrade(req, socket, head, (ws) => fake.onSocket(ws));
    });
    // Slack pings every few seconds; the client closes a connection that has not been pinged for 30 s.
    fake.pinger = setInterval(() => {
      for (const ws of fake.sockets) ws.ping(Buffer.from(`ping ${Date.now()}`));
    }, 2_000);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('message', (data: RawData) => {
      let msg: unknown;
      try {
        msg = JSON.parse(Buffer.from(data as Buffer).toString('utf8'));
      } catch {
        this.unexpected.push('socket: a message that is not JSON');
        return;
      }
      this.socketMessages.push(msg);
      const id = (msg as { envelope_id?: unknown }).envelope_id;
      const waiter = typeof id === 'string' ? this.ackWaiters.get(id) : undefined;
      if (!waiter) {
        this.unexpected.push(`socket: ${JSON.stringify(msg).slice(0, 200)}`);
        return;
      }
      this.ackWaiters.delete(id as string);
      waiter(msg as SocketAck);
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.sockets.size,
        debug_info: { host: 'applink-fake', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: 'AFAKEAPP' },
      }),
    );
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/`;
  }

  async stop(): Promise<void> {
    clearInterval(this.pinger);
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
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
    return this.postSigned(opts.appUrl, this.blockActions(opts), opts.badSignature ? 'not-the-secret' : opts.secret);
  }

  /**
   * The same click over Socket Mode: an `interactive` envelope on the app's open socket. Resolves with the app's ack
   * (it must come within 3 seconds, as Slack requires).
   */
  async clickOverSocket(opts: { message: FakeSlackMessage; actionId: string; userId: string }): Promise<SocketAck> {
    return this.sendEnvelope('interactive', this.blockActions(opts), false);
  }

  /** Sends one envelope to the (single) connected app and waits for its ack. */
  async sendEnvelope(type: string, payload: unknown, acceptsResponsePayload: boolean): Promise<SocketAck> {
    const ws = [...this.sockets][0];
    if (!ws) throw new Error('fake Slack: no Socket Mode connection');
    const envelopeId = randomBytes(16).toString('hex');
    const acked = new Promise<SocketAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ackWaiters.delete(envelopeId);
        reject(new Error(`fake Slack: no ack for envelope ${envelopeId} within 3 s`));
      }, 3_000);
      this.ackWaiters.set(envelopeId, (ack) => {
        clearTimeout(timer);
        resolve(ack);
      });
    });
    ws.send(
      JSON.stringify({
        envelope_id: envelopeId,
        payload,
        type,
        accepts_response_payload: acceptsResponsePayload,
        retry_attempt: 0,
        retry_reason: '',
      }),
    );
    return acked;
  }

  private trigger(userId: string): string {
    const id = `${Date.now()}.${randomBytes(6).toString('hex')}`;
    this.triggers.set(id, { userId, at: Date.now() });
    return id;
  }

  /**
   * The user presses the modal's submit button: the `view_submission` payload Slack sends, with `values` as the
   * view's state (`{ block_id: { action_id: text } }`), posted signed to `appUrl` or sent over the socket. Returns
   * the app's answer: its HTTP body or its ack's payload (`{}` closes the modal; `response_action: errors` keeps it).
   */
  async submitView(opts: {
    view: FakeSlackView;
    userId?: string;
    values: Record<string, Record<string, string>>;
    appUrl?: string;
  }): Promise<Record<string, unknown>> {
    const v = opts.view.view;
    const state: Record<string, Record<string, { type: string; value: string }>> = {};
    for (const [block, actions] of Object.entries(opts.values)) {
      state[block] = {};
      for (const [action, value] of Object.entries(actions)) state[block][action] = { type: 'plain_text_input', value };
    }
    const userId = opts.userId ?? opts.view.userId;
    const payload = {
      type: 'view_submission',
      team: { id: this.teamId, domain: 'fake' },
      user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: this.teamId },
      api_app_id: 'AFAKEAPP',
      token: 'deprecated-verification-token',
      trigger_id: this.trigger(userId),
      view: {
        ...v,
        id: opts.view.id,
        team_id: this.teamId,
        state: { values: state },
        hash: randomBytes(8).toString('hex'),
        previous_view_id: null,
        root_view_id: opts.view.id,
        app_id: 'AFAKEAPP',
        external_id: '',
        app_installed_team_id: this.teamId,
        bot_id: this.botId,
      },
      response_urls: [],
      is_enterprise_install: false,
      enterprise: null,
    };
    if (opts.appUrl) {
      const { status, body } = await this.postSignedFull(opts.appUrl, payload);
      if (status !== 200) throw new Error(`fake Slack: the app answered ${status} to a view_submission`);
      return body ? (JSON.parse(body) as Record<string, unknown>) : {};
    }
    const ack = await this.sendEnvelope('interactive', payload, true);
    return ack.payload ?? {};
  }

  /** The `block_actions` payload Slack sends when `userId` clicks `actionId` on `message`. */
  blockActions(opts: { message: FakeSlackMessage; actionId: string; userId: string }): Record<string, unknown> {
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
      trigger_id: this.trigger(opts.userId),
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
    return payload;
  }

  /** Posts an interaction payload to the app's Request URL, signed as Slack signs it. Returns the HTTP status. */
  async postSigned(appUrl: string, payload: unknown, secret = FAKE_SLACK_SIGNING_SECRET): Promise<number> {
    return (await this.postSignedFull(appUrl, payload, secret)).status;
  }

  async postSignedFull(
    appUrl: string,
    payload: unknown,
    secret = FAKE_SLACK_SIGNING_SECRET,
  ): Promise<{ status: number; body: string }> {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    const res = await fetch(appUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      },
      body,
    });
    return { status: res.status, body: await res.text() };
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
    if (method === 'apps.connections.open') {
      // Only an app-level token opens a socket; a bot token is refused as Slack refuses it.
      if (auth !== `Bearer ${this.appToken}`) return send({ ok: false, error: 'invalid_auth' });
      const ticket = randomBytes(12).toString('hex');
      this.tickets.add(ticket);
      const port = (this.server.address() as AddressInfo).port;
      return send({ ok: true, url: `ws://127.0.0.1:${port}/link/?ticket=${ticket}&app_id=AFAKEAPP` });
    }
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
      case 'views.open': {
        // A modal opens only from a fresh trigger_id (Slack: used once, within 3 s), on that user's screen.
        const trigger = this.triggers.get(str(args.trigger_id));
        this.triggers.delete(str(args.trigger_id));
        if (!trigger || Date.now() - trigger.at > 3_000) return send({ ok: false, error: 'expired_trigger_id' });
        const view = args.view as Record<string, unknown> | undefined;
        const title = (view?.title as { text?: unknown } | undefined)?.text;
        if (
          !view ||
          view.type !== 'modal' ||
          typeof title !== 'string' ||
          title.length > 24 ||
          !Array.isArray(view.blocks) ||
          str(view.private_metadata).length > 3000 ||
          str(view.callback_id).length > 255
        )
          return send({ ok: false, error: 'invalid_arguments' });
        const opened: FakeSlackView = {
          id: `V${(++this.seq).toString().padStart(8, '0')}`,
          userId: trigger.userId,
          view,
        };
        this.views.push(opened);
        return send({ ok: true, view: { ...view, id: opened.id } });
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
