/**
 * The simulation's one source of chance: sfc32 (Chris Doty-Humphrey's Small Fast Counting
 * generator), seeded from a 32-bit integer. Every draw of a run comes from one instance, so a run
 * is a pure function of its seed.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `stream` picks another sequence for the same seed (0: the run's own). */
  public constructor(seed: number, stream = 0) {
    this.a = (0x9e3779b9 ^ stream) >>> 0;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    // Mix the seed in before the first draw (the generator's authors advise a dozen rounds).
    for (let i = 0; i < 15; i += 1) this.next();
  }

  /** A uniform 32-bit unsigned integer. */
  public nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform number in [0, 1). */
  public next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** A uniform integer in [0, n). */
  public int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A uniform integer in [min, max]. */
  public between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  /** True with probability `p`. */
  public chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  public pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined && items.length === 0) throw new Error('pick from an empty list');
    return item as T;
  }

  /** The array in a shuffled order (a copy). */
  public shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i -= 1) {
      const j = this.int(i + 1);
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }

  /** A version-4-shaped UUID drawn from this generator (for code that asks `crypto.randomUUID`). */
  public uuid(): string {
    const hex = Array.from({ length: 4 }, () => this.nextUint32().toString(16).padStart(8, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}
