// Every `grove` command. To add one: a file in this folder exporting a Command, and one line here.
import type { Command } from '../command.ts';
import { serve } from './serve.ts';

export const COMMANDS: Command[] = [
  serve,
];
