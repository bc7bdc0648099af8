/**
 * The Slack libraries' logger interface (@slack/logger) on top of agent-judge's (src/contracts/logger.ts), so their
 * lines land in agent-judge's log with its format and level. Their info lines are chatty (every socket reconnect): they
 * go to debug.
 */
import type { Logger as AgentJudgeLogger } from '../contracts/logger';
import type { Logger as SlackLogger, LogLevel } from '@slack/web-api';

function line(msg: unknown[]): string {
  return msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');
}

export function slackLogger(log: AgentJudgeLogger): SlackLogger {
  let level = 'info' as LogLevel;
  let name = 'slack';
  const child = () => log.child({ slack: name });
  return {
    debug: (...msg: unknown[]) => child().debug(line(msg)),
    info: (...msg: unknown[]) => child().debug(line(msg)),
    warn: (...msg: unknown[]) => child().warn(line(msg)),
    error: (...msg: unknown[]) => child().error(line(msg)),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: (n: string) => void (name = n),
  };
}
