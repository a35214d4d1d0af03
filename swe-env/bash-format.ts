// The bash-only policy format of mini-swe-agent-style loops: every reply holds exactly one ```bash block, the
// command runs, and the model sees its return code and output. The task ends when a command's output starts with
// the submit line; the rest of that output is the submission (the patch). Text here is Grove's own.

export const SUBMIT_LINE = 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT';

export type BashParse = { ok: true; command: string; thought: string } | { ok: false; error: string };

const BLOCK = /```(?:bash|sh)\s*\n([\s\S]*?)\n?```/g;

/** The one bash block of a reply (a reasoning block is ignored). */
export function parseBashReply(text: string): BashParse {
  const visible = text.replace(/<think>[\s\S]*?<\/think>/g, '');
  const blocks = [...visible.matchAll(BLOCK)].map((m) => m[1].trim()).filter(Boolean);
  if (blocks.length !== 1) {
    return { ok: false, error: blocks.length === 0 ? 'no ```bash block found' : `${blocks.length} bash blocks found; exactly one is allowed` };
  }
  const thought = visible.slice(0, visible.indexOf('```')).trim();
  return { ok: true, command: blocks[0], thought };
}

/** The submission when the output starts with the submit line and the command succeeded, else null. */
export function submission(output: string, exitCode: number): string | null {
  const lines = output.replace(/^\s+/, '').split('\n');
  if (exitCode !== 0 || lines[0]?.trim() !== SUBMIT_LINE) return null;
  return lines.slice(1).join('\n');
}

export function systemPrompt(): string {
  return [
    'You are a software engineer working in a Linux shell on a code repository.',
    'Each reply: a short explanation of what you will do next, then exactly one command in a single ```bash block.',
    'The command runs in a fresh shell (no state carries over between commands except files); its return code and',
    'output come back as the next message. Commands must not be interactive (no editors, no pagers).',
    'Edit files with sed, python3 or cat with a here-document. Run the tests to check your change.',
    `When you are done, run exactly: echo ${SUBMIT_LINE} && git add -A && git diff --cached`,
  ].join('\n');
}

export function taskPrompt(problem: string, repoDir: string): string {
  return `The repository is checked out at ./${repoDir} (your working directory). Fix this issue:\n\n${problem.trim()}\n\nFirst reproduce the problem, then fix it in the source (not in the tests), then verify.`;
}

export function observationText(exitCode: number, output: string, timedOut: boolean, timeoutS: number): string {
  if (timedOut) return `The command timed out after ${timeoutS} s and was killed. Output so far:\n${output}`;
  return `<returncode>${exitCode}</returncode>\n<output>\n${output}</output>`;
}

export function formatErrorText(error: string): string {
  return `Your reply could not be used: ${error}. Reply with a short explanation and exactly one \`\`\`bash block.`;
}
