/**
 * The environment schema is the one list of variables: every variable the code reads is in it, every
 * variable in it is in README.md's table, and bad values are refused with the variable named.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV_VARS, envMarkdownTable, loadEnv } from '../../src/config/env';
import { temporalTarget } from '../../src/client/connection';
import { BadInputError } from '../../src/contracts/errors';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Variable names the code reads: `env.X`, `env['X']`, commander's `.env('X')`, policy-named defaults. */
function variablesReadIn(text: string): string[] {
  const patterns = [
    /\benv\??\.([A-Z][A-Z0-9_]+)\b/g,
    /\benv\[['"`]([A-Z][A-Z0-9_]+)['"`]\]/g,
    /\.env\(\s*['"`]([A-Z][A-Z0-9_]+)['"`]/g,
    /EnvVarName\.default\(\s*['"`]([A-Z][A-Z0-9_]+)['"`]/g,
  ];
  return patterns.flatMap((re) => [...text.matchAll(re)].map((m) => m[1] as string));
}

describe('the environment schema', () => {
  it('lists every variable read anywhere in src/', () => {
    const read = new Map<string, string>();
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      for (const name of variablesReadIn(readFileSync(file, 'utf8'))) read.set(name, file.slice(ROOT.length));
    }
    expect(read.size).toBeGreaterThan(15);
    const missing = [...read].filter(([name]) => !(name in ENV_VARS)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  it('README.md documents every variable of the schema, in the generated table', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const undocumented = Object.keys(ENV_VARS).filter((name) => !readme.includes(`| \`${name}\` |`));
    expect(undocumented).toEqual([]);
    expect(readme).toContain(envMarkdownTable());
  });

  it('reads unset and empty variables as unset, and converts types', () => {
    const env = loadEnv({
      TEMPORAL_TLS: 'TRUE',
      AGENT_JUDGE_APPROVERS: ' scott, discord:123 ,',
      TEMPORAL_LOG_LEVEL: 'debug',
      AGENT_JUDGE_POLICY: '',
    });
    expect(env.TEMPORAL_TLS).toBe(true);
    expect(env.AGENT_JUDGE_APPROVERS).toEqual(['scott', 'discord:123']);
    expect(env.TEMPORAL_LOG_LEVEL).toBe('DEBUG');
    expect(env.AGENT_JUDGE_POLICY).toBeUndefined();
    expect(loadEnv({ LOG_LEVEL: 'INFO', LOG_FORMAT: 'JSON' })).toMatchObject({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
  });

  it('refuses a bad value with the variable named', () => {
    expect(() => loadEnv({ LOG_LEVEL: 'loud' })).toThrow(BadInputError);
    expect(() => loadEnv({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL="loud"/);
    expect(() => loadEnv({ TEMPORAL_TLS: 'maybe' })).toThrow(/TEMPORAL_TLS="maybe"/);
    expect(() => loadEnv({ TEMPORAL_ADDRESS: 'no port here' })).toThrow(/TEMPORAL_ADDRESS=.*host:port/);
    expect(() => loadEnv({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT="xml"/);
  });
});

describe('temporalTarget (the SDK environment configuration)', () => {
  const none = { HOME: '/nonexistent-home', XDG_CONFIG_HOME: '/nonexistent-config' };

  it('defaults to localhost:7233, namespace default, no TLS', () => {
    const t = temporalTarget({}, none);
    expect(t).toMatchObject({ address: 'localhost:7233', namespace: 'default' });
    expect(t.tls).toBeUndefined();
    expect(t.apiKey).toBeUndefined();
  });

  it('reads the variables; explicit values win; an API key turns TLS on; empty means unset', () => {
    const t = temporalTarget(
      { namespace: 'flag-ns' },
      { ...none, TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'env-ns', TEMPORAL_API_KEY: 'k' },
    );
    expect(t).toMatchObject({ address: 'temporal.example:7233', namespace: 'flag-ns', apiKey: 'k', tls: true });
    expect(temporalTarget({}, { ...none, TEMPORAL_API_KEY: '' }).tls).toBeUndefined();
    expect(temporalTarget({}, { ...none, TEMPORAL_TLS: 'true' }).tls).toMatchObject({});
  });

  it('reads a profile from the TOML config file named by TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'envconfig-'));
    const file = join(dir, 'temporal.toml');
    writeFileSync(
      file,
      '[profile.default]\naddress = "a.example:7233"\n\n' +
        '[profile.prod]\naddress = "prod.example:7233"\nnamespace = "prod"\n',
    );
    expect(temporalTarget({}, { ...none, TEMPORAL_CONFIG_FILE: file }).address).toBe('a.example:7233');
    expect(temporalTarget({}, { ...none, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' })).toMatchObject({
      address: 'prod.example:7233',
      namespace: 'prod',
    });
    expect(() => temporalTarget({}, { ...none, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' })).toThrow(
      /Temporal client configuration: Profile 'nope' not found/,
    );
  });

  it('refuses a bad TEMPORAL_TLS before connecting', () => {
    expect(() => temporalTarget({}, { ...none, TEMPORAL_TLS: 'sometimes' })).toThrow(/TEMPORAL_TLS="sometimes"/);
  });
});
