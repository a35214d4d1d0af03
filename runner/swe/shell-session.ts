// Shell sandboxes for the SWE runner through Grove's REST API (any backend: embedded, remote, Kubernetes).
import type { GroveClient } from '../../client/index.ts';
import type { ShellTarget } from '../../swe-env/types.ts';

export interface ShellSession {
  id: string;
  shell: ShellTarget;
  close(): Promise<void>;
}

/** Opens shell sandboxes; one per episode and one per evaluation. */
export interface ShellProvider {
  open(labels: Record<string, string>): Promise<ShellSession>;
}

/** A shell sandbox of a Grove server as the SWE environment's ShellTarget: the client's own exec and upload. */
export function clientShellTarget(client: GroveClient, id: string): ShellTarget {
  return {
    exec: (req) => client.exec(id, req),
    upload: (path, data, mode) => client.uploadFile(id, path, data, mode),
  };
}

/** Shell sandboxes created through a GroveClient (network blocked by default: SWE work needs none). */
export function clientShellProvider(client: GroveClient, opts: { block_network?: boolean; image?: string } = {}): ShellProvider {
  return {
    async open(labels) {
      const info = await client.createAndWait({ type: 'shell', block_network: opts.block_network ?? true, ...(opts.image ? { image: opts.image } : {}), labels } as never, 120);
      return { id: info.sandbox_id, shell: clientShellTarget(client, info.sandbox_id), close: () => client.deleteSandbox(info.sandbox_id).catch(() => undefined) };
    },
  };
}

/** Runs `fn` with a freshly opened sandbox and always closes it. */
export async function withSession<T>(provider: ShellProvider, labels: Record<string, string>, fn: (s: ShellSession) => Promise<T>): Promise<T> {
  const session = await provider.open(labels);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
