// Every tool of every app, and their OpenAI function-calling definitions.
import { calendarTools } from './apps/calendar.ts';
import { contactsTools } from './apps/contacts.ts';
import { docsTools } from './apps/docs.ts';
import { mailTools } from './apps/mail.ts';
import { todoTools } from './apps/todo.ts';
import { inputJsonSchema, type AnyTool } from './tool.ts';

export const ALL_TOOLS: AnyTool[] = [...mailTools, ...calendarTools, ...contactsTools, ...docsTools, ...todoTools];
const BY_NAME = new Map(ALL_TOOLS.map((t) => [t.name, t]));

export function getTool(name: string): AnyTool | undefined {
  return BY_NAME.get(name);
}

/** OpenAI function-calling shape: {type:"function", function:{name, description, parameters}}. */
export interface OpenAIToolDef {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

const schemaCache = new Map<string, Record<string, unknown>>();

export function openAiTool(t: AnyTool): OpenAIToolDef {
  let parameters = schemaCache.get(t.name);
  if (!parameters) schemaCache.set(t.name, (parameters = inputJsonSchema(t)));
  return { type: 'function', function: { name: t.name, description: t.description, parameters } };
}

export function openAiTools(tools: AnyTool[]): OpenAIToolDef[] {
  return tools.map(openAiTool);
}
