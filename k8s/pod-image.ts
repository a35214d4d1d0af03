// A shell sandbox's `image` as its pod's image (SWE-bench's per-instance images on a cluster). The image need not
// contain Node or Grove: an init container from the worker image copies the worker runtime (node and the app) into
// an emptyDir, and the sandbox image's container runs `grove worker` from there — so commands run on the image's own
// file system; folders the sandbox must write to (SWE-bench's /testbed, root's in their images) are copied by the
// image itself into emptyDirs its non-root user owns. Only references the install allows (config `shellImages`: exact names, or prefixes ending in `*`)
// become pods; anything else a client sends is refused before a pod is made.
import type { V1PodSpec } from '@kubernetes/client-node';
import type { K8sConfig } from './config.ts';

/** An OCI image reference: [registry[:port]/]path[:tag][@sha256:digest], nothing else (no spaces, no options). */
const IMAGE_REF = /^(?:[a-z0-9]+(?:[.-][a-z0-9]+)*(?::[0-9]{1,5})?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/** Where the worker runtime is copied to and run from inside a sandbox-image pod. */
export const RUNTIME_DIR = '/opt/grove-runtime';
/** The worker image's layout (k8s/Dockerfile.worker): node and the app. */
const WORKER_NODE = '/usr/local/bin/node';
const WORKER_APP = '/opt/grove';

/** Why this image cannot be a sandbox pod's image on this install (null: it can). */
export function shellImageRefusal(cfg: Pick<K8sConfig, 'shellImages'>, image: string): string | null {
  if (image.length > 255 || !IMAGE_REF.test(image)) return `image "${image.slice(0, 80)}" is not an image reference ([registry/]name[:tag][@sha256:digest]).`;
  const allowed = cfg.shellImages.some((a) => (a.endsWith('*') ? image.startsWith(a.slice(0, -1)) : image === a));
  if (!allowed) {
    return cfg.shellImages.length === 0
      ? 'Shell sandbox images are not enabled on this install (kubernetes config shellImages lists the images sandbox pods may run).'
      : `image "${image}" is not one this install runs (kubernetes config shellImages).`;
  }
  return null;
}

/** The worker pod spec turned into one that runs the sandbox's image, the worker runtime copied in at start, and
 * the image's `owned` folders copied into emptyDirs of the pod's user (config shellImageOwnedPaths). */
export function withSandboxImage(spec: V1PodSpec, image: string, owned: readonly string[] = [], ownedSize = '4Gi'): V1PodSpec {
  const worker = spec.containers[0]!;
  const runtime = { name: 'grove-runtime', mountPath: RUNTIME_DIR };
  const copies = owned.map((p, i) => ({ path: p, volume: `grove-owned-${i}`, at: `/mnt/grove-owned-${i}` }));
  return {
    ...spec,
    initContainers: [
      {
        name: 'grove-runtime',
        image: worker.image,
        imagePullPolicy: worker.imagePullPolicy,
        command: ['/bin/cp', '-a', WORKER_NODE, WORKER_APP, `${RUNTIME_DIR}/`],
        resources: worker.resources,
        securityContext: worker.securityContext,
        volumeMounts: [runtime],
      },
      // The image's own folders, copied as the pod's user: the copy is its own (modes kept, owner the pod's user),
      // so git and the tests can write where the image's root-owned files were. Fails the pod on an unreadable file
      // rather than start a sandbox on half a repository.
      ...(copies.length
        ? [
            {
              name: 'grove-owned',
              image,
              imagePullPolicy: worker.imagePullPolicy,
              // Into a folder of the volume (its root is the kubelet's), mounted by subPath: /testbed itself is then
              // the pod user's, as git's ownership check wants.
              command: ['/bin/sh', '-c', 'while [ $# -gt 0 ]; do if [ -d "$1" ]; then cp -a "$1" "$2/d"; else mkdir "$2/d"; fi || exit 1; shift 2; done', 'sh', ...copies.flatMap((c) => [c.path, c.at])],
              resources: worker.resources,
              securityContext: worker.securityContext,
              volumeMounts: copies.map((c) => ({ name: c.volume, mountPath: c.at })),
            },
          ]
        : []),
    ],
    containers: [
      {
        ...worker,
        image,
        // The image's own entrypoint is not run: the worker is, from the copied runtime (no tini: node is PID 1 and
        // the pod's sandbox commands are its children, killed with their process groups).
        command: [`${RUNTIME_DIR}/node`, `${RUNTIME_DIR}/grove/bin/grove.mjs`],
        args: ['worker'],
        env: [...(worker.env ?? []), { name: 'HOME', value: '/tmp' }, { name: 'NODE_ENV', value: 'production' }],
        // The image's files are what the sandbox works on (a repository at /testbed, say): its writable layer is
        // the pod's own and goes with it.
        securityContext: { ...worker.securityContext, readOnlyRootFilesystem: false },
        volumeMounts: [...(worker.volumeMounts ?? []), { ...runtime, readOnly: true }, ...copies.map((c) => ({ name: c.volume, mountPath: c.path, subPath: 'd' }))],
      },
    ],
    volumes: [
      ...(spec.volumes ?? []),
      { name: 'grove-runtime', emptyDir: { sizeLimit: '1Gi' } },
      ...copies.map((c) => ({ name: c.volume, emptyDir: { sizeLimit: ownedSize } })),
    ],
  };
}
