// Pod networks that enforce the worker pods' rendered egress NetworkPolicy, for the podman kubelet (opt-in:
// PodmanKubelet({ network: 'policy' })). Each pod gets a network namespace of its own on a podman bridge network of its
// own (a /29 of 10.89.0.0/16; its pod IP .2, the host .1), so its loopback is its own and traffic to anything else,
// another pod included, is routed through the host. There, as a CNI's policy engine does, one rule per pod enforces
// `grove-sandbox-egress` (k8s/manifests.ts): no connection may be opened from the pod — not to the host (where the
// orchestrator listens), not to another pod, not to the internet — while connections opened to it (the orchestrator's)
// and their replies pass: `iptables -t mangle -I PREROUTING -s <pod IP> -m conntrack --ctstate NEW -j DROP`
// (mangle, ahead of netavark's own filter rules; DROP, as Calico's default action for denied traffic). That is the
// "deny" network; "internet" (public addresses allowed) is not simulated: the host has no route out anyway.
// Every network and rule is labelled/commented with the kubelet's run; those of a run whose process is gone are removed
// by the next kubelet (sweepStaleNetworks).
import { spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';

const PODMAN = '/usr/bin/podman';
const IPTABLES = '/usr/sbin/iptables';
const LABEL = 'grove.sim';

export interface PodNetwork {
  name: string;
  subnet: string;
  /** The pod's address on it. */
  ip: string;
  /** The host's address on it (where a process listening on the host's 0.0.0.0 answers the pod, if allowed). */
  gateway: string;
}

export class PolicyNetworks {
  private n = 0;
  private readonly base = randomInt(0, 4000);

  constructor(private readonly run: string) {}

  /** A pod's network and its egress rule. */
  async create(pod: string): Promise<PodNetwork> {
    const i = (this.base + this.n++) % 8192;
    const prefix = `10.89.${i >> 5}.${(i & 31) << 3}`;
    const [a, b, c, d] = prefix.split('.').map(Number) as [number, number, number, number];
    const net: PodNetwork = { name: `grove-sim-${this.run}-${i}`.slice(0, 60), subnet: `${prefix}/29`, ip: `${a}.${b}.${c}.${d + 2}`, gateway: `${a}.${b}.${c}.${d + 1}` };
    const made = await run(PODMAN, ['network', 'create', '--disable-dns', `--subnet=${net.subnet}`, `--gateway=${net.gateway}`, `--label=${LABEL}=${this.run}`, `--label=${LABEL}.pid=${process.pid}`, `--label=${LABEL}.pod=${pod}`, net.name]);
    if (made !== 0) throw new Error(`podman network create ${net.name} failed (${made})`);
    if ((await run(IPTABLES, ['-t', 'mangle', '-I', 'PREROUTING', ...rule(net.ip, this.run)])) !== 0) {
      await run(PODMAN, ['network', 'rm', '-f', net.name]);
      throw new Error(`the egress rule of ${net.name} could not be installed`);
    }
    return net;
  }

  /** Removes a pod's network and rule (its containers are gone). */
  async remove(net: PodNetwork): Promise<void> {
    await run(IPTABLES, ['-t', 'mangle', '-D', 'PREROUTING', ...rule(net.ip, this.run)]);
    // (netavark can refuse while a container of it is still being torn down: once more)
    if ((await run(PODMAN, ['network', 'rm', '-f', net.name])) !== 0) await run(PODMAN, ['network', 'rm', '-f', net.name]);
  }
}

function rule(podIp: string, run: string): string[] {
  return ['-s', `${podIp}/32`, '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', `${LABEL}:${run}`, '-j', 'DROP'];
}

/** Removes the networks and rules of kubelet runs whose process is gone. */
export function sweepStaleNetworks(alive: (pid: number) => boolean): void {
  const nets = spawnSync(PODMAN, ['network', 'ls', '--filter', `label=${LABEL}`, '--format', `{{.Name}} {{index .Labels "${LABEL}.pid"}}`], { encoding: 'utf8' });
  const stale = (nets.stdout ?? '').split('\n').map((l) => l.trim().split(' ')).filter(([n, pid]) => n && !alive(Number(pid))).map(([n]) => n!);
  for (const n of stale) spawnSync(PODMAN, ['network', 'rm', '-f', n], { stdio: 'ignore' });
  const rules = spawnSync(IPTABLES, ['-t', 'mangle', '-S', 'PREROUTING'], { encoding: 'utf8' });
  for (const line of (rules.stdout ?? '').split('\n')) {
    const pid = Number(new RegExp(`--comment "?${LABEL.replace('.', '\\.')}:run-(\\d+)-`).exec(line)?.[1]);
    if (!pid || alive(pid) || !line.startsWith('-A PREROUTING ')) continue;
    const args = line.slice('-A PREROUTING '.length).match(/"[^"]*"|\S+/g)!.map((a) => a.replace(/^"|"$/g, ''));
    spawnSync(IPTABLES, ['-t', 'mangle', '-D', 'PREROUTING', ...args], { stdio: 'ignore' });
  }
}

function run(cmd: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => spawn(cmd, args, { stdio: 'ignore' }).once('close', (code) => resolve(code)));
}
