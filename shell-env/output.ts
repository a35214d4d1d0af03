// A capped output buffer: keeps the first and last halves of `limit` bytes of a stream and counts the rest, so a
// command that prints gigabytes costs the server `limit` bytes. The text marks where bytes were dropped.

export class CappedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte the stream produced. */
  total = 0;

  constructor(private readonly limit: number) {}

  get truncated(): boolean {
    return this.total > this.limit;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headRoom = Math.ceil(this.limit / 2) - this.headBytes;
    if (headRoom > 0) {
      const part = chunk.subarray(0, headRoom);
      this.head.push(part);
      this.headBytes += part.length;
      chunk = chunk.subarray(part.length);
      if (chunk.length === 0) return;
    }
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    const keep = Math.floor(this.limit / 2);
    // Drop whole chunks from the front while the rest still holds `keep` bytes, then trim the first one.
    while (this.tailBytes - this.tail[0].length >= keep) this.tailBytes -= (this.tail.shift() as Buffer).length;
    if (this.tailBytes > keep) {
      this.tail[0] = this.tail[0].subarray(this.tailBytes - keep);
      this.tailBytes = keep;
    }
  }

  /** The kept bytes as UTF-8, with `[... N bytes truncated ...]` where the middle was dropped. */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    if (!this.truncated) return head + Buffer.concat(this.tail).toString('utf8');
    const dropped = this.total - this.headBytes - this.tailBytes;
    return `${head}\n[... ${dropped} bytes truncated ...]\n${Buffer.concat(this.tail).toString('utf8')}`;
  }

  /** The kept bytes (no marker), for binary consumers. */
  bytes(): Buffer {
    return Buffer.concat([...this.head, ...this.tail]);
  }
}
