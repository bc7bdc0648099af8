/**
 * What `hook install` and `hook doctor` ask the running gate (src/hooks/gate-server.ts): who it is for a token
 * (`GET /hooks/whoami`) and to register a project (`POST /hooks/projects`), each failure said as what is wrong:
 * nothing listening, a gate that refuses the token, or another program on the port.
 */
import { readFileSync } from 'node:fs';
import { AgentJudgeError } from '../contracts/errors';

/** What the gate says about a token. */
export interface GateIdentity {
  service: string;
  version: string;
  agent: string;
  project: string | null;
  registers_projects: boolean;
}

const TIMEOUT_MS = 5000;

/** The token in `file`, or an error naming the file. */
export function readToken(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new AgentJudgeError(`cannot read the gate token ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

async function call(url: string, token: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, {
      ...init,
      headers: { ...(init.headers ?? {}), authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new AgentJudgeError(
      `nothing answers at ${new URL(url).origin} (${cause}): start agent-judge dev (any folder), then run this again`,
    );
  }
}

async function refused(res: Response, base: string, tokenFile: string): Promise<AgentJudgeError> {
  const body = (await res.text().catch(() => '')).trim().slice(0, 300);
  if (res.status === 401 && (res.headers.get('www-authenticate') ?? '').includes('agent-judge')) {
    return new AgentJudgeError(
      `the agent-judge gate at ${base} does not accept the token in ${tokenFile}: it belongs to another agent-judge ` +
        '(another dev holds the port, or this token is from an earlier start); start agent-judge dev again, or pass ' +
        '--url and --token-file of the gate you mean',
    );
  }
  if (res.status === 404 && !body.includes('agent-judge')) {
    return new AgentJudgeError(`${base} is not an agent-judge gate (HTTP 404): another program holds that port`);
  }
  return new AgentJudgeError(`the gate at ${base} answered HTTP ${res.status}: ${body}`);
}

/** Who the gate at `base` says the token in `tokenFile` is. */
export async function gateWhoami(base: string, tokenFile: string): Promise<GateIdentity> {
  const res = await call(`${base}/hooks/whoami`, readToken(tokenFile));
  if (!res.ok) throw await refused(res, base, tokenFile);
  const body = (await res.json().catch(() => null)) as GateIdentity | null;
  if (body?.service !== 'agent-judge gate') {
    throw new AgentJudgeError(`${base} answered, but not as an agent-judge gate: another program holds that port`);
  }
  return body;
}

/** Registers the project at `dir` with the gate (the dev token in `tokenFile`); its token file. */
export async function registerProject(
  base: string,
  tokenFile: string,
  dir: string,
): Promise<{ dir: string; token_file: string; created: boolean }> {
  const res = await call(`${base}/hooks/projects`, readToken(tokenFile), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dir }),
  });
  if (!res.ok) throw await refused(res, base, tokenFile);
  return (await res.json()) as { dir: string; token_file: string; created: boolean };
}
