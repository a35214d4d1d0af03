// What the server's Claw-Eval checkout (`--claw-eval DIR`, episodes/claw-eval.ts) gets from the rest of the server:
// - shells for the sandbox tools (Bash, Read, …) of its episodes: one shell sandbox of the server's own shell
//   environment per episode, no network, that environment's limits (memory, processes, CPU, disk), closed with the
//   episode; it belongs to its episode, so it is not in the registry's list;
// - the shell environment's limits for the task's mock services' own sandbox (clawEvalConfine: cgroups with memory,
//   processes, CPU, and a size-capped disk for their writable state); `grove claw run --claw-eval` takes the same
//   from a shell environment of its own (cli/commands/claw-eval-limits.ts);
// - the simulated user of user_agent tasks on Grove's model client (vlm-client's ChatClient on
//   --claw-eval-user-url / --claw-eval-user-model, key from GROVE_CLAW_EVAL_USER_KEY).
import { randomUUID } from 'node:crypto';
import type { ClawEvalHost, ClawEvalShellOpener } from '../claw-env/claw-eval/host.ts';
import type { ClawEvalConfine } from '../claw-env/claw-eval/services.ts';
import type { ClawEvalUserModel } from '../claw-env/claw-eval/user-agent.ts';
import { ShellCreateOptions } from '../protocol/sandbox.ts';
import { ExecRequest, type ExecInput } from '../protocol/shell.ts';
import type { GroveConfig } from '../sandbox/config.ts';
import type { ShellEnvironment } from '../shell-env/index.ts';
import { ChatClient, type ChatMessage } from '../vlm-client/client.ts';

/** Hands the server's shells, limits and user model to its checkout. */
export function equipClawEvalHost(host: ClawEvalHost, config: GroveConfig, shell: ShellEnvironment | undefined): void {
  host.equip({
    openShell: shell ? clawEvalShellOpener(shell) : undefined,
    confine: clawEvalConfine(shell),
    userModel: config.clawEvalUserUrl && config.clawEvalUserModel ? userModelOn(config.clawEvalUserUrl, config.clawEvalUserModel, config.clawEvalUserKey) : undefined,
  });
}

/** The services' sandbox under a shell environment's limits (memory, processes, CPU, disk): how every Claw-Eval
 * service set is confined, the server's episodes' and the batch's. Undefined without one (or with pod isolation). */
export function clawEvalConfine(shell: ShellEnvironment | undefined): ClawEvalConfine | undefined {
  const confine = shell?.confine?.bind(shell);
  return confine ? (name) => confine(name) : undefined;
}

function userModelOn(baseURL: string, model: string, apiKey: string | undefined): ClawEvalUserModel {
  const client = new ChatClient({ baseURL, model, apiKey });
  return { model, relay: async (req) => (await client.complete({ messages: req.messages as ChatMessage[], temperature: req.temperature, max_tokens: req.max_tokens })).text };
}

function clawEvalShellOpener(env: ShellEnvironment): ClawEvalShellOpener {
  return async (labels) => {
    const sb = await env.create(`claw-eval-${randomUUID().slice(0, 12)}`, ShellCreateOptions.parse({ type: 'shell', block_network: true, labels }));
    try {
      await sb.ready();
    } catch (err) {
      await sb.close();
      throw err;
    }
    return {
      shell: { exec: (req: ExecInput) => sb.exec(ExecRequest.parse(req)), upload: (p: string, data: Uint8Array | string) => sb.writeFile(p, Buffer.from(data)) },
      close: () => sb.close(),
    };
  };
}
