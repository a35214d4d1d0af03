// OpenAPI 3.1 document generated from the route definitions' zod schemas (JSON Schema 2020-12 dialect).
import { z } from 'zod';
import { Action } from '../protocol/action.ts';
import { DownloadInfo, DownloadList, ErrorBody, Health, SandboxList, StepRequest } from '../protocol/api.ts';
import { Observation, StepResult } from '../protocol/observation.ts';
import { CreateSandboxBody, SandboxInfo } from '../protocol/sandbox.ts';
import type { AnyRoute } from './route.ts';

type JsonSchema = Record<string, unknown>;

/** Schemas published as components; request bodies are described as input (defaults optional), responses as output. */
// Action is published twice: as a request (unknown keys ignored) and as a response (exact keys) schema.
const INPUT_COMPONENTS: Record<string, z.ZodType> = { CreateSandboxBody, StepRequest, ActionInput: Action };
const OUTPUT_COMPONENTS: Record<string, z.ZodType> = {
  SandboxInfo,
  SandboxList,
  StepResult,
  Observation,
  Action,
  DownloadInfo,
  DownloadList,
  ErrorBody,
  Health,
};

const REF = (id: string) => `#/components/schemas/${id}`;

function strip(s: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = s;
  return rest;
}

function components(defs: Record<string, z.ZodType>, io: 'input' | 'output') {
  const reg = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(defs)) reg.add(schema, { id });
  const out = z.toJSONSchema(reg, { io, uri: REF, unrepresentable: 'any' }) as { schemas: Record<string, JsonSchema> };
  return { reg, schemas: Object.fromEntries(Object.entries(out.schemas).map(([k, v]) => [k, strip(v)])) };
}

/** A schema as a $ref when it is a published component, else inline (with component refs inside). */
function schemaFor(schema: z.ZodType, io: 'input' | 'output', defs: Record<string, z.ZodType>): JsonSchema {
  for (const [id, s] of Object.entries(defs)) if (s === schema) return { $ref: REF(id) };
  const reg = z.registry<{ id: string }>();
  for (const [id, s] of Object.entries(defs)) reg.add(s, { id });
  reg.add(schema, { id: '__inline' });
  const out = z.toJSONSchema(reg, { io, uri: REF, unrepresentable: 'any' }) as { schemas: Record<string, JsonSchema> };
  return strip(out.schemas.__inline);
}

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(js.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    return {
      name,
      in: where,
      required: where === 'path' || (js.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

export function buildOpenApi(routes: AnyRoute[], version: string): JsonSchema {
  const input = components(INPUT_COMPONENTS, 'input');
  const output = components(OUTPUT_COMPONENTS, 'output');
  const schemas: Record<string, JsonSchema> = { ...output.schemas };
  for (const [id, s] of Object.entries(input.schemas)) {
    if (schemas[id] && JSON.stringify(schemas[id]) !== JSON.stringify(s)) {
      throw new Error(`OpenAPI: component ${id} differs between request and response use; publish it under two names`);
    }
    schemas[id] = s;
  }

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      const alternatives = Object.fromEntries(
        Object.entries(res.alternatives ?? {}).map(([type, description]) => [type, { schema: { type: 'string', description } }]),
      );
      const content = res.schema
        ? { 'application/json': { schema: schemaFor(res.schema, 'output', OUTPUT_COMPONENTS) }, ...alternatives }
        : res.contentType
          ? { [res.contentType]: { schema: { type: 'string', contentMediaType: res.contentType } } }
          : undefined;
      responses[status] = {
        description: res.description,
        ...(status === '503' ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } } : {}),
        ...(content ? { content } : {}),
      };
    }
    const op: Record<string, unknown> = {
      operationId: r.id,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      ...(r.auth === false ? { security: [] } : {}),
    };
    const params = [...parameters(r.params, 'path'), ...parameters(r.query, 'query')];
    if (params.length) op.parameters = params;
    if (r.body) {
      op.requestBody = {
        required: true,
        content: { 'application/json': { schema: schemaFor(r.body, 'input', INPUT_COMPONENTS) } },
      };
    }
    op.responses = responses;
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Grove',
      version,
      description: 'Sandboxes for computer-use agents: a headless Chromium page behind a screenshot-plus-action API.',
    },
    security: [{ apiKey: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
  };
}
