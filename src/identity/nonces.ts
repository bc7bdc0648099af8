/**
 * Remembers the nonces of accepted signed statements until their signatures can no longer be
 * fresh, so a captured statement is accepted once. Pure and deterministic (workflow code uses it).
 * Entries expire in the order they were recorded: callers record with `now + constant`, and
 * workflow time never goes back.
 */

/** One remembered nonce: who signed it (an AMID or a key), the nonce, and until when (epoch ms). */
export type NonceEntry = [owner: string, nonce: string, expiresAt: number];

export class NonceLedger {
  /** `${owner} ${nonce}` -> expiry. A Map, so no id can reach an Object prototype key. */
  private readonly expiries = new Map<string, number>();
  private queue: string[] = [];
  private head = 0;
  private readonly perOwner = new Map<string, number>();

  /** True while `nonce` by `owner` is remembered and unexpired at `now` (read-only). */
  isUsed(owner: string, nonce: string, now: number): boolean {
    const expiry = this.expiries.get(`${owner} ${nonce}`);
    return expiry !== undefined && expiry > now;
  }

  /** Live nonces recorded for `owner` (a rate measure: they all fall within one expiry span). */
  countFor(owner: string): number {
    return this.perOwner.get(owner) ?? 0;
  }

  /** Live nonces held in total. */
  get size(): number {
    return this.expiries.size;
  }

  record(owner: string, nonce: string, expiresAt: number): void {
    const key = `${owner} ${nonce}`;
    if (this.expiries.has(key)) return;
    this.expiries.set(key, expiresAt);
    this.queue.push(key);
    this.perOwner.set(owner, this.countFor(owner) + 1);
  }

  /** Forgets every nonce expired at `now`. */
  prune(now: number): void {
    while (this.head < this.queue.length) {
      const key = this.queue[this.head] as string;
      const expiry = this.expiries.get(key);
      if (expiry !== undefined && expiry > now) break;
      if (expiry !== undefined) {
        this.expiries.delete(key);
        const owner = key.slice(0, key.indexOf(' '));
        const left = this.countFor(owner) - 1;
        if (left <= 0) this.perOwner.delete(owner);
        else this.perOwner.set(owner, left);
      }
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Live entries in recording order, for a continue-as-new handover. */
  entries(): NonceEntry[] {
    const out: NonceEntry[] = [];
    for (let i = this.head; i < this.queue.length; i++) {
      const key = this.queue[i] as string;
      const expiry = this.expiries.get(key);
      if (expiry === undefined) continue;
      const sep = key.indexOf(' ');
      out.push([key.slice(0, sep), key.slice(sep + 1), expiry]);
    }
    return out;
  }
}
