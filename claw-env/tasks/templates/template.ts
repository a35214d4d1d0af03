// A task template: a name, a category, and how a seeded world becomes one task.
import type { World } from '../../fixtures/world.ts';
import type { ClawTaskInput } from '../format.ts';

export type Template = { name: string; category: string; make(w: World, seed: number): Omit<ClawTaskInput, 'id' | 'seed' | 'source' | 'template'> };
