// The cluster of the slow tests on real worker processes (mcp, openenv, relay): the simulated API server, a
// ProcessKubelet (real `grove worker` processes on per-pod loopback addresses: Chromium, bubblewrap, the Claw apps),
// one orchestrator (buildApp + the kubernetes backend, harness.ts) with browser sandboxes on shared worker pods and
// shell sandboxes on pods of their own, listening on loopback, and a test site of the test's own. close() leaves
// nothing behind: orchestrator, worker processes, site, temporary folder.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { ProcessKubelet } from '../../k8s/sim/kubelets.ts';
import { startOrchestrator, type Orchestrator } from './harness.ts';

export interface ProcessClusterOptions {
  replica: string;
  /** The first of the worker ports this file's pods may take (a random one of the next 1000). */
  workerPortBase: number;
  readyTimeoutSeconds: number;
  /** Grove config of the orchestrator (its data directory is the cluster's folder). */
  grove?: Record<string, unknown>;
  /** The test's site, served on 127.0.0.1 (`siteHost`). */
  site?: http.RequestListener;
}

export class ProcessCluster {
  readonly kubelet = new ProcessKubelet(process.env);
  readonly sim = new KubeSim(this.kubelet);
  /** The orchestrator's data directory (recordings under it). */
  readonly dir: string;
  orch!: Orchestrator;
  /** The orchestrator's http:// base URL. */
  url = '';
  siteHost = '';
  private site: http.Server | null = null;

  constructor(name: string) {
    this.kubelet.sim = this.sim;
    this.dir = mkdtempSync(path.join(os.tmpdir(), `grove-k8s-${name}-`));
  }

  async start(o: ProcessClusterOptions): Promise<void> {
    if (o.site) {
      const site = (this.site = http.createServer(o.site));
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
      this.siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
    }
    await this.sim.start();
    this.orch = await startOrchestrator(
      this.sim,
      {
        workerPort: o.workerPortBase + Math.floor(Math.random() * 1000),
        readyTimeoutSeconds: o.readyTimeoutSeconds,
        templates: {
          browser: { type: 'browser', placement: 'shared', maxPerWorker: 4, warmPool: 0 },
          shell: { type: 'shell', placement: 'pod', warmPool: 0 },
        },
      },
      o.replica,
      { dataDir: this.dir, ...o.grove },
    );
    this.url = await this.orch.app.listen({ host: '127.0.0.1', port: 0 });
  }

  async close(): Promise<void> {
    await this.orch?.close();
    await this.sim.close();
    this.kubelet.killAll();
    const site = this.site;
    if (site) await new Promise((r) => site.close(r));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
