// Worker tokens: an HMAC of the pod name under a secret every orchestrator replica holds (a Kubernetes Secret).
// The worker gets its token in its pod's environment; any replica can compute it from the pod name alone, so no
// token is stored in an annotation or a database. With one pod per sandbox, the token is per sandbox.
import { createHmac, randomBytes } from 'node:crypto';

export function workerToken(secret: string, podName: string): string {
  return 'gwt_' + createHmac('sha256', secret).update(podName).digest('base64url');
}

/** A DNS-1123 pod name: grove-<template>-<10 random hex>. */
export function newPodName(template: string): string {
  return `grove-${template}-${randomBytes(5).toString('hex')}`;
}
