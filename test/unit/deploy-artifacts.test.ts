/**
 * The deployment artifacts (Dockerfile, docker-compose.temporal.yml, deploy/helm/agent-judge/), checked offline: no
 * Docker engine and no helm binary run here (docs/deploy.md). What can be checked without them is: every service and
 * pod runs a command and roles this CLI really accepts, the judge gets no executor credentials and no route to the
 * executor's network, and no deprecated image is left.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildProgram } from '../../src/cli/main';
import { WORKER_ROLES } from '../../src/worker';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Environment variables that carry an executor's, the signer's or the bot's secrets: never the judge's. */
const NOT_FOR_THE_JUDGE = [
  'AGENT_JUDGE_CAPABILITY_KEY',
  'AGENT_JUDGE_WEBHOOK_TOKEN',
  'FORGEJO_TOKEN',
  'DISCORD_TOKEN',
  'AGENT_JUDGE_DISCORD_KEY',
  'AGENT_JUDGE_CIRCLE_OPERATOR_KEY',
];

/** Why `args` (what follows `agent-judge`) would not start: an unknown command, option or role. */
async function cliProblems(args: readonly string[]): Promise<string[]> {
  const [name, ...rest] = args;
  if (!name) return ['no command'];
  const program = await buildProgram(['node', 'agent-judge', name]);
  const command = program.commands.find((c) => c.name() === name);
  if (!command) return [`unknown command ${name}`];
  const problems: string[] = [];
  const flags = new Set(command.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (!arg.startsWith('-')) continue;
    if (!flags.has(arg)) problems.push(`${name}: unknown option ${arg}`);
    if (arg === '--role')
      for (const role of (rest[i + 1] ?? '').split(','))
        if (!(WORKER_ROLES as readonly string[]).includes(role)) problems.push(`${name}: unknown role ${role}`);
  }
  return problems;
}

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  networks?: string[];
  secrets?: string[];
  volumes?: string[];
}
const compose = parseYaml(read('docker-compose.temporal.yml'), { merge: true }) as {
  services: Record<string, ComposeService>;
  networks: Record<string, { internal?: boolean } | null>;
};
const services = compose.services;
const agentJudge = Object.entries(services).filter(([, s]) => s.build !== undefined);
const roleOf = (s: ComposeService) => s.command?.[s.command.indexOf('--role') + 1];

describe('the CLI check this test relies on', () => {
  it('refuses what the CLI refuses', async () => {
    expect(await cliProblems(['worker', '--role', 'workflow,discord', '--metric', 'x'])).toEqual([
      'worker: unknown role discord',
      'worker: unknown option --metric',
    ]);
    expect(await cliProblems(['judge'])).toEqual(['unknown command judge']);
  });
});

describe('docker-compose.temporal.yml', () => {
  it('runs agent-judge as separate services, one per role, plus the Discord bot', () => {
    expect(agentJudge.map(([name]) => name).sort()).toEqual([
      'archive',
      'discord',
      'executor',
      'judge',
      'workflow-worker',
    ]);
    expect(agentJudge.filter(([, s]) => s.command?.[0] === 'worker').map(([, s]) => roleOf(s))).toEqual(
      expect.arrayContaining([...WORKER_ROLES]),
    );
  });

  it.each(agentJudge)('%s runs a command the CLI accepts', async (_name, service) => {
    expect(await cliProblems(service.command ?? [])).toEqual([]);
  });

  it('gives the judge no executor credentials and no network but the model and Temporal', () => {
    const judge = services.judge!;
    const executor = services.executor!;
    expect(Object.keys(judge.environment ?? {}).filter((k) => NOT_FOR_THE_JUDGE.includes(k))).toEqual([]);
    expect(judge.secrets ?? []).toEqual([]);
    expect(judge.volumes?.every((v) => v.endsWith(':ro'))).toBe(true);
    // Temporal's network is shared by every worker; nothing the executor reaches its targets through is.
    const targets = (executor.networks ?? []).filter((n) => n !== 'backend');
    expect(targets.length).toBeGreaterThan(0);
    expect(judge.networks?.filter((n) => targets.includes(n))).toEqual([]);
    for (const n of judge.networks ?? []) expect(compose.networks[n]?.internal, `network ${n}`).toBe(true);
    const onModel = Object.entries(services).filter(([, s]) => s.networks?.includes('model'));
    expect(onModel.map(([name]) => name).sort()).toEqual(['judge', 'model']);
  });

  it('keeps the signing key with the workflow worker only', () => {
    const holders = Object.entries(services).filter(
      ([, s]) => s.secrets?.includes('capability-key') || 'AGENT_JUDGE_CAPABILITY_KEY' in (s.environment ?? {}),
    );
    expect(holders.map(([name]) => name)).toEqual(['workflow-worker']);
  });

  it('uses temporalio/server and admin-tools, no auto-setup, and keeps closed workflows 2160h', () => {
    const images = Object.values(services).map((s) => s.image ?? '');
    expect(images.filter((i) => i.includes('auto-setup'))).toEqual([]);
    expect(services.temporal?.image).toMatch(/^temporalio\/server:/);
    expect(services['temporal-admin-tools']?.image).toMatch(/^temporalio\/admin-tools:/);
    const schemaJob = (services['temporal-admin-tools']?.command ?? []).join('\n');
    for (const step of ['create-database', 'setup-schema', 'update-schema', '--plugin postgres12'])
      expect(schemaJob).toContain(step);
    expect(schemaJob).toContain('visibility/versioned');
    expect((services['temporal-namespace']?.command ?? []).join(' ')).toContain('--retention 2160h default');
  });

  it('mounts the Temporal config the server is started with', () => {
    const temporal = services.temporal!;
    expect(temporal.entrypoint).toEqual(expect.arrayContaining(['--env', 'agent-judge']));
    const config = parseYaml(read('deploy/temporal/agent-judge.yaml')) as {
      persistence: { datastores: Record<string, { sql: { pluginName: string } }> };
      archival: { history: { state: string } };
    };
    expect(Object.values(config.persistence.datastores).map((d) => d.sql.pluginName)).toEqual([
      'postgres12',
      'postgres12',
    ]);
    expect(config.archival.history.state).toBe('disabled');
    for (const volume of temporal.volumes ?? []) expect(() => read(volume.split(':')[0]!)).not.toThrow();
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  it('builds in two stages from node:20-slim and runs as a non-root user', () => {
    expect(dockerfile.match(/^FROM node:20-slim/gm)).toHaveLength(2);
    expect(dockerfile).toContain('RUN node scripts/build.mjs');
    expect(dockerfile).toMatch(/npm ci --omit=dev .*--ignore-scripts/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toContain('ENTRYPOINT ["node", "bin/agent-judge.mjs"]');
    expect(dockerfile).toContain('CMD ["worker"]');
  });

  it('copies what the compiled package reads at run time', () => {
    for (const path of ['dist/', 'bin/', 'policies/', 'package.json'])
      expect(dockerfile, path).toMatch(new RegExp(`^COPY .*${path}`, 'm'));
    const ignored = read('.dockerignore').split('\n');
    for (const needed of ['src', 'scripts', 'bin', 'policies', 'package.json', 'package-lock.json'])
      expect(ignored).not.toContain(needed);
  });
});
