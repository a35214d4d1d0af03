// Types for scripts/check-imports.mjs (plain JS so CI can run it without tsx).
export function importsOf(src: string): Array<{ spec: string; line: number }>;
export function checkImports(root?: string): { files: number; violations: string[] };
