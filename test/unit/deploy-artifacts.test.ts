/**
 * The deployment artifacts (Dockerfile, docker-compose.temporal.yml, deploy/helm/agent-judge/), checked offline: no
 * Docker engine and no helm binary run here (docs/deploy.md). What can be checked without them is: every service and
 * pod runs a command and roles this CLI really accepts, the judge gets no executor credentials and no route to the
 * executor's network, and no deprecated image is left.
 */
import { readdirSync, readFileSync } from 'node:fs';
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
    // The file is a Go template (sprig's `default`); rendered here as the server renders it with no variables set.
    const rendered = read('deploy/temporal/agent-judge.yaml')
      .replace(/\{\{ env "[A-Z_]+" \| default "([^"]*)" \}\}/g, '$1')
      .replace(/\{\{ env "([A-Z_]+)" \}\}/g, '$1');
    expect(rendered).not.toContain('{{');
    const config = parseYaml(rendered) as {
      persistence: { numHistoryShards: number; datastores: Record<string, { sql: { pluginName: string } }> };
      archival: { history: { state: string } };
      services: { frontend: { rpc: { grpcPort: number } } };
    };
    expect(Object.values(config.persistence.datastores).map((d) => d.sql.pluginName)).toEqual([
      'postgres12',
      'postgres12',
    ]);
    expect(config.archival.history.state).toBe('disabled');
    // Every port at its default is the layout the compose file exposes.
    expect(config.services.frontend.rpc.grpcPort).toBe(7233);
    expect(config.persistence.numHistoryShards).toBe(512);
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

describe('the Helm chart (deploy/helm/agent-judge)', () => {
  const chartDir = 'deploy/helm/agent-judge';
  const chart = parseYaml(read(`${chartDir}/Chart.yaml`)) as { apiVersion: string; name: string; version: string };
  const values = parseYaml(read(`${chartDir}/values.yaml`)) as Record<string, unknown>;
  const templates = Object.fromEntries(
    readdirSync(join(root, chartDir, 'templates')).map((f) => [f, read(`${chartDir}/templates/${f}`)]),
  );
  const all = Object.values(templates).join('\n');
  /** The text of one named template in _helpers.tpl or elsewhere. */
  const defined = (name: string) => {
    const start = all.indexOf(`{{- define "${name}" -}}`);
    return start < 0 ? '' : all.slice(start, all.indexOf('{{- end -}}\n', start));
  };

  it('is a v2 chart named agent-judge, with the CRD and the default policy', () => {
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'agent-judge' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(read(`${chartDir}/crds/compliancepolicy.yaml`)).toContain('kind: CustomResourceDefinition');
    expect(read(`${chartDir}/files/policy.yaml`), `cp policies/default.yaml ${chartDir}/files/policy.yaml`).toBe(
      read('policies/default.yaml'),
    );
  });

  it('refers only to values that values.yaml defines', () => {
    const paths = [...new Set([...all.matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g)].map((m) => m[1]!.slice(1)))];
    expect(paths.length).toBeGreaterThan(20);
    const missing = paths.filter((path) => {
      let node: unknown = values;
      for (const key of path.split('.')) {
        if (!node || typeof node !== 'object' || !(key in node)) return true;
        node = (node as Record<string, unknown>)[key];
      }
      return false;
    });
    expect(missing).toEqual([]);
  });

  it('runs each role with a command the CLI accepts', async () => {
    const commands = [...all.matchAll(/^\s*args: (\[.*\])$/gm)].map(
      (m) => JSON.parse(m[1]!.replace(/\{\{ \.Values\.metrics\.port \}\}/g, '9464')) as string[],
    );
    const roles = commands.filter((c) => c[0] === 'worker').map((c) => c[c.indexOf('--role') + 1]);
    expect(roles.sort()).toEqual([...WORKER_ROLES].sort());
    expect(commands.map((c) => c[0])).toContain('discord');
    for (const command of commands) expect(await cliProblems(command)).toEqual([]);
  });

  it('gives the judge container no executor credentials, and the sidecar the same container', () => {
    const judge = defined('agent-judge.judgeContainer');
    expect(judge).toContain('"--role", "judge"');
    for (const name of NOT_FOR_THE_JUDGE) expect(judge).not.toContain(name);
    expect(judge).not.toContain('secrets.workers');
    expect(templates['deployment-judge.yaml']).toContain('include "agent-judge.judgeContainer"');
    expect(templates['judge-sidecar.yaml']).toContain('include "agent-judge.judgeContainer"');
    expect(defined('agent-judge.podCommon')).toContain('automountServiceAccountToken: false');
  });

  it('lets the judge reach DNS, Temporal and the model only, and nothing reach the executor but the scraper', () => {
    const policies = templates['networkpolicies.yaml']!;
    expect(policies).toMatch(/-default-deny[\s\S]*policyTypes: \[Ingress, Egress\]/);
    const section = (role: string) => {
      const start = policies.indexOf(`name: {{ include "agent-judge.fullname" . }}-${role}\n`);
      return policies.slice(start, policies.indexOf('---', start));
    };
    const judge = section('judge');
    expect([...judge.matchAll(/toYaml \.Values\.([a-z.]+)/g)].map((m) => m[1])).toEqual([
      'judge.model.peer',
      'judge.model.ports',
    ]);
    expect(judge).toContain('include "agent-judge.egressBase"');
    expect([...defined('agent-judge.egressBase').matchAll(/toYaml \.Values\.([a-z.]+)/g)].map((m) => m[1])).toEqual([
      'dns.peer',
      'temporal.peer',
    ]);
    const executor = section('executor');
    expect([...executor.matchAll(/^ {2}(ingress|egress):/gm)].map((m) => m[1])).toEqual(['ingress', 'egress']);
    expect(executor.slice(executor.indexOf('ingress:'), executor.indexOf('egress:'))).toContain(
      'include "agent-judge.metricsIngress"',
    );
  });
});
