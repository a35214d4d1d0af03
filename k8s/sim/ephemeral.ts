// The `ephemeralcontainers` subresource of a pod (PATCH /api/v1/namespaces/{ns}/pods/{name}/ephemeralcontainers),
// as the real API server takes it: the body is a patch of the whole Pod (strategic merge: `spec.ephemeralContainers`
// merges by name, as `kubectl debug` sends it; JSON merge patch: the list given replaces the list; JSON patch: its
// operations), of which only `spec.ephemeralContainers` counts (the subresource's strategy keeps every other field).
// Validation as the server's: existing ephemeral containers may be neither removed nor changed; a new one needs a
// name unique in the pod and an image, and may not have ports, resources, probes or lifecycle hooks (422 Invalid).
import { applyPatch } from './patch.ts';
import { k8sTime, StatusError, type Obj } from './wire.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const FORBIDDEN = ['ports', 'resources', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'] as const;

/** The pod's ephemeral containers after the patch (validated); throws the Status the server would send. */
export function patchedEphemeralContainers(pod: Obj, contentType: string, patch: any): Obj[] {
  const before: Obj[] = pod.spec.ephemeralContainers ?? [];
  let after: Obj[];
  if (contentType === 'application/strategic-merge-patch+json') {
    const list = patch?.spec?.ephemeralContainers;
    if (list === undefined) return before;
    if (!Array.isArray(list)) throw invalid('spec.ephemeralContainers: must be a list');
    after = before.map((c) => structuredClone(c));
    for (const c of list as Obj[]) {
      if (!c || typeof c !== 'object' || typeof c.name !== 'string') throw invalid('spec.ephemeralContainers: Required value: name (the merge key)');
      if (Object.keys(c).some((k) => k.startsWith('$'))) throw invalid('spec.ephemeralContainers: patch directives are not supported here');
      const i = after.findIndex((e) => e.name === c.name);
      if (i >= 0) after[i] = applyPatch('application/merge-patch+json', after[i], c);
      else after.push(c);
    }
  } else {
    let next: Obj;
    try {
      next = applyPatch(contentType, pod, patch);
    } catch (err) {
      throw invalid(String(err));
    }
    after = next?.spec?.ephemeralContainers ?? [];
    if (!Array.isArray(after)) throw invalid('spec.ephemeralContainers: must be a list');
  }
  for (const old of before) {
    const now = after.find((c) => c.name === old.name);
    if (!now) throw invalid(`spec.ephemeralContainers: Forbidden: existing ephemeral containers "${old.name}" may not be removed`);
    if (JSON.stringify(now) !== JSON.stringify(old)) throw invalid(`spec.ephemeralContainers: Forbidden: existing ephemeral containers "${old.name}" may not be changed`);
  }
  const taken = new Set<string>([...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].map((c: Obj) => c.name));
  for (const [i, c] of after.entries()) {
    const at = `spec.ephemeralContainers[${i}]`;
    if (typeof c.name !== 'string' || !DNS_LABEL.test(c.name) || c.name.length > 63) throw invalid(`${at}.name: Invalid value: ${JSON.stringify(c.name)}: a lowercase RFC 1123 label`);
    if (taken.has(c.name)) throw invalid(`${at}.name: Duplicate value: ${JSON.stringify(c.name)}`);
    taken.add(c.name);
    if (typeof c.image !== 'string' || c.image === '') throw invalid(`${at}.image: Required value`);
    for (const k of FORBIDDEN) if (c[k] !== undefined) throw invalid(`${at}.${k}: Forbidden: cannot be set for an Ephemeral Container`);
  }
  return after;
}

function invalid(message: string): StatusError {
  return new StatusError(422, 'Invalid', `Pod is invalid: ${message}`);
}

/** The status entry of an ephemeral container: waiting (being created), running, or terminated with its code. */
export function ephemeralStatus(c: Obj, state: 'waiting' | 'running' | { exitCode: number }): Obj {
  const now = k8sTime();
  const s =
    state === 'waiting'
      ? { waiting: { reason: 'ContainerCreating' } }
      : state === 'running'
        ? { running: { startedAt: now } }
        : { terminated: { exitCode: state.exitCode, reason: state.exitCode === 0 ? 'Completed' : 'Error', finishedAt: now } };
  return { name: c.name, image: c.image, imageID: state === 'waiting' ? '' : `sha256:${'0'.repeat(64)}`, ready: false, restartCount: 0, state: s };
}
