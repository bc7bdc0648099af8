/**
 * The one logger interface (issue 22): every module that reports takes a {@link Logger} from its caller, and only the
 * top of a process (a CLI command, the worker start, `npm start`'s `dev`) makes one, in `src/cli/shared.ts`
 * (`createLogger`, pino). Tests pass a recorder (test/helpers/logger.ts).
 *
 * Structural rather than a re-export of pino's `Logger`: contracts stay free of pino (they are the zod-only
 * `agent-judge/contracts` entry point and import nothing else), a test or an embedder can implement the five methods,
 * and pino's `Logger` satisfies it as it is, so the instance `createLogger` makes is passed down unwrapped.
 */

/** One log line: structured fields then a message, or a message alone. */
export interface LogFn {
  (msg: string): void;
  (fields: object, msg?: string): void;
}

export interface Logger {
  debug: LogFn;
  info: LogFn;
  /** Something an operator should look at; the process goes on as designed (a refused session, a dropped message). */
  warn: LogFn;
  /** Something failed that the process was meant to do (an audit line or an outcome not recorded). */
  error: LogFn;
  /** A logger whose every line carries `bindings` too (a component, a session). */
  child(bindings: Record<string, unknown>): Logger;
}
