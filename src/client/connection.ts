import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { loadEnv } from '../config/env';
import { AgentJudgeError } from '../contracts/errors';
import { resolveTemporalTarget, unreachableError, type TemporalTarget } from './target';
import { processEnv } from '../config/process-env';

export type { TemporalTarget } from './target';

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
  env: NodeJS.ProcessEnv = processEnv(),
): TemporalTarget {
  loadEnv(env);
  return resolveTemporalTarget(overrides, env);
}

export async function connect(target: TemporalTarget): Promise<Connection> {
  return Connection.connect({
    address: target.address,
    tls: target.tls,
    apiKey: target.apiKey,
    metadata: {
      ...target.metadata,
      // Temporal Cloud routes API-key calls by this header.
      ...(target.apiKey ? { 'temporal-namespace': target.namespace } : {}),
    },
    connectTimeout: 5000,
    // The SDK's own retry of unavailable calls, with another number of attempts when one is set.
    ...(target.attempts !== undefined
      ? { interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: target.attempts }))] }
      : {}),
  }).catch((err: unknown) => {
    throw unreachableError(target, err);
  });
}

/** A client bound to one namespace; close the connection with `client.connection.close()`. */
export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await connect(target);
  return new Client({ connection, namespace: target.namespace });
}

/**
 * A client whose server answered for its namespace, for a process that must not start without one (the MCP proxy, the
 * hook gate, the A2A front): any failure is {@link unreachableError} followed by `consequence`.
 */
export async function connectCheckedClient(target: TemporalTarget, consequence: string): Promise<Client> {
  let client: Client | undefined;
  try {
    client = await connectClient(target);
    await client.workflowService.describeNamespace({ namespace: target.namespace });
    return client;
  } catch (err) {
    await client?.connection.close().catch(() => undefined);
    const reached = unreachableError(target, (err as { cause?: unknown }).cause ?? err);
    throw new AgentJudgeError(`${reached.message}; ${consequence}`, { cause: err });
  }
}
