// How a recording's files are written: whole files replaced atomically, frames synced.
import { randomBytes } from 'node:crypto';
import { open, rename } from 'node:fs/promises';

/** Writes `data` to `path` atomically: a reader sees the old file or the new one, never half of one. The temporary
 * name is unique per write (servers sharing a recordings volume may run as the same pid in their containers). */
export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

export async function writeFileSynced(path: string, data: string | Buffer, durable = true): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await fh.writeFile(data);
    if (durable) await fh.sync();
  } finally {
    await fh.close();
  }
}
