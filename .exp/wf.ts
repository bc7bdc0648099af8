import { defineQuery, defineUpdate, setHandler, condition, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { ed25519 } from '@noble/curves/ed25519.js';
export const u = defineUpdate<boolean, [{ mode: string; sig: string; msg: string; pub: string }]>('u');
const la = proxyLocalActivities<{ verify(a: { sig: string; msg: string; pub: string }): Promise<boolean> }>({ startToCloseTimeout: '5s' });
import { hexToBytes } from '@noble/hashes/utils.js';
const b64 = (s: string) => hexToBytes(s);
export const q = defineQuery<number>('q');
export async function exp(): Promise<number> {
  let n = 0;
  setHandler(q, () => n);
  setHandler(u, async (a) => {
    n++;
    if (a.mode === 'noble') return ed25519.verify(b64(a.sig), new TextEncoder().encode(a.msg), b64(a.pub));
    if (a.mode === 'la') return la.verify(a);
    return true;
  });
  await condition(() => n >= 100000);
  return workflowInfo().historyLength;
}
