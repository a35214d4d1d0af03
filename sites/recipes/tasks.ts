// Ground truth and scripted plans of the recipe tasks (questions in tasks.jsonl), computed from the data.
import type { PlanStep, TaskSpec } from '../spec.ts';
import { browseRecipes, RECIPES, scaleQty, type Recipe } from './data.ts';

const must = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`recipe tasks: ${what} not found`);
  return v;
};
const byName = (name: string): Recipe => must(RECIPES.find((r) => r.name === name), name);
const search = (q: string): PlanStep => ({ type: { text: 'Search recipes', tag: ['input'], value: q, clear: true, submit: true } });
const click = (text: string, extra: { exact?: boolean; nth?: number; tag?: string[] } = {}): PlanStep => ({ click: { text, ...extra } });
const open = (r: Recipe): PlanStep[] => [search(r.name), click(r.name, { tag: ['a'] })];
const servings = (n: number): PlanStep[] => [{ type: { text: 'Servings', tag: ['input'], value: String(n), clear: true } }, click('Update servings')];

const all = (q: Parameters<typeof browseRecipes>[0]) => {
  const first = browseRecipes(q);
  return Array.from({ length: first.pages }, (_, i) => browseRecipes({ ...q, page: i + 1 }).items).flat();
};

const roast = byName('Lemon Garlic Roast Chicken');
const thaiTop = must(browseRecipes({ cuisine: 'Thai', sort: 'rating' }).items[0], 'top Thai');
const salmon = byName('Miso Glazed Salmon');
const quickVegan = must(browseRecipes({ diet: 'vegan', sort: 'quickest' }).items[0], 'quickest vegan');
const banana = byName('Banana Bread');
const flour = must(banana.ingredients.find((i) => i.name === 'flour'), 'flour');
const italianSlowest = must(all({ cuisine: 'Italian', sort: 'quickest' }).at(-1), 'slowest Italian');
const gf = browseRecipes({ diet: 'gluten-free', sort: 'popular' });
const gfLeast = must(all({ diet: 'gluten-free', sort: 'popular' }).at(-1), 'least reviewed gluten-free');

export const RECIPE_TASKS: Record<string, TaskSpec> = {
  'Recipes--0': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'answer', accepted: [String(roast.minutes)] }] },
    plan: [...open(roast), { answer: `${roast.minutes} minutes` }],
  },
  'Recipes--1': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'favourites', ids: ['classic-margherita-pizza'] }] },
    plan: [...open(byName('Classic Margherita Pizza')), click('Save to favourites'), { answer: 'Saved.' }],
  },
  'Recipes--2': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'answer', accepted: [thaiTop.name] }] },
    plan: [click('Thai', { exact: true }), click('Top rated', { exact: true }), { answer: thaiTop.name }],
  },
  'Recipes--3': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'shopping_list', entries: [{ recipe: 'chickpea-coconut-curry', servings: 6 }] }] },
    plan: [...open(byName('Chickpea Coconut Curry')), ...servings(6), click('Add ingredients to shopping list'), { answer: 'Added for 6 servings.' }],
  },
  'Recipes--4': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'answer', accepted: [String(salmon.calories)] }] },
    plan: [...open(salmon), { answer: `${salmon.calories} kcal per serving` }],
  },
  'Recipes--5': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'favourites', ids: [quickVegan.slug], exact: true }] },
    plan: [click('Vegan', { exact: true }), click('Quickest', { exact: true }), click(quickVegan.name, { tag: ['a'] }), click('Save to favourites'), { answer: `Saved ${quickVegan.name}.` }],
  },
  'Recipes--6': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'download', filename: '^banana-bread\\.pdf$' }] },
    plan: [...open(banana), click('Download recipe card (PDF)'), { answer: 'Downloaded the recipe card.' }],
  },
  'Recipes--7': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'answer', accepted: [String(scaleQty(flour, banana.servings, 12))] }] },
    plan: [...open(banana), ...servings(12), { answer: `${scaleQty(flour, banana.servings, 12)} g of flour` }],
  },
  'Recipes--8': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'answer', accepted: [italianSlowest.name] }] },
    plan: [click('Italian', { exact: true }), click('Quickest', { exact: true }), { answer: italianSlowest.name }],
  },
  'Recipes--9': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'shopping_list', entries: [{ recipe: 'shakshuka', servings: 2 }] }] },
    plan: [
      ...open(byName('Pad Thai')), click('Add ingredients to shopping list'), click('Shopping list', { exact: true, tag: ['a'] }), click('Clear list'),
      ...open(byName('Shakshuka')), ...servings(2), click('Add ingredients to shopping list'), { answer: 'The list holds Shakshuka for 2.' },
    ],
  },
  'Recipes--10': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'answer', accepted: [gfLeast.name] }] },
    plan: [click('Browse recipes'), click('Gluten-free', { exact: true }), click('Most reviewed', { exact: true }), ...(gf.pages > 1 ? [click(String(gf.pages), { exact: true, tag: ['a'] })] : []), { answer: gfLeast.name }],
  },
  'Recipes--11': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'favourites', ids: ['spaghetti-carbonara', 'tiramisu'], exact: true }] },
    plan: [...open(byName('Spaghetti Carbonara')), click('Save to favourites'), ...open(byName('Tiramisu')), click('Save to favourites'), { answer: 'Both saved.' }],
  },
};
