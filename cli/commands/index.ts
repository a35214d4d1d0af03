// Every `grove` command. To add one: a file in this folder exporting a Command, and one line here.
import type { Command } from '../command.ts';
import { serve } from './serve.ts';
import { run } from './run.ts';
import { demo } from './demo.ts';
import { tasksCommand } from './tasks.ts';
import { judgeCommand } from './judge.ts';
import { viewCommand } from './view.ts';
import { exportCommand } from './export.ts';
import { clawCommand } from './claw.ts';
import { proxyCommand } from './proxy.ts';
import { worker } from './worker.ts';
import { k8sCommand } from './k8s.ts';
import { sweCommand } from './swe.ts';
import { harnessCommand } from './harness.ts';

export const COMMANDS: Command[] = [
  serve,
  run,
  demo,
  tasksCommand,
  judgeCommand,
  viewCommand,
  exportCommand,
  clawCommand,
  proxyCommand,
  worker,
  k8sCommand,
  sweCommand,
  harnessCommand,
];
