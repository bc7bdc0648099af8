import { fileURLToPath } from 'node:url';
import { generateKeyPairSync, sign, verify, createPublicKey } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Worker, NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { startDevServer } from '../src/devserver/server';
const srv = await startDevServer({ cliPath: findTemporalCli(), headless: true, readyTimeoutMs: 60000 });
const bundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./wf.ts', import.meta.url)) });
const worker = await Worker.create({ connection: await NativeConnection.connect({ address: srv.address }), taskQueue: 'x', workflowBundle: bundle, activities: {
  async verify(a: { sig: string; msg: string; pub: string }) {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(a.pub, 'hex').toString('base64url') }, format: 'jwk' });
    return verify(null, Buffer.from(a.msg), key, Buffer.from(a.sig, 'hex'));
  } } });
const run = worker.run();
const client = new Client({ connection: await Connection.connect({ address: srv.address }) });
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
const msg = 'knock knock';
const sig = sign(null, Buffer.from(msg), privateKey).toString('hex');
for (const mode of ['none', 'noble', 'la', 'none', 'noble', 'la']) {
  const h = await client.workflow.start('exp', { taskQueue: 'x', workflowId: 'w-' + mode + Math.random() });
  const lat: number[] = [];
  for (let i = 0; i < 200; i++) { const t = performance.now(); const r = await h.executeUpdate('u', { args: [{ mode, sig, msg, pub }] }); if (!r) throw new Error('bad'); lat.push(performance.now() - t); }
  lat.sort((a, b) => a - b);
  const ql: number[] = []; for (let i = 0; i < 100; i++) { const t = performance.now(); await h.query('q'); ql.push(performance.now() - t); } ql.sort((a,b)=>a-b); console.log('query p50', ql[50]!.toFixed(2), 'p95', ql[95]!.toFixed(2));
  const d = await h.describe();
  console.log(mode, 'p50', lat[100]!.toFixed(2), 'p95', lat[190]!.toFixed(2), 'hist', d.historyLength);
}
worker.shutdown(); await run; await srv.stop();
