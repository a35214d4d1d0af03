// SWE-bench's instance images from the user's registry (`--images swebench --namespace <registry>/<ns>`), as their
// run_instance flow does it: an image already stored is used, a missing one is pulled; a run whose images are not
// there (no such image, registry unreachable, credentials refused) is stopped before any sandbox, naming the image.
// podman does every registry operation with the user's own configuration: their auth file (REGISTRY_AUTH_FILE,
// $XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json: podman's order) and
// their registries.conf (an HTTP registry is an `insecure = true` entry for that address, nothing wider). Grove
// never turns TLS verification off itself. Names reach podman's argv only after they passed `isImageRef` (the
// reference grammar: no option, no path, no shell text).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Progress } from '../sandbox/progress.ts';
import { isImageRef } from '../shell-env/image-root.ts';

const run = promisify(execFile);
const PODMAN = '/usr/bin/podman';
/** One pull's time: SWE-bench's instance images are up to a few GB. */
export const PULL_BUDGET_MS = 3_600_000;
/** The up-front check of a run's images (one listing of the local storage, one tag listing per repository). */
export const CHECK_BUDGET_MS = 120_000;
/** Tag listings at once in the up-front check. */
const CHECK_PARALLEL = 4;

export type ImageProblem = 'invalid_image_name' | 'image_not_found' | 'registry_unreachable' | 'registry_unauthorized' | 'image_unavailable';

export class ImageUnavailableError extends Error {
  constructor(readonly code: ImageProblem, message: string) {
    super(message);
  }
}

/** What podman needs of this process's environment to find the user's credentials, registries.conf and proxy. */
const PASSED_ENV = ['HOME', 'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'REGISTRY_AUTH_FILE', 'DOCKER_CONFIG', 'CONTAINERS_REGISTRIES_CONF', 'CONTAINERS_CONF', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];

export function registryEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
  for (const k of PASSED_ENV) if (process.env[k]) env[k] = process.env[k]!;
  return env;
}

/**
 * The reference a registry operation uses: as docker (SWE-bench's harness) reads a name, one whose first component
 * is not a host (no `.` or `:`, not `localhost`) is on Docker Hub. podman would treat it as a short name instead.
 */
export function remoteRef(name: string): string {
  const first = name.split('/')[0];
  if (!name.includes('/')) return `docker.io/library/${name}`;
  return first.includes('.') || first.includes(':') || first === 'localhost' ? name : `docker.io/${name}`;
}

/** `repo:tag` → [repo, tag] (a digest reference keeps its digest as the "tag"). */
function splitRef(ref: string): [string, string] {
  const at = ref.indexOf('@');
  if (at > 0) return [ref.slice(0, at), ref.slice(at + 1)];
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, 'latest'];
}

/** A registry's or podman's error text → the problem it is. */
export function classify(text: string): ImageProblem {
  if (/manifest unknown|name unknown|not found|404/i.test(text)) return 'image_not_found';
  if (/unauthorized|authentication required|401|403|denied/i.test(text)) return 'registry_unauthorized';
  if (/pinging container registry|dial tcp|connection refused|no such host|i\/o timeout|timeout|TLS|x509|HTTP response to HTTPS/i.test(text)) return 'registry_unreachable';
  return 'image_unavailable';
}

const HINT: Record<ImageProblem, string> = {
  invalid_image_name: '',
  image_not_found: 'push it there, or check --namespace and --instance-image-tag',
  registry_unauthorized: "log in with `podman login <registry>` (or name an auth file in REGISTRY_AUTH_FILE)",
  registry_unreachable: 'check the address; a registry without TLS needs an `insecure = true` entry for that address in registries.conf',
  image_unavailable: '',
};

function problem(code: ImageProblem, image: string, detail: string): ImageUnavailableError {
  const last = detail.trim().split('\n').filter(Boolean).pop()?.replace(/^Error: /, '').slice(0, 400) ?? '';
  return new ImageUnavailableError(code, `${code}: image ${image}${last ? `: ${last}` : ''}${HINT[code] ? ` (${HINT[code]})` : ''}`);
}

async function podman(args: string[], progress: Progress): Promise<string> {
  const r = await run(PODMAN, args, { env: registryEnv(), maxBuffer: 64 * 1024 * 1024, signal: progress.signal });
  return r.stdout;
}

/** Names in podman's storage (as stored: `docker.io/x/y:tag`, `localhost/y:tag`, `host:port/x/y:tag`). */
async function storedNames(progress: Progress): Promise<Set<string>> {
  const rows = JSON.parse(await podman(['images', '--format', 'json'], progress)) as Array<{ Names?: string[] }>;
  return new Set(rows.flatMap((r) => r.Names ?? []));
}

function isStored(name: string, stored: Set<string>): boolean {
  return stored.has(name) || stored.has(remoteRef(name)) || stored.has(`localhost/${name}`);
}

/**
 * Checks, before a run starts, that each image is stored or in its registry (a tag listing per repository, no
 * layer moves). Returns one line per problem, each starting with its code and naming the image; an unreachable
 * or refusing registry is said once for all its images.
 */
export async function checkOfficialImages(names: string[], progress = Progress.after(CHECK_BUDGET_MS, 'the check of the instance images')): Promise<string[]> {
  const problems: string[] = [];
  const valid = [...new Set(names)].filter((n) => isImageRef(n) || !problems.push(`invalid_image_name: "${n.slice(0, 100)}" is not an image reference ([registry/]name[:tag])`));
  if (!valid.length) return problems;
  if (!existsSync(PODMAN)) return [...problems, `--images swebench needs podman (${PODMAN}) to pull and unpack the instance images: apt-get install podman runc`];
  const stored = await storedNames(progress);
  const byRepo = new Map<string, Array<{ name: string; tag: string }>>();
  for (const name of valid) {
    if (isStored(name, stored)) continue;
    const [repo, tag] = splitRef(remoteRef(name));
    byRepo.set(repo, [...(byRepo.get(repo) ?? []), { name, tag }]);
  }
  const failedRegistry = new Map<string, ImageProblem>();
  const queue = [...byRepo];
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      const [repo, wanted] = item;
      const registry = repo.split('/')[0];
      if (failedRegistry.has(registry)) continue;
      let tags: string[];
      try {
        const out = JSON.parse(await podman(['search', '--list-tags', '--limit', '10000', '--format', 'json', repo], progress)) as Array<{ Tags?: string[] }>;
        tags = out.flatMap((r) => r.Tags ?? []);
      } catch (err) {
        const text = (err as Error & { stderr?: string }).stderr || (err as Error).message;
        const code = progress.expired ? 'registry_unreachable' : classify(text);
        if (code === 'registry_unreachable' || code === 'registry_unauthorized') {
          if (!failedRegistry.has(registry)) problems.push(`${problem(code, wanted[0].name, text).message}${wanted.length > 1 || byRepo.size > 1 ? ` (and every other image of ${registry})` : ''}`);
          failedRegistry.set(registry, code);
        } else for (const w of wanted) problems.push(problem(code, w.name, text).message);
        continue;
      }
      // A digest reference cannot be checked by tags: the pull says.
      for (const w of wanted) if (!w.tag.startsWith('sha256:') && !tags.includes(w.tag)) problems.push(problem('image_not_found', w.name, `no tag ${w.tag} in ${repo} (tags: ${tags.slice(0, 5).join(', ') || 'none'})`).message);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CHECK_PARALLEL, queue.length) }, worker));
  return problems;
}

const inflight = new Map<string, Promise<boolean>>();

/**
 * The image in podman's storage, pulled from its registry when missing (true: pulled by this call or by the pull it
 * joined). Concurrent asks for one image share one pull.
 */
export function ensureOfficialImage(name: string, progress?: Progress): Promise<boolean> {
  // A dataset's `image` field reaches podman's argv: only a plain image reference does (never an option).
  if (!isImageRef(name)) return Promise.reject(new ImageUnavailableError('invalid_image_name', `invalid_image_name: "${name.slice(0, 100)}" is not an image reference ([registry/]name[:tag])`));
  if (!existsSync(PODMAN)) return Promise.reject(new ImageUnavailableError('image_unavailable', `--images swebench needs podman (${PODMAN}) to pull and unpack ${name}`));
  let p = inflight.get(name);
  if (!p) {
    const pr = progress ?? Progress.after(PULL_BUDGET_MS, `the pull of ${name}`);
    p = (async () => {
      if (isStored(name, await storedNames(pr))) return false;
      await podman(['pull', '--quiet', remoteRef(name)], pr).catch((err: Error & { stderr?: string }) => {
        const text = err.stderr || err.message;
        throw problem(pr.expired ? 'registry_unreachable' : classify(text), name, pr.expired ? `not pulled in time (${pr.what})` : text);
      });
      return true;
    })().finally(() => {
      inflight.delete(name);
      if (!progress) pr.done();
    });
    inflight.set(name, p);
  }
  return p;
}
