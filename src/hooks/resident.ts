/**
 * Starting the resident gate (src/hooks/gate-server.ts) the way `agent-judge dev` and `agent-judge gate` do: on the
 * policy's loopback address, for the agents its `spec.hooks.gate.agents` lists, or, when it lists none, for `@local`
 * with a token made once in the state folder (`hook-token`, mode 0600) that `agent-judge hook install` points the
 * hooks at.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';
import type { McpHttpAgent } from '../contracts/mcp';
import { newAgentToken, tokenSha256 } from '../gate/http-auth';
import { hooksAuditLogPath } from '../audit/mcp-log';
import { HookGateServer } from './gate-server';
import { ProjectRegistry } from './projects';

/** The agent whose calls the dev token stands for. */
export const LOCAL_AGENT = '@local';
/** The dev token's file name in the state folder. */
export const HOOK_TOKEN_FILE = 'hook-token';

/** The dev token in `stateDir` (made on first use, readable by its owner only). */
export function ensureHookToken(stateDir: string): { file: string; token: string } {
  const file = resolve(stateDir, HOOK_TOKEN_FILE);
  if (existsSync(file)) return { file, token: readFileSync(file, 'utf8').trim() };
  mkdirSync(stateDir, { recursive: true });
  const token = newAgentToken();
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { file, token };
}

/** `HOST:PORT` of the gate; loopback only (the hooks run on the agent's own machine). */
export function parseGateListen(value: string): { host: string; port: number } {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  const host = m ? m[1]!.replace(/^\[|\]$/g, '') : '';
  if (!m || port > 65535) throw new BadInputError(`spec.hooks.gate.listen: expected HOST:PORT, got ${value}`);
  if (!(host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host))) {
    throw new BadInputError(`spec.hooks.gate.listen: ${host} is not a loopback address; the gate serves this machine`);
  }
  return { host, port };
}

export interface ResidentGate {
  url: string;
  agents: string[];
  /** The dev token's file, when the gate runs with it. */
  tokenFile?: string;
  close(): Promise<void>;
}

export async function startResidentGate(o: {
  policy: CompliancePolicy;
  client: Client;
  taskQueue: string;
  stateDir: string;
  baseDir?: string;
  listen?: string;
  /**
   * The per-user state folder (src/config/user-state.ts): with the dev token, the gate registers hooked projects
   * there and accepts their tokens, each judged with its own project's roots.
   */
  userStateDir?: string;
  logger: Logger;
}): Promise<ResidentGate> {
  const { host, port } = parseGateListen(o.listen ?? o.policy.spec.hooks.gate.listen);
  let agents: McpHttpAgent[] = [...o.policy.spec.hooks.gate.agents];
  let tokenFile: string | undefined;
  if (agents.length === 0) {
    const dev = ensureHookToken(o.stateDir);
    tokenFile = dev.file;
    agents = [{ agent: LOCAL_AGENT, tokenSha256: tokenSha256(dev.token) }];
  }
  const server = new HookGateServer({
    host,
    port,
    policy: o.policy,
    agents,
    temporal: { client: o.client, taskQueue: o.taskQueue },
    baseDir: o.baseDir ?? process.cwd(),
    auditLog: hooksAuditLogPath(o.stateDir),
    logger: o.logger,
    ...(tokenFile && o.userStateDir
      ? {
          projects: {
            registry: new ProjectRegistry(o.userStateDir),
            agent: LOCAL_AGENT,
            stateDirs: [resolve(o.stateDir), resolve(o.userStateDir)],
          },
        }
      : {}),
  });
  const url = await server.start();
  return {
    url,
    agents: [...new Set(agents.map((a) => a.agent))],
    ...(tokenFile ? { tokenFile } : {}),
    close: () => server.close(),
  };
}
