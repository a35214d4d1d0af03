// Offline validation of Kubernetes objects against the Kubernetes OpenAPI schema, through kubernetes-models
// (generated from the upstream OpenAPI document; each model's validate() runs its JSON-schema validator).
import { Status, WatchEvent } from '@kubernetes-models/apimachinery/apis/meta/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Lease, LeaseList } from 'kubernetes-models/coordination.k8s.io/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, PersistentVolumeClaimList, Pod, PodList, PodTemplate, Service, ServiceAccount } from 'kubernetes-models/v1';

type Model = { validate(): void };
const MODELS: Record<string, new (data: never) => Model> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/Pod': Pod,
  'v1/PodList': PodList,
  'v1/PodTemplate': PodTemplate,
  // The orchestrators' shared recordings volume (k8s config `recordings` with a size).
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/PersistentVolumeClaimList': PersistentVolumeClaimList,
  'v1/Status': Status,
  'apps/v1/Deployment': Deployment,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'coordination.k8s.io/v1/Lease': Lease,
  'coordination.k8s.io/v1/LeaseList': LeaseList,
};

/** Throws (with the validator's message) unless obj is a valid object of a kind we know. */
export function validateK8sObject(obj: unknown): void {
  const o = obj as { apiVersion?: string; kind?: string };
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!Model) throw new Error(`no schema known for ${o.apiVersion}/${o.kind}`);
  new Model(structuredClone(obj) as never).validate();
}

/** A watch event line: the WatchEvent envelope, and its object as what it says it is. */
export function validateWatchEvent(ev: unknown): void {
  new WatchEvent(structuredClone(ev) as never).validate();
  validateK8sObject((ev as { object: unknown }).object);
}
