/**
 * The command hook (`agent-judge hook claude-code | codex | gemini`, or `agent-judge-hook <runtime>`): one process per
 * tool call, so it loads nothing but Node's own `http` and `fs`. It forwards the runtime's hook input (stdin) to the
 * resident gate on loopback and hands back the gate's answer (stdout and exit code) in the runtime's own format.
 * When the gate cannot be reached or answers something unreadable, a pre-tool call is blocked (exit 2 with the
 * reason on stderr: the blocking code of all three runtimes); a post-tool report that cannot be delivered only warns
 * (exit 1), since the tool already ran. Never imports the rest of agent-judge: start-up is the point.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';

const RUNTIMES = ['claude-code', 'codex', 'gemini'];
/** The largest hook input forwarded. */
const MAX_INPUT = 4 * 1024 * 1024;
/** Default gate address (the policy's `spec.hooks.gate.listen` default). */
export const DEFAULT_GATE_URL = 'http://127.0.0.1:8766';

interface ClientArgs {
  runtime: string;
  url: string;
  tokenFile: string;
  deferWhenHeld: boolean;
  timeoutMs: number;
}

function parseArgs(argv: readonly string[]): ClientArgs | string {
  const [runtime, ...rest] = argv;
  if (!runtime || !RUNTIMES.includes(runtime)) return `expected a runtime (${RUNTIMES.join(', ')}), got ${runtime}`;
  const args: ClientArgs = {
    runtime,
    url: DEFAULT_GATE_URL,
    tokenFile: resolve('.agent-judge', 'hook-token'),
    deferWhenHeld: false,
    timeoutMs: 55_000,
  };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    const value = rest[i + 1];
    if (flag === '--defer-when-held') {
      args.deferWhenHeld = true;
      continue;
    }
    if (value === undefined) return `option ${flag} needs a value`;
    if (flag === '--url') args.url = value;
    else if (flag === '--token-file') args.tokenFile = value;
    else if (flag === '--timeout-ms' && /^\d+$/.test(value)) args.timeoutMs = Number(value);
    else return `unknown or incomplete option ${flag}`;
    i++;
  }
  return args;
}

function readStdin(): Promise<Buffer> {
  return new Promise((resolveInput, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_INPUT) reject(new Error(`the hook input is larger than ${MAX_INPUT} bytes`));
      else chunks.push(c);
    });
    process.stdin.on('end', () => resolveInput(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
}

/** Whether the input is a post-tool event (its failure to be delivered must not block: the tool already ran). */
function isPostEvent(input: Buffer): boolean {
  const m = /"hook_event_name"\s*:\s*"([A-Za-z]+)"/.exec(input.subarray(0, 4096).toString('utf8'));
  return m !== null && /^(PostToolUse|PostToolUseFailure|AfterTool)$/.test(m[1]!);
}

interface GateResponse {
  status: number;
  exitCode: string | undefined;
  body: string;
}

function post(args: ClientArgs, token: string, body: Buffer): Promise<GateResponse> {
  const target = new URL(`/hooks/${args.runtime}${args.deferWhenHeld ? '?defer=1' : ''}`, args.url);
  return new Promise((resolveResponse, reject) => {
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.length),
          authorization: `Bearer ${token}`,
        },
        timeout: args.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolveResponse({
            status: res.statusCode ?? 0,
            exitCode: res.headers['x-agent-judge-exit-code'] as string | undefined,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${args.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs the command hook; resolves to the exit code (output already written). */
export async function runHookClient(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`agent-judge hook: ${args}; the call was not allowed\n`);
    return 2;
  }
  let input: Buffer = Buffer.alloc(0);
  const fail = (why: string): number => {
    if (isPostEvent(input)) {
      process.stderr.write(`agent-judge: the outcome was not recorded: ${why}\n`);
      return 1;
    }
    process.stderr.write(`agent-judge: ${why}; the call was not allowed\n`);
    return 2;
  };
  try {
    input = await readStdin();
  } catch (err) {
    return fail((err as Error).message);
  }
  let token: string;
  try {
    token = readFileSync(args.tokenFile, 'utf8').trim();
  } catch (err) {
    return fail(`cannot read the gate token ${args.tokenFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let res: GateResponse;
  try {
    res = await post(args, token, input);
  } catch (err) {
    return fail(
      `the agent-judge gate at ${args.url} cannot be reached (${(err as Error).message}); ` +
        'start it with `agent-judge dev` or `agent-judge gate`',
    );
  }
  if (res.status === 200 && res.exitCode === '0') {
    // Nothing to say is an empty object: print nothing (Codex reads any JSON it does not know as a failed hook).
    if (res.body.trim() !== '{}') process.stdout.write(res.body);
    return 0;
  }
  if (res.status === 422 && res.exitCode === '2') {
    process.stderr.write(`${res.body.trim()}\n`);
    return 2;
  }
  return fail(`the gate answered HTTP ${res.status}: ${res.body.trim().slice(0, 500)}`);
}
