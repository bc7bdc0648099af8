/**
 * Where the Temporal service is and how to reach it, resolved without loading the SDK client: the CLI's `status`
 * path (src/client/status-rpc.ts) uses it too, and src/client/connection.ts builds SDK connections from it.
 */
import type { ConnectionOptions } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { loadEnv } from '../config/env';
import { BadInputError } from '../contracts/errors';

/** Where the Temporal service is, following Temporal's own environment conventions. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls?: ConnectionOptions['tls'];
  apiKey?: string;
  /** gRPC metadata from the profile or `TEMPORAL_GRPC_META_*`. */
  metadata?: ConnectionOptions['metadata'];
}

/**
 * Resolves the connection the way Temporal's own tools do, through the SDK's environment
 * configuration (`@temporalio/envconfig`): the profile `TEMPORAL_PROFILE` of the TOML file
 * `TEMPORAL_CONFIG_FILE` (default `~/.config/temporalio/temporal.toml`, if present), overridden by
 * `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS` and `TEMPORAL_TLS_*`.
 * Explicit values (`--address`, `--namespace`) win; the variables are validated by src/config/env.ts
 * first, so a bad value is refused with its name.
 */
export function temporalTarget(
  overrides: { address?: string; namespace?: string } = {},
  env: NodeJS.ProcessEnv = process.env,
): TemporalTarget {
  loadEnv(env);
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
  return {
    address: overrides.address ?? connectionOptions.address ?? 'localhost:7233',
    namespace: overrides.namespace ?? config.namespace ?? 'default',
    tls: connectionOptions.tls,
    apiKey: typeof connectionOptions.apiKey === 'string' ? connectionOptions.apiKey : undefined,
    metadata: connectionOptions.metadata,
  };
}
