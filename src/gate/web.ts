/**
 * Why a network read a coding agent asks for should not be approved by deny patterns alone: a fetch of a loopback,
 * link-local (cloud metadata at 169.254.169.254), private or otherwise IP-literal host reaches what the machine can
 * reach and the internet cannot (SSRF); another scheme than http(s) reads files or speaks other protocols; a long
 * encoded run in the URL or a query carries data out. Such a request is judged (`web_request_sensitive`) with the
 * reasons recorded. Addresses are read by the WHATWG URL parser (as fetchers do: `http://2130706433/`, `0x7f.1` and
 * `0177.0.0.1` all become 127.0.0.1) and Node's `net`, never by a regex over the host text. Pure: no DNS, no I/O.
 */
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';

/** The shortest run of one encoding that counts as carrying data (characters). */
export const ENCODED_RUN_MIN = 32;

/** Address ranges named in a reason: the first that holds an address names it. */
const RANGES: ReadonlyArray<{ name: string; family: 'ipv4' | 'ipv6'; net: string; prefix: number }> = [
  { name: 'unspecified', family: 'ipv4', net: '0.0.0.0', prefix: 8 },
  { name: 'loopback', family: 'ipv4', net: '127.0.0.0', prefix: 8 },
  { name: 'link-local (cloud metadata lives here)', family: 'ipv4', net: '169.254.0.0', prefix: 16 },
  { name: 'private', family: 'ipv4', net: '10.0.0.0', prefix: 8 },
  { name: 'private', family: 'ipv4', net: '172.16.0.0', prefix: 12 },
  { name: 'private', family: 'ipv4', net: '192.168.0.0', prefix: 16 },
  { name: 'shared (carrier-grade NAT)', family: 'ipv4', net: '100.64.0.0', prefix: 10 },
  { name: 'unspecified', family: 'ipv6', net: '::', prefix: 128 },
  { name: 'loopback', family: 'ipv6', net: '::1', prefix: 128 },
  { name: 'link-local', family: 'ipv6', net: 'fe80::', prefix: 10 },
  { name: 'private (unique local)', family: 'ipv6', net: 'fc00::', prefix: 7 },
];

const BLOCKS = RANGES.map((r) => {
  const list = new BlockList();
  list.addSubnet(r.net, r.prefix, r.family);
  return { name: r.name, list };
});

/** Names a local network uses that public DNS never answers for (RFC 6761, 6762, 8375; `metadata.google.internal`). */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain'];

/** What kind of address `ip` is, for a reason (`loopback`, `private`...), or `public`; IPv4-mapped IPv6 unwrapped. */
export function addressKind(ip: string): string {
  const v4 = isIPv4(ip) ? ip : mappedIPv4(ip);
  const [address, family] = v4 !== null ? [v4, 'ipv4' as const] : [ip, 'ipv6' as const];
  return BLOCKS.find((b) => b.list.check(address, family))?.name ?? 'public';
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:7f00:1`, `::ffff:127.0.0.1`) holds, or null. */
function mappedIPv4(ip: string): string | null {
  if (!isIPv6(ip)) return null;
  const m = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip);
  if (!m) return null;
  if (m[1] !== undefined) return m[1];
  const hi = parseInt(m[2]!, 16);
  const lo = parseInt(m[3]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** Why a request for `url` is judged rather than approved by patterns alone; empty when nothing stands out. */
export function urlConcerns(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return ['is not a URL the gate can read'];
  }
  const reasons: string[] = [];
  if (u.protocol !== 'http:' && u.protocol !== 'https:') reasons.push(`uses the scheme ${u.protocol}, not http(s)`);
  if (u.username !== '' || u.password !== '') reasons.push('carries a user name or password');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (host !== '') {
    const name = host.replace(/\.$/, '').toLowerCase();
    if (isIP(host) !== 0) {
      const kind = addressKind(host);
      reasons.push(
        kind === 'public' ? `names its host by the IP address ${host}` : `reaches a ${kind} address (${host})`,
      );
    } else if (name === 'localhost' || LOCAL_SUFFIXES.some((s) => name.endsWith(s))) {
      reasons.push(`reaches the local host or network name ${name}`);
    } else if (!name.includes('.')) {
      reasons.push(`reaches the single-label host ${name}, which only a local network resolves`);
    } else if (/(?:^|[.-])\d{1,3}[.-]\d{1,3}[.-]\d{1,3}[.-]\d{1,3}(?:[.-]|$)/.test(name)) {
      reasons.push(`names an IP address inside its host name (${name}), which may resolve to it`);
    }
    const label = name.split('.').find((l) => l.length >= ENCODED_RUN_MIN);
    if (label !== undefined) reasons.push(`has a host label of ${label.length} characters, room for encoded data`);
  }
  reasons.push(...encodedRuns(`${u.pathname}${u.search}${u.hash}`));
  return reasons;
}

/**
 * Why a text an agent sends out (a search query, Gemini's fetch prompt) is judged: a long encoded run, or a URL in it
 * with concerns of its own.
 */
export function textConcerns(text: string): string[] {
  const reasons = encodedRuns(text);
  for (const m of text.matchAll(/\b[a-z][a-z0-9+.-]{1,31}:\/\/[^\s"'<>`]+/gi)) {
    for (const r of urlConcerns(m[0])) reasons.push(`${m[0].slice(0, 200)} ${r}`);
  }
  return [...new Set(reasons)];
}

/**
 * Long runs of one encoding in `text`, as read and once percent-decoded: percent-escapes, hex digits, and base64
 * (or base64url) runs that mix upper case, lower case and digits, as encoded bytes do and words and slugs rarely do.
 */
export function encodedRuns(text: string): string[] {
  const reasons = new Set<string>();
  const percent = new RegExp(`(?:%[0-9A-Fa-f]{2}){${Math.ceil(ENCODED_RUN_MIN / 3)},}`);
  const hit = percent.exec(text);
  if (hit) reasons.add(`carries a run of ${hit[0].length} percent-encoded characters`);
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // Malformed escapes: the text as written is what is checked.
  }
  for (const t of decoded === text ? [text] : [text, decoded]) {
    const hex = new RegExp(`[0-9A-Fa-f]{${ENCODED_RUN_MIN},}`).exec(t);
    if (hex) reasons.add(`carries a run of ${hex[0].length} hex digits`);
    for (const m of t.matchAll(/[A-Za-z0-9+_-]+={0,2}/g)) {
      const run = m[0];
      if (run.length < ENCODED_RUN_MIN || /^[0-9A-Fa-f]+$/.test(run)) continue;
      if (/[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run)) {
        reasons.add(`carries a run of ${run.length} base64 characters`);
      }
    }
  }
  return [...reasons];
}
