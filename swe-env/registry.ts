// SWE-bench's instance images from the user's registry (`--images swebench --namespace <registry>/<ns>`), as their
// run_instance flow does it: an image already stored is used, a missing one is pulled; a run whose images are not
// there (no such image, registry unreachable, credentials refused) is stopped before any sandbox, naming the image.
// The up-front check asks the registry for each image's manifest by its exact reference (`skopeo inspect --raw`:
// one manifest GET, no layers; a tag or a digest alike), so a registry that lists no tags, or limits tag listings,
// is checked all the same. Without skopeo it falls back to podman's tag listing (digest references are then left
// to the pull), and a manifest answer it cannot read is checked against the tag listing before it is reported.
// podman and skopeo do every registry operation with the user's own configuration: their auth file
// (REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json:
// containers/image's order) and their registries.conf (an HTTP registry is an `insecure = true` entry for that
// address, nothing wider). Grove never turns TLS verification off itself. Names reach an argv only after they
// passed `isImageRef` (the reference grammar: no option, no path, no shell text; a digest is `@sha256:` + 64 hex).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Progress } from '../sandbox/progress.ts';
import { isImageRef } from '../shell-env/image-root.ts';

const run = promisify(execFile);
const PODMAN = '/usr/bin/podman';
const SKOPEO = '/usr/bin/skopeo';
/** One pull's time: SWE-bench's instance images are up to a few GB. */
export const PULL_BUDGET_MS = 3_600_000;
/** The up-front check of a run's images (one listing of the local storage, one manifest request per image). */
export const CHECK_BUDGET_MS = 120_000;
/** Registry requests at once in the up-front check. */
const CHECK_PARALLEL = 4;

export type ImageProblem = 'invalid_image_name' | 'image_not_found' | 'registry_unreachable' | 'registry_unauthorized' | 'registry_rate_limited' | 'image_unavailable';

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
  name = pinnedRef(name);
  const first = name.split('/')[0];
  if (!name.includes('/')) return `docker.io/library/${name}`;
  return first.includes('.') || first.includes(':') || first === 'localhost' ? name : `docker.io/${name}`;
}

/**
 * `repo:tag@sha256:…` → `repo@sha256:…`: a digest names one exact image and the tag beside it says nothing more (docker
 * reads it so); containers/image refuses references with both.
 */
export function pinnedRef(name: string): string {
  const at = name.indexOf('@');
  if (at < 0) return name;
  const repo = name.slice(0, at);
  const colon = repo.lastIndexOf(':');
  return colon > repo.lastIndexOf('/') ? `${repo.slice(0, colon)}${name.slice(at)}` : name;
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
  if (/toomanyrequests|too many requests|\b429\b|rate limit/i.test(text)) return 'registry_rate_limited';
  if (/manifest unknown|name unknown|not found|\b404\b/i.test(text)) return 'image_not_found';
  if (/unauthorized|authentication required|401|403|denied/i.test(text)) return 'registry_unauthorized';
  if (/pinging container registry|dial tcp|connection refused|no such host|i\/o timeout|timeout|TLS|x509|HTTP response to HTTPS/i.test(text)) return 'registry_unreachable';
  return 'image_unavailable';
}

const HINT: Record<ImageProblem, string> = {
  invalid_image_name: '',
  image_not_found: 'push it there, or check --namespace and --instance-image-tag',
  registry_unauthorized: "log in with `podman login <registry>` (or name an auth file in REGISTRY_AUTH_FILE); Docker Hub answers so for a repository it does not have, too",
  registry_unreachable: 'check the address; a registry without TLS needs an `insecure = true` entry for that address in registries.conf',
  registry_rate_limited: 'the registry limits requests: log in (`podman login`), or wait and run again',
  image_unavailable: '',
};

function problem(code: ImageProblem, image: string, detail: string): ImageUnavailableError {
  // skopeo says it through its logger: `time="…" level=fatal msg="…"`.
  const line = detail.trim().split('\n').filter(Boolean).pop() ?? '';
  const msg = /^time="[^"]*" level=\w+ msg="(.*)"$/.exec(line)?.[1].replaceAll('\\"', '"') ?? line;
  const last = msg.replace(/^Error: /, '').slice(0, 400);
  return new ImageUnavailableError(code, `${code}: image ${image}${last ? `: ${last}` : ''}${HINT[code] ? ` (${HINT[code]})` : ''}`);
}

async function podman(args: string[], progress: Progress): Promise<string> {
  const r = await run(PODMAN, args, { env: registryEnv(), maxBuffer: 64 * 1024 * 1024, signal: progress.signal });
  return r.stdout;
}

/** Names in podman's storage (as stored: `docker.io/x/y:tag`, `localhost/y:tag`, `host:port/x/y:tag`), and the
 * `repo@sha256:…` digests it knows them by (an image pulled by digest has no tag). */
async function storedNames(progress: Progress): Promise<Set<string>> {
  const rows = JSON.parse(await podman(['images', '--format', 'json'], progress)) as Array<{ Names?: string[]; RepoDigests?: string[] }>;
  return new Set(rows.flatMap((r) => [...(r.Names ?? []), ...(r.RepoDigests ?? [])]));
}

function isStored(name: string, stored: Set<string>): boolean {
  const ref = pinnedRef(name);
  return stored.has(ref) || stored.has(remoteRef(ref)) || stored.has(`localhost/${ref}`);
}

type Answer = { ok: true } | { ok: false; code: ImageProblem; text: string };

function failed(err: unknown, progress: Progress): Answer {
  const text = (err as Error & { stderr?: string }).stderr || (err as Error).message;
  return { ok: false, code: progress.expired ? 'registry_unreachable' : classify(text), text: progress.expired ? `no answer in time (${progress.what})` : text };
}

/** The registry's manifest of exactly this reference (tag or digest): one GET, no layers. */
async function manifestAnswer(ref: string, progress: Progress): Promise<Answer> {
  try {
    const env = registryEnv();
    // skopeo 1.9 reads no CONTAINERS_REGISTRIES_CONF (podman does): the user's file is named to it.
    const conf = env.CONTAINERS_REGISTRIES_CONF ? [`--registries-conf=${env.CONTAINERS_REGISTRIES_CONF}`] : [];
    await run(SKOPEO, [...conf, 'inspect', '--raw', `docker://${ref}`], { env, maxBuffer: 16 * 1024 * 1024, signal: progress.signal });
    return { ok: true };
  } catch (err) {
    return failed(err, progress);
  }
}

/** The fallback: the repository's tag listing has the tag (a digest cannot be read from it: the pull says). */
async function tagAnswer(ref: string, progress: Progress): Promise<Answer> {
  const [repo, tag] = splitRef(ref);
  if (tag.startsWith('sha256:')) return { ok: true };
  try {
    const out = JSON.parse(await podman(['search', '--list-tags', '--limit', '10000', '--format', 'json', repo], progress)) as Array<{ Tags?: string[] }>;
    const tags = out.flatMap((r) => r.Tags ?? []);
    return tags.includes(tag) ? { ok: true } : { ok: false, code: 'image_not_found', text: `no tag ${tag} in ${repo} (tags: ${tags.slice(0, 5).join(', ') || 'none'})` };
  } catch (err) {
    return failed(err, progress);
  }
}

/** Why a registry said no, for a person: a digest that is not there names the digest. */
function notFoundText(ref: string, text: string): string {
  const [repo, tag] = splitRef(ref);
  return tag.startsWith('sha256:') ? `${repo} has no image with the digest ${tag} (a digest pins one exact image: check it, or name the image by tag)` : text;
}

/**
 * Checks, before a run starts, that each image is stored or in its registry (its manifest asked for by exact
 * reference, no layer moves). Returns one line per problem, each starting with its code and naming the image; an
 * unreachable, refusing or limiting registry is said once for all its images.
 */
export async function checkOfficialImages(names: string[], given?: Progress): Promise<string[]> {
  const progress = given ?? Progress.after(CHECK_BUDGET_MS, 'the check of the instance images');
  try {
    return await checkImages(names, progress);
  } finally {
    if (!given) progress.done();
  }
}

async function checkImages(names: string[], progress: Progress): Promise<string[]> {
  const problems: string[] = [];
  const valid = [...new Set(names)].filter((n) => isImageRef(n) || !problems.push(`invalid_image_name: "${n.slice(0, 100)}" is not an image reference ([registry/]name[:tag][@sha256:digest])`));
  if (!valid.length) return problems;
  if (!existsSync(PODMAN)) return [...problems, `--images swebench needs podman (${PODMAN}) to pull and unpack the instance images: apt-get install podman runc`];
  const stored = await storedNames(progress);
  const queue = valid.filter((n) => !isStored(n, stored));
  const perRegistry = new Map<string, number>();
  for (const n of queue) perRegistry.set(remoteRef(n).split('/')[0], (perRegistry.get(remoteRef(n).split('/')[0]) ?? 0) + 1);
  const failedRegistry = new Set<string>();
  const skopeo = existsSync(SKOPEO);
  const worker = async () => {
    for (let name = queue.shift(); name; name = queue.shift()) {
      const ref = remoteRef(name);
      const registry = ref.split('/')[0];
      if (failedRegistry.has(registry)) continue;
      let answer = skopeo ? await manifestAnswer(ref, progress) : await tagAnswer(ref, progress);
      // A manifest answer that says nothing known (a proxy's 405, a 500): the tag listing decides.
      if (!answer.ok && answer.code === 'image_unavailable' && skopeo) answer = (await tagAnswer(ref, progress)).ok ? { ok: true } : answer;
      if (answer.ok) continue;
      if (answer.code === 'registry_unreachable' || answer.code === 'registry_unauthorized' || answer.code === 'registry_rate_limited') {
        if (failedRegistry.has(registry)) continue;
        failedRegistry.add(registry);
        problems.push(`${problem(answer.code, name, answer.text).message}${(perRegistry.get(registry) ?? 0) > 1 ? ` (and every other image of ${registry})` : ''}`);
      } else problems.push(problem(answer.code, name, answer.code === 'image_not_found' ? notFoundText(ref, answer.text) : answer.text).message);
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
  if (!isImageRef(name)) return Promise.reject(new ImageUnavailableError('invalid_image_name', `invalid_image_name: "${name.slice(0, 100)}" is not an image reference ([registry/]name[:tag][@sha256:digest])`));
  if (!existsSync(PODMAN)) return Promise.reject(new ImageUnavailableError('image_unavailable', `--images swebench needs podman (${PODMAN}) to pull and unpack ${name}`));
  let p = inflight.get(name);
  if (!p) {
    const pr = progress ?? Progress.after(PULL_BUDGET_MS, `the pull of ${name}`);
    p = (async () => {
      if (isStored(name, await storedNames(pr))) return false;
      await podman(['pull', '--quiet', remoteRef(name)], pr).catch((err: Error & { stderr?: string }) => {
        const text = err.stderr || err.message;
        const code = pr.expired ? 'registry_unreachable' : classify(text);
        throw problem(code, name, pr.expired ? `not pulled in time (${pr.what})` : code === 'image_not_found' ? notFoundText(remoteRef(name), text) : text);
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
