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
  /** `image`: the OCI image the sandbox runs on (an instance's environment); absent: the server's default. */
  open(labels: Record<string, string>, image?: string): Promise<ShellSession>;
}

/** A shell sandbox of a Grove server as the SWE environment's ShellTarget: the client's own exec and upload. */
export function clientShellTarget(client: GroveClient, id: string): ShellTarget {
  return {
    exec: (req) => client.exec(id, req),
    upload: (path, data, mode) => client.uploadFile(id, path, data, mode),
    uploadFile: (path, hostFile) => client.uploadFileStream(id, path, hostFile),
  };
}

/** Shell sandboxes created through a GroveClient (network blocked by default: SWE work needs none). */
export function clientShellProvider(client: GroveClient, opts: { block_network?: boolean; image?: string } = {}): ShellProvider {
  return {
    async open(labels, image) {
      const img = image ?? opts.image;
      // A first sandbox of an image waits for its unpacking (once per image on a host).
      const info = await client.createAndWait({ type: 'shell', block_network: opts.block_network ?? true, ...(img ? { image: img } : {}), labels } as never, 600);
      const close = () => client.deleteSandbox(info.sandbox_id).then(() => undefined, () => undefined);
      // An environment image that did not become the sandbox's root is an error, never a silent host fallback.
      const shell = (info as { shell?: { rootfs?: string; notes?: string[] } }).shell;
      if (img && shell && shell.rootfs !== 'image') {
        await close();
        throw new Error(`image ${img} is not available on the server: ${(shell.notes ?? []).join('; ')}`);
      }
      return { id: info.sandbox_id, shell: clientShellTarget(client, info.sandbox_id), close };
    },
  };
}

/** Runs `fn` with a freshly opened sandbox and always closes it. */
export async function withSession<T>(provider: ShellProvider, labels: Record<string, string>, fn: (s: ShellSession) => Promise<T>, image?: string): Promise<T> {
  const session = await provider.open(labels, image);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
