/**
 * A small seeded random generator (xoshiro128**, seeded through splitmix32).
 *
 * Every random choice in the core library draws from an `Rng`, never from `Math.random`, so a run
 * reproduces from its seed. `fork()` derives an independent stream, which lets one part of a
 * program (say, renaming) consume randomness without shifting another (say, sampling).
 */
export class Rng {
  private s = new Uint32Array(4);

  constructor(seed: number) {
    let x = seed >>> 0;
    for (let i = 0; i < 4; i++) {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.s[i] = (z ^ (z >>> 16)) >>> 0;
    }
    if (this.s.every((v) => v === 0)) this.s[0] = 1;
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** A uniform float in [0, 1) with 32 bits of randomness. */
  float(): number {
    return this.nextU32() / 4294967296;
  }

  /** A uniform integer in [0, n). */
  int(n: number): number {
    if (!(n > 0) || !Number.isInteger(n)) throw new RangeError(`Rng.int needs a positive integer, got ${n}`);
    return Math.floor(this.float() * n);
  }

  /** One element of a non-empty array, uniformly. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.choice on an empty array');
    return items[this.int(items.length)];
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  /** A new generator seeded from this one: an independent stream. */
  fork(): Rng {
    return new Rng(this.nextU32());
  }

  /** The generator's state, to save and restore (for resuming a run exactly). */
  getState(): number[] {
    return Array.from(this.s);
  }

  setState(state: readonly number[]): void {
    if (state.length !== 4) throw new RangeError('Rng state has 4 words');
    for (let i = 0; i < 4; i++) this.s[i] = state[i] >>> 0;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
