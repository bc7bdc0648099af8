/**
 * Metrics and the Temporal runtime for the server commands (`dev`, `worker`): where metrics go, from the flags, and
 * the SDK runtime installed with that export and with its log lines sent to the command's logger.
 */
import { createServer } from 'node:net';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import type { Env } from '../config/env';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import { parseBindAddress, parseOtlpUrl, telemetryOptions, type MetricsExport } from '../metrics/telemetry';

/** The metrics options every server command shares. */
export interface MetricsFlags {
  /** `HOST:PORT` for the Prometheus `/metrics`, or `off`. */
  metrics?: string;
  /** An OTLP collector URL instead of the Prometheus endpoint. */
  otlp?: string;
  otlpHttp?: boolean;
}

/** Where metrics go, from the flags; `fallback` is the default Prometheus address (null: none). */
export function metricsExportFrom(flags: MetricsFlags, fallback: string | null): MetricsExport {
  if (flags.otlp !== undefined) {
    if (flags.metrics !== undefined && flags.metrics !== 'off')
      throw new BadInputError('--otlp: the SDK exports to one place; pass --metrics off or leave --metrics out');
    return { otlp: { url: parseOtlpUrl(flags.otlp, '--otlp'), http: flags.otlpHttp ?? false } };
  }
  if (flags.otlpHttp) throw new BadInputError('--otlp-http: needs --otlp <url>');
  const address = flags.metrics ?? fallback;
  if (address === null || address === 'off') return null;
  return { prometheus: parseBindAddress(address, '--metrics') };
}

/** True when nothing listens on `host:port` yet (the dev default moves aside for a busy port). */
export function portFree(address: string): Promise<boolean> {
  const i = address.lastIndexOf(':');
  return new Promise((resolveFree) => {
    const srv = createServer();
    srv.once('error', () => resolveFree(false));
    srv.listen(Number(address.slice(i + 1)), address.slice(0, i).replace(/^\[|\]$/g, ''), () =>
      srv.close(() => resolveFree(true)),
    );
  });
}

/** A line for the startup banner: where to scrape, or where metrics are pushed. */
export function describeMetrics(exp: MetricsExport): string {
  if (exp === null) return 'off (--metrics HOST:PORT to serve /metrics)';
  if ('otlp' in exp) return `pushed over OTLP/${exp.otlp.http ? 'HTTP' : 'gRPC'} to ${exp.otlp.url}`;
  return `http://${exp.prometheus}/metrics`;
}

export function installRuntimeLogging(logger: Logger, env: Env, metrics: MetricsExport = null): void {
  const level = env.TEMPORAL_LOG_LEVEL ?? 'WARN';
  Runtime.install({
    telemetryOptions: telemetryOptions(metrics),
    logger: new DefaultLogger(level, (entry) => {
      // Activity-only workers (judge, executor) poll no workflows by design.
      if (entry.message.startsWith('No workflows registered')) return;
      const fn = entry.level === 'ERROR' ? logger.error : entry.level === 'WARN' ? logger.warn : logger.info;
      fn.call(logger, { temporal: entry.meta }, entry.message);
    }),
  });
}

/**
 * For a command whose stdout is its answer (`audit replay`): the replaying worker's lines and Temporal core's own
 * (which core prints straight to stdout unless forwarded) go through `logger`, which writes to stderr.
 */
export function installQuietRuntime(logger: Logger, env: Env): void {
  const level = env.TEMPORAL_LOG_LEVEL ?? 'WARN';
  Runtime.install({
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: level }) } },
    logger: new DefaultLogger(level, (entry) => {
      const fn = entry.level === 'ERROR' ? logger.error : entry.level === 'WARN' ? logger.warn : logger.info;
      fn.call(logger, { temporal: entry.meta }, entry.message);
    }),
  });
}
