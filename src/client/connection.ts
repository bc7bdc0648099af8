import { readFileSync } from 'node:fs';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';

/** Where the Temporal service is, following Temporal's own environment conventions. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls?: ConnectionOptions['tls'];
  apiKey?: string;
}

/**
 * Reads `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS`,
 * `TEMPORAL_TLS_CLIENT_CERT_PATH`, `TEMPORAL_TLS_CLIENT_KEY_PATH`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH`
 * and `TEMPORAL_TLS_SERVER_NAME` (the names the Temporal CLI uses); explicit values win.
 */
export function temporalTarget(
  overrides: { address?: string; namespace?: string } = {},
  env: NodeJS.ProcessEnv = process.env,
): TemporalTarget {
  const address = overrides.address ?? env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  const namespace = overrides.namespace ?? env.TEMPORAL_NAMESPACE ?? 'default';
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const certPath = env.TEMPORAL_TLS_CLIENT_CERT_PATH;
  const keyPath = env.TEMPORAL_TLS_CLIENT_KEY_PATH;
  const caPath = env.TEMPORAL_TLS_SERVER_CA_CERT_PATH;
  const wantsTls =
    ['1', 'true'].includes((env.TEMPORAL_TLS ?? '').toLowerCase()) || Boolean(certPath || caPath || apiKey);
  let tls: ConnectionOptions['tls'];
  if (wantsTls) {
    tls = {
      serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME || undefined,
      serverRootCACertificate: caPath ? readFileSync(caPath) : undefined,
      clientCertPair: certPath && keyPath ? { crt: readFileSync(certPath), key: readFileSync(keyPath) } : undefined,
    };
  }
  return { address, namespace, tls, apiKey };
}

export async function connect(target: TemporalTarget): Promise<Connection> {
  return Connection.connect({
    address: target.address,
    tls: target.tls,
    apiKey: target.apiKey,
    metadata: target.apiKey ? { 'temporal-namespace': target.namespace } : undefined,
    connectTimeout: 5000,
  });
}

/** A client bound to one namespace; close the connection with `client.connection.close()`. */
export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await connect(target);
  return new Client({ connection, namespace: target.namespace });
}
