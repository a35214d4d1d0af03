// Every route of the API, in documentation order.
import type { AnyRoute } from '../route.ts';
import { createSandboxes } from './batch.ts';
import { browserRoutes } from './browser.ts';
import { clawRoutes } from './claw.ts';
import { clawEvalRoutes } from './claw-eval.ts';
import { episodeRoutes } from './episodes.ts';
import { mcpRoutes } from './mcp.ts';
import { metaRoutes } from './meta.ts';
import { sandboxRoutes } from './sandboxes.ts';
import { shellRoutes } from './shell.ts';
import { sweRoutes } from './swe.ts';

export const ROUTES: AnyRoute[] = [...sandboxRoutes, createSandboxes, ...browserRoutes, ...episodeRoutes, ...shellRoutes, ...sweRoutes, ...clawRoutes, ...clawEvalRoutes, ...mcpRoutes, ...metaRoutes];
