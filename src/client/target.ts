/**
 * Where the Temporal service is and how to reach it, resolved without loading the SDK client: the CLI's `status`
 * path (src/client/status-rpc.ts) uses it too, and src/client/connection.ts builds SDK connections from it.
 */
import type { ConnectionOptions } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { AgentJudgeError, BadInputError } from '../contracts/errors';
import { processEnv } from '../config/process-env';
import { readRunningDev } from '../config/user-state';

/** Where the Temporal service is, following Temporal's own environment conventions. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls?: ConnectionOptions['tls'];
  apiKey?: string;
  /** gRPC metadata from the profile or `TEMPORAL_GRPC_META_*`. */
  metadata?: ConnectionOptions['metadata'];
  /** How often a call is tried while the service is unavailable (`AGENT_JUDGE_TEMPORAL_ATTEMPTS`, else 10). */
  attempts?: number;
}

/**
 * The variables src/config/env.ts can refuse (every other one takes any text). Only when one of them is set does
 * {@link temporalTargetLazily} load that schema, and zod with it; test/unit/status-rpc.test.ts keeps this list equal
 * to what the schema refuses.
 */
export const REFUSABLE_ENV_VARS: readonly string[] = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_TLS',
  'AGENT_JUDGE_TEMPORAL_ATTEMPTS',
  'TEMPORAL_LOG_LEVEL',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'DISCORD_API_URL',
  'DISCORD_CHANNEL_ID',
  'SLACK_API_URL',
  'SLACK_CHANNEL_ID',
  'AGENT_JUDGE_OPENAI_BASE_URL',
  'AGENT_JUDGE_OPENAI_FORMAT',
  'AGENT_JUDGE_INBOX_URL',
  'AGENT_JUDGE_TEMPORAL_FAIRNESS',
];

/**
 * {@link resolveTemporalTarget} after the same environment check as `temporalTarget` (src/client/connection.ts),
 * with the schema loaded only when a variable it could refuse is set: a command that must start fast (`status`)
 * pays for zod only when there is something to check.
 */
export async function temporalTargetLazily(
  overrides: { address?: string; namespace?: string } = {},
  env: NodeJS.ProcessEnv = processEnv(),
): Promise<TemporalTarget> {
  if (REFUSABLE_ENV_VARS.some((name) => (env[name]?.trim() ?? '') !== '')) {
    (await import('../config/env')).loadEnv(env);
  }
  return resolveTemporalTarget(overrides, env);
}

/**
 * Resolves the connection the way Temporal's own tools do, through the SDK's environment configuration
 * (`@temporalio/envconfig`): the profile `TEMPORAL_PROFILE` of the TOML file `TEMPORAL_CONFIG_FILE` (default
 * `~/.config/temporalio/temporal.toml`, if present), overridden by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS` and `TEMPORAL_TLS_*`. Explicit values (`--address`, `--namespace`) win. The
 * variables are not validated here: callers check them first (`temporalTarget`, {@link temporalTargetLazily}).
 */
export function resolveTemporalTarget(
  overrides: { address?: string; namespace?: string } = {},
  env: NodeJS.ProcessEnv = processEnv(),
): TemporalTarget {
  // Empty variables count as unset (as everywhere in agent-judge), not as an empty API key.
  const present: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') present[name] = value.trim();
  }
  let config: ReturnType<typeof loadClientConnectConfig>;
  try {
    config = loadClientConnectConfig({ overrideEnvVars: present });
  } catch (err) {
    throw new BadInputError(`Temporal client configuration: ${(err as Error).message}`);
  }
  const { connectionOptions } = config;
  // Nothing configured: the running `agent-judge dev` (its --port), as it recorded itself in the user's state folder.
  const dev = overrides.address === undefined && connectionOptions.address === undefined ? readRunningDev(env) : null;
  return {
    address: overrides.address ?? connectionOptions.address ?? dev?.temporal.address ?? 'localhost:7233',
    namespace: overrides.namespace ?? config.namespace ?? dev?.temporal.namespace ?? 'default',
    tls: connectionOptions.tls,
    apiKey: typeof connectionOptions.apiKey === 'string' ? connectionOptions.apiKey : undefined,
    metadata: connectionOptions.metadata,
    ...(present.AGENT_JUDGE_TEMPORAL_ATTEMPTS ? { attempts: Number(present.AGENT_JUDGE_TEMPORAL_ATTEMPTS) } : {}),
  };
}

/**
 * A connection that never came up, said so a person can act on it: the address and namespace tried, the transport's
 * own words, and how to start agent-judge or point at the server it runs on. Both ways of connecting (the SDK's and
 * `status`'s own) throw this one error.
 */
export function unreachableError(target: Pick<TemporalTarget, 'address' | 'namespace'>, err: unknown): AgentJudgeError {
  const why = err instanceof Error ? err.message : String(err);
  return new AgentJudgeError(
    `cannot reach Temporal at ${target.address} (namespace ${target.namespace}): ${why}. ` +
      'Is agent-judge running? Start it with `agent-judge dev` (a Temporal server on localhost:7233 and the ' +
      'workers), or point TEMPORAL_ADDRESS or --address at the server it uses (`agent-judge dev --port P` ' +
      'listens on 127.0.0.1:P)',
    { cause: err },
  );
}
