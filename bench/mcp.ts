/**
 * The MCP proxy's relay overhead (issue 10): the same `read_text_file` call on @modelcontextprotocol/server-filesystem
 * through `agent-judge mcp` (a no-judge rule: relay + one hash-chained audit line, no workflow) against the same
 * server called directly, by the same SDK client in the same run, interleaved so both see the same machine load.
 * Target: under 2 ms added at p95.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { defaultPolicyWith } from '../src/policy/load';
import { summarize, type BenchServer, type Row } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const N = 300;
const WARMUP = 30;

async function connect(args: string[], cwd: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd, stderr: 'ignore' }));
  return client;
}

export async function benchMcp(server: BenchServer): Promise<Row[]> {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-mcp-'));
  try {
    writeFileSync(join(dir, 'file.txt'), 'x'.repeat(1024));
    const policy = defaultPolicyWith(
      { mcp: { server: 'fs', holdFor: '30s', performWithin: '10m', rules: [{ tool: 'read_*', tier: 'no-judge' }] } },
      { baseDir: dir },
    );
    const policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(policy));
    const upstream = [FS_SERVER, dir];
    const direct = await connect(upstream, dir);
    const proxied = await connect(
      [
        join(ROOT, 'bin/agent-judge.mjs'),
        'mcp',
        '--agent',
        '@bench',
        '--policy',
        policyFile,
        '--address',
        server.address,
        '--namespace',
        server.namespace,
        '--state-dir',
        join(dir, 'state'),
        '--',
        process.execPath,
        ...upstream,
      ],
      dir,
    );
    const args = { name: 'read_text_file', arguments: { path: join(dir, 'file.txt') } };
    const directMs: number[] = [];
    const proxiedMs: number[] = [];
    try {
      for (let i = 0; i < WARMUP + N; i++) {
        for (const [client, samples] of i % 2 === 0
          ? ([
              [direct, directMs],
              [proxied, proxiedMs],
            ] as const)
          : ([
              [proxied, proxiedMs],
              [direct, directMs],
            ] as const)) {
          const t0 = performance.now();
          await client.callTool(args);
          if (i >= WARMUP) samples.push(performance.now() - t0);
        }
      }
    } finally {
      await proxied.close();
      await direct.close();
    }
    const d = summarize('read_text_file, upstream directly', directMs);
    const p = summarize('read_text_file through agent-judge mcp (no-judge)', proxiedMs);
    const added = (p.p95 ?? 0) - (d.p95 ?? 0);
    return [
      d,
      {
        ...p,
        note: `+${added.toFixed(2)} ms at p95 (target < 2 ms: ${added < 2 ? 'met' : 'NOT met'})`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
