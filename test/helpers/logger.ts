/**
 * Loggers for tests (src/contracts/logger.ts is the interface every module takes): a recorder whose lines a test can
 * assert on, a silent one for code whose logging is not under test, and a reader for the JSON lines a process started
 * as a user starts it (`agent-judge mcp`, a worker) writes on stderr.
 */
import type { Logger } from '../../src/contracts/logger';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One line as written: its level, its message, and its fields (a child's bindings included). */
export interface LogRecord {
  level: LogLevel;
  msg: string;
  [field: string]: unknown;
}

export interface RecordingLogger extends Logger {
  /** Every line so far, in order, children's included. */
  readonly records: LogRecord[];
  /** The lines whose message contains `text`. */
  lines(text: string): LogRecord[];
}

/** A logger that keeps every line it is given in {@link RecordingLogger.records} (shared with its children). */
export function recordingLogger(): RecordingLogger {
  const records: LogRecord[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (level: LogLevel) =>
      (fields: object | string, msg?: string): void => {
        if (typeof fields === 'string') records.push({ ...bindings, level, msg: fields });
        else records.push({ ...bindings, ...(fields as Record<string, unknown>), level, msg: msg ?? '' });
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return Object.assign(make({}), {
    records,
    lines: (text: string) => records.filter((r) => r.msg.includes(text)),
  });
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

const PINO_LEVELS: Record<number, LogLevel> = {
  10: 'debug',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'error',
};

/**
 * The log lines in a process's stderr: the JSON lines `createLogger` writes when stderr is not a terminal, with
 * pino's numeric levels named. Anything else on stderr (a command's own output) is skipped.
 */
export function logRecordsOf(stderr: string): LogRecord[] {
  const out: LogRecord[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof parsed.level !== 'number' || typeof parsed.msg !== 'string') continue;
    out.push({ ...parsed, level: PINO_LEVELS[parsed.level] ?? 'error', msg: parsed.msg });
  }
  return out;
}
