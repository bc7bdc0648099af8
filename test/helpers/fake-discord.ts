/**
 * A loopback Discord: the REST API (node:http) and the gateway (WebSocket) on one port, speaking
 * the real wire protocol so the real discord.js client and @discordjs/rest drive it. It records
 * every REST call and message, honours `enforce_nonce` like Discord, and lets a test click a
 * button or submit a modal by dispatching INTERACTION_CREATE and awaiting the bot's callback.
 *
 * Unknown routes answer 404 and are kept in `unexpected`; tests assert that list is empty.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

export const FAKE_TOKEN = 'fake-bot-token.for-tests.only';
const DISCORD_EPOCH = 1420070400000n;

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: null;
  bot?: boolean;
}

export interface FakeChannel {
  id: string;
  type: number;
  guild_id?: string;
  name?: string;
  recipients?: FakeUser[];
  position?: number;
  permission_overwrites?: unknown[];
  last_message_id?: string | null;
}

export interface FakeMessage {
  id: string;
  channel_id: string;
  author: FakeUser;
  content: string;
  embeds: Record<string, unknown>[];
  components: Record<string, unknown>[];
  allowed_mentions?: unknown;
  message_reference?: { message_id: string; channel_id?: string };
  nonce?: string | number;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: unknown[];
  mention_roles: unknown[];
  attachments: unknown[];
  pinned: boolean;
  type: number;
  flags: number;
  /** Every edit, oldest first (the fake's own history, not a Discord field). */
  history?: Array<{ at: number; content: string; embeds: unknown[]; components: unknown[] }>;
}

export interface RestCall {
  method: string;
  path: string;
  query: string;
  body: unknown;
  auth: string | undefined;
  status: number;
  at: number;
}

export interface InteractionCallback {
  /** 4 reply, 5 deferred reply, 6 deferred update, 7 update, 9 modal. */
  type: number;
  data?: Record<string, unknown>;
  at: number;
}

export interface InteractionFollowUp {
  kind: 'followup' | 'edit_original';
  body: Record<string, unknown>;
  at: number;
}

/** One dispatched interaction and everything the bot answered to it. */
export interface InteractionRecord {
  id: string;
  token: string;
  type: number;
  userId: string;
  customId: string;
  messageId?: string;
  dispatchedAt: number;
  callbacks: InteractionCallback[];
  followUps: InteractionFollowUp[];
}

/** The first answer to a dispatched interaction, and helpers to wait for what follows it. */
export interface InteractionResult {
  record: InteractionRecord;
  callback: InteractionCallback;
  /** Milliseconds from dispatch to the first callback (Discord allows 3,000). */
  latencyMs: number;
  /** True when the first answer was an ephemeral reply. */
  ephemeral: boolean;
  /** The user-visible final answer: for a deferral, the edit or follow-up that came after it. */
  final(
    timeoutMs?: number,
  ): Promise<{ type: 'callback' | 'followup' | 'edit_original'; body: Record<string, unknown>; ephemeral: boolean }>;
}

export interface FakeDiscordOptions {
  token?: string;
  /** A guild text channel to create (for DISCORD_CHANNEL_ID delivery). */
  withGuildChannel?: boolean;
  /** How long an `enforce_nonce` nonce is remembered (Discord: a few minutes). */
  nonceWindowMs?: number;
  /** Milliseconds added to every REST answer (to test slow paths). */
  restDelayMs?: number;
}

/** A JSON object sent by discord.js: untrusted, so every field is read with a check. */
type WireBody = Record<string, unknown>;

/** The body as a JSON object, or null (no body, an array, a string that was not JSON...). */
function wireBody(value: unknown): WireBody | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as WireBody) : null;
}

/** A gateway frame as text (discord.js sends text frames unless zlib-sync is installed). */
function rawText(raw: RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return (raw instanceof ArrayBuffer ? Buffer.from(raw) : raw).toString('utf8');
}

/** The objects of a JSON array field (embeds, components); anything else is empty. */
function wireObjects(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => wireBody(v) !== null) : [];
}

interface Route {
  method: string;
  pattern: RegExp;
  auth: boolean;
  handle: (
    m: RegExpExecArray,
    body: WireBody | null,
    query: URLSearchParams,
  ) => Promise<[number, unknown]> | [number, unknown];
}

interface Failure {
  method: string;
  pattern: RegExp;
  status: number;
  /** Process the request first, then answer with the error (a lost response). */
  afterProcessing: boolean;
  remaining: number;
}

export class FakeDiscord {
  readonly token: string;
  readonly calls: RestCall[] = [];
  readonly unexpected: RestCall[] = [];
  readonly messages = new Map<string, FakeMessage>();
  readonly channels = new Map<string, FakeChannel>();
  readonly users = new Map<string, FakeUser>();
  readonly interactions = new Map<string, InteractionRecord>();
  readonly botUser: FakeUser;
  readonly applicationId: string;
  readonly guildId: string;
  /** Set when constructed `withGuildChannel`. */
  guildChannelId?: string;
  /** Gateway sessions that completed IDENTIFY. */
  identifies = 0;

  private server: Server;
  private wss: WebSocketServer;
  private sockets = new Set<WebSocket>();
  private ready = new Set<WebSocket>();
  private seq = 0;
  private counter = 0n;
  private nonces = new Map<string, { messageId: string; at: number }>();
  private failures: Failure[] = [];
  private listeners = new Set<() => void>();
  private readonly opts: Required<Omit<FakeDiscordOptions, 'token'>>;
  port = 0;

  private constructor(options: FakeDiscordOptions) {
    this.token = options.token ?? FAKE_TOKEN;
    this.opts = {
      withGuildChannel: options.withGuildChannel ?? false,
      nonceWindowMs: options.nonceWindowMs ?? 5 * 60_000,
      restDelayMs: options.restDelayMs ?? 0,
    };
    this.botUser = this.addUser('agent-judge', true);
    this.applicationId = this.botUser.id;
    this.guildId = this.snowflake();
    if (this.opts.withGuildChannel) {
      const id = this.snowflake();
      this.channels.set(id, {
        id,
        type: 0,
        guild_id: this.guildId,
        name: 'approvals',
        position: 0,
        permission_overwrites: [],
        last_message_id: null,
      });
      this.guildChannelId = id;
    }
    this.server = createServer((req, res) => void this.onRequest(req, res));
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
  }

  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** The REST base to give discord.js / @discordjs/rest (`rest: { api }`, DISCORD_API_URL). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  snowflake(): string {
    this.counter += 1n;
    return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (this.counter & 0x3fffffn)).toString();
  }

  /** The message object Discord answers an interaction response or follow-up with (type 20 or 0). */
  private interactionMessage(channelId: unknown, body: WireBody | null | undefined, type: number): WireBody {
    return {
      id: this.snowflake(),
      channel_id: channelId,
      content: body?.content ?? '',
      embeds: [],
      components: [],
      author: this.botUser,
      timestamp: new Date().toISOString(),
      type,
      flags: body?.flags ?? 0,
      attachments: [],
      mentions: [],
      mention_roles: [],
      pinned: false,
      tts: false,
      mention_everyone: false,
      edited_timestamp: null,
    };
  }

  addUser(username: string, bot = false): FakeUser {
    const user: FakeUser = {
      id: this.snowflake(),
      username,
      global_name: bot ? null : username,
      discriminator: '0',
      avatar: null,
      ...(bot ? { bot: true } : {}),
    };
    this.users.set(user.id, user);
    return user;
  }

  /** Messages the bot posted, in order. */
  postedMessages(): FakeMessage[] {
    return [...this.messages.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  }

  /** Messages whose footer or buttons carry this workflow id. */
  messagesFor(workflowId: string): FakeMessage[] {
    return this.postedMessages().filter(
      (m) => JSON.stringify([m.embeds, m.components]).includes(workflowId) && !m.message_reference,
    );
  }

  /** Replies to a message (reminders). */
  repliesTo(messageId: string): FakeMessage[] {
    return this.postedMessages().filter((m) => m.message_reference?.message_id === messageId);
  }

  dmChannelOf(userId: string): FakeChannel | undefined {
    return [...this.channels.values()].find((c) => c.type === 1 && c.recipients?.some((r) => r.id === userId));
  }

  /** Answers the next matching REST call with `status` (after doing the work when `afterProcessing`). */
  failNext(method: string, pattern: RegExp, status: number, { afterProcessing = false, times = 1 } = {}): void {
    this.failures.push({ method, pattern, status, afterProcessing, remaining: times });
  }

  /** Resolves when `predicate` holds, re-checked after every REST call or interaction answer. */
  async waitFor<T>(predicate: () => T | undefined | false | null, timeoutMs = 10_000, what = 'condition'): Promise<T> {
    const now = predicate();
    if (now) return now;
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const v = predicate();
        if (v) {
          cleanup();
          resolve(v);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake discord: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
    });
  }

  /** Resolves once a bot session has identified and received READY. */
  async waitForGatewaySession(timeoutMs = 10_000): Promise<void> {
    await this.waitFor(() => this.ready.size > 0, timeoutMs, 'a gateway session');
  }

  get gatewaySessions(): number {
    return this.ready.size;
  }

  // -------------------------------------------------------------------------------------------
  // Interactions

  /** A user clicks a button on a message: INTERACTION_CREATE type 3. */
  click(opts: { messageId: string; customId: string; userId: string; timeoutMs?: number }): Promise<InteractionResult> {
    const message = this.messages.get(opts.messageId);
    if (!message) throw new Error(`fake discord: no message ${opts.messageId}`);
    return this.dispatchInteraction({
      type: 3,
      userId: opts.userId,
      message,
      customId: opts.customId,
      data: { custom_id: opts.customId, component_type: 2 },
      timeoutMs: opts.timeoutMs,
    });
  }

  /** A user submits a modal opened from a message: INTERACTION_CREATE type 5. */
  submitModal(opts: {
    messageId: string;
    customId: string;
    userId: string;
    fields: Record<string, string>;
    timeoutMs?: number;
  }): Promise<InteractionResult> {
    const message = this.messages.get(opts.messageId);
    if (!message) throw new Error(`fake discord: no message ${opts.messageId}`);
    const components = Object.entries(opts.fields).map(([custom_id, value]) => ({
      type: 1,
      components: [{ type: 4, id: 2, custom_id, value }],
    }));
    return this.dispatchInteraction({
      type: 5,
      userId: opts.userId,
      message,
      customId: opts.customId,
      data: { custom_id: opts.customId, components },
      timeoutMs: opts.timeoutMs,
    });
  }

  private async dispatchInteraction(opts: {
    type: number;
    userId: string;
    message: FakeMessage;
    customId: string;
    data: Record<string, unknown>;
    timeoutMs?: number;
  }): Promise<InteractionResult> {
    const user = this.users.get(opts.userId) ?? {
      id: opts.userId,
      username: `user${opts.userId.slice(-4)}`,
      global_name: null,
      discriminator: '0',
      avatar: null,
    };
    const channel = this.channels.get(opts.message.channel_id);
    if (!channel) throw new Error(`fake discord: no channel ${opts.message.channel_id}`);
    const record: InteractionRecord = {
      id: this.snowflake(),
      token: randomBytes(24).toString('base64url'),
      type: opts.type,
      userId: opts.userId,
      customId: opts.customId,
      messageId: opts.message.id,
      dispatchedAt: performance.now(),
      callbacks: [],
      followUps: [],
    };
    this.interactions.set(record.id, record);
    const inGuild = channel.type !== 1;
    const { history: _h, allowed_mentions: _a, ...message } = opts.message;
    const payload: Record<string, unknown> = {
      id: record.id,
      application_id: this.applicationId,
      type: opts.type,
      token: record.token,
      version: 1,
      data: opts.data,
      channel_id: channel.id,
      channel: inGuild
        ? { id: channel.id, type: channel.type, guild_id: this.guildId, name: channel.name }
        : { id: channel.id, type: 1, recipients: [user] },
      message,
      locale: 'en-US',
      app_permissions: '562949953421311',
      entitlements: [],
      authorizing_integration_owners: {
        '0': inGuild ? this.guildId : undefined,
        '1': inGuild ? undefined : opts.userId,
      },
      context: inGuild ? 0 : 1,
      attachment_size_limit: 10485760,
      ...(inGuild
        ? {
            guild_id: this.guildId,
            guild_locale: 'en-US',
            member: {
              user,
              roles: [],
              joined_at: new Date(0).toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
              permissions: '1024',
              pending: false,
              nick: null,
              avatar: null,
            },
          }
        : { user }),
    };
    if (this.ready.size === 0) throw new Error('fake discord: no bot session is connected to the gateway');
    this.dispatch('INTERACTION_CREATE', payload);
    const timeoutMs = opts.timeoutMs ?? 3000;
    const callback = await this.waitFor(
      () => record.callbacks[0],
      timeoutMs,
      `an answer to interaction ${opts.customId} within ${timeoutMs} ms`,
    );
    const ephemeral = callback.type === 4 && (Number(callback.data?.flags ?? 0) & 64) === 64;
    return {
      record,
      callback,
      latencyMs: callback.at - record.dispatchedAt,
      ephemeral,
      final: async (finalTimeoutMs = 15_000) => {
        if (callback.type !== 5 && callback.type !== 6)
          return { type: 'callback', body: callback.data ?? {}, ephemeral };
        const next = await this.waitFor(() => record.followUps[0], finalTimeoutMs, 'a follow-up after a deferral');
        return { type: next.kind, body: next.body, ephemeral: (Number(next.body.flags ?? 0) & 64) === 64 };
      },
    };
  }

  // -------------------------------------------------------------------------------------------
  // Gateway

  /** Sends a dispatch event to every identified session. */
  dispatch(t: string, d: unknown): void {
    for (const ws of this.ready) ws.send(JSON.stringify({ op: 0, t, s: ++this.seq, d }));
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41250 } }));
    ws.on('message', (raw) => {
      let msg: WireBody | null;
      try {
        msg = wireBody(JSON.parse(rawText(raw)));
      } catch {
        ws.close(4002, 'Decode error');
        return;
      }
      if (msg?.op === 1) ws.send(JSON.stringify({ op: 11 }));
      else if (msg?.op === 2) this.onIdentify(ws, wireBody(msg.d) ?? {});
      else if (msg?.op === 6) ws.send(JSON.stringify({ op: 9, d: false }));
    });
    ws.on('close', () => {
      this.sockets.delete(ws);
      this.ready.delete(ws);
    });
  }

  private onIdentify(ws: WebSocket, d: WireBody): void {
    if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    this.identifies += 1;
    const guilds = this.opts.withGuildChannel ? [{ id: this.guildId, unavailable: true }] : [];
    ws.send(
      JSON.stringify({
        op: 0,
        t: 'READY',
        s: ++this.seq,
        d: {
          v: 10,
          user: { ...this.botUser, verified: true, mfa_enabled: false, flags: 0 },
          guilds,
          session_id: randomBytes(16).toString('hex'),
          resume_gateway_url: `ws://127.0.0.1:${this.port}`,
          shard: [0, 1],
          application: { id: this.applicationId, flags: 0 },
          private_channels: [],
          user_settings: {},
          relationships: [],
          presences: [],
          guild_join_requests: [],
        },
      }),
    );
    if (this.opts.withGuildChannel) {
      const channels = [...this.channels.values()].filter((c) => c.guild_id === this.guildId);
      ws.send(
        JSON.stringify({
          op: 0,
          t: 'GUILD_CREATE',
          s: ++this.seq,
          d: {
            id: this.guildId,
            name: 'agent-judge test guild',
            icon: null,
            owner_id: this.botUser.id,
            afk_timeout: 300,
            verification_level: 0,
            default_message_notifications: 0,
            explicit_content_filter: 0,
            roles: [
              {
                id: this.guildId,
                name: '@everyone',
                permissions: '1024',
                position: 0,
                color: 0,
                hoist: false,
                managed: false,
                mentionable: false,
                flags: 0,
              },
            ],
            emojis: [],
            stickers: [],
            features: [],
            mfa_level: 0,
            system_channel_flags: 0,
            premium_tier: 0,
            preferred_locale: 'en-US',
            nsfw_level: 0,
            joined_at: new Date().toISOString(),
            large: false,
            unavailable: false,
            member_count: 1,
            voice_states: [],
            members: [],
            channels,
            threads: [],
            presences: [],
            stage_instances: [],
            guild_scheduled_events: [],
          },
        }),
      );
    }
    this.ready.add(ws);
    this.notify();
  }

  // -------------------------------------------------------------------------------------------
  // REST

  private routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/gateway\/bot$/,
      auth: true,
      handle: () => [
        200,
        {
          url: `ws://127.0.0.1:${this.port}`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        },
      ],
    },
    { method: 'GET', pattern: /^\/gateway$/, auth: false, handle: () => [200, { url: `ws://127.0.0.1:${this.port}` }] },
    { method: 'GET', pattern: /^\/users\/@me$/, auth: true, handle: () => [200, this.botUser] },
    {
      method: 'GET',
      pattern: /^\/applications\/@me$/,
      auth: true,
      handle: () => [200, { id: this.applicationId, name: 'agent-judge', flags: 0, bot_public: false }],
    },
    {
      method: 'POST',
      pattern: /^\/users\/@me\/channels$/,
      auth: true,
      handle: (_m, body) => {
        const recipient = typeof body?.recipient_id === 'string' ? body.recipient_id : '';
        if (!/^\d{15,25}$/.test(recipient)) return [400, { message: 'Invalid Form Body', code: 50035 }];
        const existing = this.dmChannelOf(recipient);
        if (existing) return [200, existing];
        const user = this.users.get(recipient) ?? {
          id: recipient,
          username: `user${recipient.slice(-4)}`,
          global_name: null,
          discriminator: '0',
          avatar: null,
        };
        const channel: FakeChannel = { id: this.snowflake(), type: 1, recipients: [user], last_message_id: null };
        this.channels.set(channel.id, channel);
        return [200, channel];
      },
    },
    {
      method: 'POST',
      pattern: /^\/channels\/(\d+)\/messages$/,
      auth: true,
      handle: (m, body) => this.createMessage(m[1] as string, body),
    },
    {
      method: 'GET',
      pattern: /^\/channels\/(\d+)\/messages$/,
      auth: true,
      handle: (m, _body, query) => {
        const channel = this.channels.get(m[1] as string);
        if (!channel) return [404, { message: 'Unknown Channel', code: 10003 }];
        const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 50)));
        const list = this.postedMessages()
          .filter((msg) => msg.channel_id === channel.id)
          .reverse()
          .slice(0, limit)
          .map((msg) => this.publicMessage(msg));
        return [200, list];
      },
    },
    {
      method: 'GET',
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      auth: true,
      handle: (m) => {
        const msg = this.messages.get(m[2] as string);
        if (!msg || msg.channel_id !== m[1]) return [404, { message: 'Unknown Message', code: 10008 }];
        return [200, this.publicMessage(msg)];
      },
    },
    {
      method: 'PATCH',
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      auth: true,
      handle: (m, body) => {
        const msg = this.messages.get(m[2] as string);
        if (!msg || msg.channel_id !== m[1]) return [404, { message: 'Unknown Message', code: 10008 }];
        this.editMessage(msg, body ?? {});
        return [200, this.publicMessage(msg)];
      },
    },
    {
      method: 'POST',
      pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      auth: false,
      handle: (m, body, query) => {
        const record = this.interactions.get(m[1] as string);
        if (!record || record.token !== m[2]) return [404, { message: 'Unknown interaction', code: 10062 }];
        if (record.callbacks.length > 0)
          return [400, { message: 'Interaction has already been acknowledged.', code: 40060 }];
        if (performance.now() - record.dispatchedAt > 3000)
          return [404, { message: 'Unknown interaction', code: 10062 }];
        const type = Number(body?.type);
        record.callbacks.push({ type, data: wireBody(body?.data) ?? undefined, at: performance.now() });
        if (type === 7 && record.messageId) {
          const msg = this.messages.get(record.messageId);
          if (msg) this.editMessage(msg, wireBody(body?.data) ?? {});
        }
        if (query.get('with_response') === 'true') {
          return [
            200,
            {
              interaction: {
                id: record.id,
                type: record.type,
                response_message_loading: false,
                response_message_ephemeral: false,
              },
              resource: { type },
            },
          ];
        }
        return [204, null];
      },
    },
    {
      method: 'PATCH',
      pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      auth: false,
      handle: (m, body) => {
        const record = this.findInteraction(m[1] as string, m[2] as string);
        if (!record || record.callbacks.length === 0) return [404, { message: 'Unknown Webhook', code: 10015 }];
        record.followUps.push({ kind: 'edit_original', body: body ?? {}, at: performance.now() });
        const first = record.callbacks[0]?.type;
        const msg = record.messageId ? this.messages.get(record.messageId) : undefined;
        if ((first === 6 || first === 7) && msg) {
          this.editMessage(msg, body ?? {});
          return [200, this.publicMessage(msg)];
        }
        return [200, this.interactionMessage(msg?.channel_id, body, 20)];
      },
    },
    {
      method: 'POST',
      pattern: /^\/webhooks\/(\d+)\/([^/]+)$/,
      auth: false,
      handle: (m, body) => {
        const record = this.findInteraction(m[1] as string, m[2] as string);
        if (!record || record.callbacks.length === 0) return [404, { message: 'Unknown Webhook', code: 10015 }];
        record.followUps.push({ kind: 'followup', body: body ?? {}, at: performance.now() });
        const msg = record.messageId ? this.messages.get(record.messageId) : undefined;
        return [200, this.interactionMessage(msg?.channel_id, body, 0)];
      },
    },
  ];

  private findInteraction(appId: string, token: string): InteractionRecord | undefined {
    if (appId !== this.applicationId) return undefined;
    return [...this.interactions.values()].find((r) => r.token === token);
  }

  private createMessage(channelId: string, body: WireBody | null): [number, unknown] {
    const channel = this.channels.get(channelId);
    if (!channel) return [404, { message: 'Unknown Channel', code: 10003 }];
    if (body === null) return [400, { message: 'Cannot send an empty message', code: 50006 }];
    const content = typeof body.content === 'string' ? body.content : '';
    const embeds = wireObjects(body.embeds);
    if (!content && embeds.length === 0) return [400, { message: 'Cannot send an empty message', code: 50006 }];
    if (content.length > 2000) return [400, { message: 'Invalid Form Body: content too long', code: 50035 }];
    const nonce = typeof body.nonce === 'string' || typeof body.nonce === 'number' ? body.nonce : undefined;
    if (nonce !== undefined && String(nonce).length > 25)
      return [400, { message: 'Invalid Form Body: nonce', code: 50035 }];
    const nonceKey = nonce !== undefined ? `${channelId}:${this.botUser.id}:${String(nonce)}` : undefined;
    if (nonceKey && body.enforce_nonce === true) {
      const seen = this.nonces.get(nonceKey);
      if (seen && Date.now() - seen.at <= this.opts.nonceWindowMs) {
        const existing = this.messages.get(seen.messageId);
        if (existing) return [200, this.publicMessage(existing)];
      }
    }
    const reference = wireBody(body.message_reference);
    const msg: FakeMessage = {
      id: this.snowflake(),
      channel_id: channelId,
      author: this.botUser,
      content,
      embeds,
      components: wireObjects(body.components),
      allowed_mentions: body.allowed_mentions,
      ...(typeof reference?.message_id === 'string'
        ? {
            message_reference: {
              message_id: reference.message_id,
              ...(typeof reference.channel_id === 'string' ? { channel_id: reference.channel_id } : {}),
            },
          }
        : {}),
      ...(nonce !== undefined ? { nonce } : {}),
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      pinned: false,
      type: body.message_reference ? 19 : 0,
      flags: 0,
      history: [],
    };
    this.messages.set(msg.id, msg);
    channel.last_message_id = msg.id;
    if (nonceKey && body.enforce_nonce === true) this.nonces.set(nonceKey, { messageId: msg.id, at: Date.now() });
    return [200, this.publicMessage(msg)];
  }

  private editMessage(msg: FakeMessage, body: WireBody): void {
    msg.history?.push({ at: Date.now(), content: msg.content, embeds: msg.embeds, components: msg.components });
    if (typeof body.content === 'string') msg.content = body.content;
    if (Array.isArray(body.embeds)) msg.embeds = wireObjects(body.embeds);
    if (Array.isArray(body.components)) msg.components = wireObjects(body.components);
    if (body.allowed_mentions !== undefined) msg.allowed_mentions = body.allowed_mentions;
    msg.edited_timestamp = new Date().toISOString();
  }

  private publicMessage(msg: FakeMessage): Omit<FakeMessage, 'history' | 'allowed_mentions'> {
    const { history: _h, allowed_mentions: _a, ...rest } = msg;
    return structuredClone(rest);
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = null;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const method = req.method ?? 'GET';
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    const call: RestCall = {
      method,
      path,
      query: url.search,
      body,
      auth: req.headers.authorization,
      status: 0,
      at: Date.now(),
    };
    this.calls.push(call);

    let status: number;
    let payload: unknown;
    const route = url.pathname.startsWith('/api/v10/')
      ? this.routes.find((r) => r.method === method && r.pattern.test(path))
      : undefined;
    if (!route) {
      status = 404;
      payload = { message: '404: Not Found', code: 0 };
      this.unexpected.push(call);
    } else if (route.auth && req.headers.authorization !== `Bot ${this.token}`) {
      status = 401;
      payload = { message: '401: Unauthorized', code: 0 };
    } else {
      const failure = this.failures.find((f) => f.method === method && f.pattern.test(path) && f.remaining > 0);
      if (failure && !failure.afterProcessing) {
        failure.remaining -= 1;
        status = failure.status;
        payload = { message: 'injected failure', code: 0 };
      } else {
        const m = route.pattern.exec(path) as RegExpExecArray;
        [status, payload] = await route.handle(m, wireBody(body), url.searchParams);
        if (failure) {
          failure.remaining -= 1;
          status = failure.status;
          payload = { message: 'injected failure after processing', code: 0 };
        }
      }
    }
    call.status = status;
    if (this.opts.restDelayMs > 0) await new Promise((r) => setTimeout(r, this.opts.restDelayMs));
    if (status === 204) {
      res.writeHead(204).end();
    } else {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    }
    this.notify();
  }
}
