// Shell sandboxes for the SWE runner through Grove's REST API (any backend: embedded, remote, Kubernetes).
import type { GroveClient } from '../../client/index.ts';
import type { ExecInput, ExecResult } from '../../protocol/shell.ts';
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

async function json<T>(client: GroveClient, method: 'POST', path: string, body: unknown, extraTimeoutMs = 0): Promise<T> {
  const res = await client.request(method, path, body, extraTimeoutMs);
  return JSON.parse(await res.text()) as T;
}

/** Shell sandboxes created through a GroveClient (network blocked by default: SWE work needs none). */
export function clientShellProvider(client: GroveClient, opts: { block_network?: boolean; image?: string } = {}): ShellProvider {
  return {
    async open(labels) {
      const info = await client.createAndWait({ type: 'shell', block_network: opts.block_network ?? true, ...(opts.image ? { image: opts.image } : {}), labels } as never, 120);
      const id = encodeURIComponent(info.sandbox_id);
      const shell: ShellTarget = {
        exec: (req: ExecInput) => json<ExecResult>(client, 'POST', `/sandboxes/${id}/exec`, req, (req.timeout_s ?? 0) * 1000),
        upload: (file) => json(client, 'POST', `/sandboxes/${id}/files`, { encoding: 'base64', ...file }),
      };
      return { id: info.sandbox_id, shell, close: () => client.deleteSandbox(info.sandbox_id).catch(() => undefined) };
    },
  };
}
