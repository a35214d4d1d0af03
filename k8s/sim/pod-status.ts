// The pod statuses a kubelet reports: a pod it started (Running and Ready with its IP), one it could not start
// (Unschedulable, ErrImagePull, stuck in ContainerCreating), and one whose worker exited on its own.
import { k8sTime, type Obj } from './wire.ts';

export type KubeletResult = { ip: string } | { fail: 'unschedulable' | 'image_pull' | 'never_ready' };

export interface Kubelet {
  /** Runs the pod: resolves with its IP, or a failure the pod's status reports. */
  start(pod: Obj): Promise<KubeletResult>;
  stop(pod: Obj): Promise<void>;
  /** Runs an ephemeral container added to a running pod (k8s/sim/ephemeral.ts): resolves once it runs, rejects when
   * it cannot start; `exited` is called when it ends. A kubelet without it leaves the container waiting. */
  startEphemeral?(pod: Obj, container: Obj, exited: (code: number) => void): Promise<void>;
}

/** The status update for a pod the kubelet started (or failed to). */
export function startedStatus(pod: Obj, r: KubeletResult): Obj {
  const now = k8sTime();
  const image = pod.spec.containers[0].image;
  if ('fail' in r) {
    if (r.fail === 'unschedulable') {
      return {
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.', lastTransitionTime: now }],
      };
    }
    const waiting = r.fail === 'image_pull' ? { reason: 'ErrImagePull', message: `failed to pull image "${image}": not found` } : { reason: 'ContainerCreating' };
    return {
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: now }],
      containerStatuses: [{ name: 'worker', image, imageID: '', ready: false, restartCount: 0, started: false, state: { waiting } }],
    };
  }
  return {
    phase: 'Running',
    podIP: r.ip,
    podIPs: [{ ip: r.ip }],
    hostIP: '127.0.0.1',
    startTime: now,
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      { type: 'Ready', status: 'True', lastTransitionTime: now },
    ],
    containerStatuses: [{ name: 'worker', image, imageID: `sha256:${'0'.repeat(64)}`, ready: true, restartCount: 0, started: true, state: { running: { startedAt: now } } }],
  };
}

/** The status update for a pod whose worker process exited on its own (killed). */
export function exitedStatus(pod: Obj, exitCode: number, signal: string | null): Obj {
  const t = k8sTime();
  const image = pod.spec.containers[0].image;
  return {
    phase: 'Failed',
    conditions: [{ type: 'Ready', status: 'False', reason: 'PodFailed', lastTransitionTime: t }],
    containerStatuses: [{ name: 'worker', image, imageID: '', ready: false, restartCount: 0, started: false, state: { terminated: { exitCode, reason: signal ? 'Error' : 'Completed', signal: undefined, finishedAt: t } } }],
  };
}
