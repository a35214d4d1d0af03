// Recipes of "Little Kitchen": hand-written list; ratings, reviews and nutrition from a seeded PRNG.
import { mulberry32 } from '../../sandbox/prng.ts';

export interface Ingredient {
  qty: number;
  unit: string;
  name: string;
}

export interface Recipe {
  slug: string;
  name: string;
  cuisine: string;
  diets: string[];
  minutes: number;
  difficulty: 'Easy' | 'Medium' | 'Hard';
  servings: number;
  rating: number;
  reviews: number;
  calories: number;
  protein_g: number;
  ingredients: Ingredient[];
  steps: string[];
}

type Row = [string, string, string, number, Recipe['difficulty'], number, string, string[]];

// name | cuisine | diets (comma) | minutes | difficulty | servings | ingredients "qty unit name; ..." | steps
const ROWS: Row[] = [
  ['Classic Margherita Pizza', 'Italian', 'vegetarian', 45, 'Medium', 4, '500 g bread flour; 325 ml water; 7 g yeast; 400 g tomatoes; 250 g mozzarella; 10 leaves basil', ['Make and prove the dough.', 'Spread tomatoes, add mozzarella.', 'Bake at 250 °C for 10 minutes, top with basil.']],
  ['Spaghetti Carbonara', 'Italian', '', 25, 'Medium', 2, '200 g spaghetti; 100 g pancetta; 2 pcs eggs; 50 g pecorino; 1 tsp black pepper', ['Cook the pasta.', 'Fry the pancetta.', 'Toss with eggs and cheese off the heat.']],
  ['Mushroom Risotto', 'Italian', 'vegetarian,gluten-free', 40, 'Medium', 4, '300 g arborio rice; 400 g mushrooms; 1200 ml vegetable stock; 1 pcs onion; 60 g parmesan', ['Soften the onion.', 'Toast the rice, add stock ladle by ladle.', 'Stir in mushrooms and parmesan.']],
  ['Minestrone Soup', 'Italian', 'vegan', 50, 'Easy', 6, '2 pcs carrots; 2 pcs celery sticks; 400 g canned beans; 400 g tomatoes; 100 g small pasta; 1500 ml vegetable stock', ['Sweat the vegetables.', 'Add tomatoes, beans and stock.', 'Simmer, add pasta for the last 10 minutes.']],
  ['Tiramisu', 'Italian', 'vegetarian', 30, 'Easy', 8, '250 g mascarpone; 3 pcs eggs; 75 g sugar; 200 g ladyfingers; 300 ml espresso; 2 tbsp cocoa', ['Whisk yolks with sugar and mascarpone.', 'Dip ladyfingers in espresso and layer.', 'Chill for 4 hours and dust with cocoa.']],
  ['Chicken Tacos', 'Mexican', 'gluten-free', 30, 'Easy', 4, '500 g chicken thighs; 8 pcs corn tortillas; 1 pcs avocado; 1 pcs lime; 2 tsp chili powder', ['Season and grill the chicken.', 'Slice and fill the warm tortillas.', 'Top with avocado and lime.']],
  ['Black Bean Burrito Bowl', 'Mexican', 'vegan,gluten-free', 20, 'Easy', 2, '200 g rice; 400 g black beans; 150 g corn; 1 pcs avocado; 100 g salsa', ['Cook the rice.', 'Warm beans and corn.', 'Assemble bowls with avocado and salsa.']],
  ['Guacamole', 'Mexican', 'vegan,gluten-free', 10, 'Easy', 4, '3 pcs avocados; 1 pcs lime; 1 pcs red onion; 1 pcs tomato; 10 g coriander', ['Mash the avocados.', 'Stir in chopped onion, tomato and coriander.', 'Season with lime and salt.']],
  ['Beef Enchiladas', 'Mexican', '', 60, 'Hard', 6, '600 g minced beef; 12 pcs flour tortillas; 500 ml enchilada sauce; 200 g cheddar; 1 pcs onion', ['Brown the beef with onion.', 'Fill and roll the tortillas.', 'Cover with sauce and cheese, bake 25 minutes.']],
  ['Pad Thai', 'Thai', '', 30, 'Medium', 2, '200 g rice noodles; 200 g prawns; 2 pcs eggs; 100 g bean sprouts; 50 g peanuts; 3 tbsp tamarind paste', ['Soak the noodles.', 'Stir-fry prawns and eggs.', 'Add noodles and sauce, finish with sprouts and peanuts.']],
  ['Green Curry with Tofu', 'Thai', 'vegan,gluten-free', 35, 'Medium', 4, '400 g firm tofu; 400 ml coconut milk; 3 tbsp green curry paste; 200 g green beans; 1 pcs aubergine', ['Fry the curry paste.', 'Add coconut milk and vegetables.', 'Simmer, add tofu for the last 5 minutes.']],
  ['Tom Yum Soup', 'Thai', 'gluten-free', 25, 'Easy', 4, '300 g prawns; 1000 ml chicken stock; 2 pcs lemongrass stalks; 150 g mushrooms; 2 pcs limes', ['Infuse the stock with lemongrass.', 'Add mushrooms and prawns.', 'Season with lime juice.']],
  ['Mango Sticky Rice', 'Thai', 'vegan,gluten-free', 40, 'Medium', 4, '250 g glutinous rice; 400 ml coconut milk; 60 g sugar; 2 pcs mangoes', ['Soak and steam the rice.', 'Stir in sweetened coconut milk.', 'Serve with sliced mango.']],
  ['Chickpea Coconut Curry', 'Indian', 'vegan,gluten-free', 30, 'Easy', 4, '800 g chickpeas; 400 ml coconut milk; 400 g tomatoes; 1 pcs onion; 2 tbsp curry powder; 100 g spinach', ['Soften onion with curry powder.', 'Add tomatoes, chickpeas and coconut milk.', 'Simmer 15 minutes, stir in spinach.']],
  ['Butter Chicken', 'Indian', 'gluten-free', 55, 'Medium', 4, '700 g chicken thighs; 200 g yoghurt; 400 g tomato passata; 50 g butter; 150 ml cream; 2 tbsp garam masala', ['Marinate the chicken in yoghurt.', 'Grill, then simmer in the spiced tomato sauce.', 'Finish with butter and cream.']],
  ['Vegetable Biryani', 'Indian', 'vegetarian,gluten-free', 70, 'Hard', 6, '400 g basmati rice; 500 g mixed vegetables; 150 g yoghurt; 2 pcs onions; 1 tsp saffron', ['Parboil the rice.', 'Cook vegetables with spices and yoghurt.', 'Layer and steam for 25 minutes.']],
  ['Red Lentil Dal', 'Indian', 'vegan,gluten-free', 35, 'Easy', 4, '300 g red lentils; 1000 ml water; 1 pcs onion; 2 tsp cumin seeds; 1 tsp turmeric', ['Simmer lentils with turmeric.', 'Fry cumin and onion.', 'Stir the tarka into the dal.']],
  ['Miso Glazed Salmon', 'Japanese', 'gluten-free', 25, 'Easy', 2, '2 pcs salmon fillets; 2 tbsp white miso; 1 tbsp mirin; 1 tbsp honey; 1 tsp sesame seeds', ['Mix miso, mirin and honey.', 'Brush over the salmon.', 'Grill 8 minutes, sprinkle with sesame.']],
  ['Vegetable Gyoza', 'Japanese', 'vegan', 50, 'Hard', 4, '30 pcs gyoza wrappers; 200 g cabbage; 150 g mushrooms; 2 pcs spring onions; 2 tbsp soy sauce', ['Chop and season the filling.', 'Fill and pleat the wrappers.', 'Pan-fry, then steam until cooked.']],
  ['Chicken Katsu Curry', 'Japanese', '', 50, 'Medium', 4, '4 pcs chicken breasts; 100 g panko; 2 pcs eggs; 100 g curry roux; 2 pcs carrots; 300 g rice', ['Make the curry sauce.', 'Bread and fry the chicken.', 'Serve sliced over rice with sauce.']],
  ['Shakshuka', 'Middle Eastern', 'vegetarian,gluten-free', 30, 'Easy', 4, '6 pcs eggs; 800 g tomatoes; 2 pcs red peppers; 1 pcs onion; 2 tsp paprika', ['Cook peppers and onion.', 'Add tomatoes and spices, simmer.', 'Crack in the eggs and cover until set.']],
  ['Falafel Wraps', 'Middle Eastern', 'vegan', 40, 'Medium', 4, '400 g chickpeas; 1 pcs onion; 20 g parsley; 4 pcs flatbreads; 150 g hummus', ['Blend chickpeas, onion and herbs.', 'Shape and fry the falafel.', 'Wrap with hummus and salad.']],
  ['Lemon Garlic Roast Chicken', 'British', 'gluten-free', 95, 'Medium', 6, '1 pcs whole chicken; 2 pcs lemons; 1 pcs garlic bulb; 30 g butter; 1 kg potatoes', ['Stuff the chicken with lemon and garlic.', 'Roast with potatoes at 200 °C.', 'Rest 15 minutes before carving.']],
  ['Banana Bread', 'British', 'vegetarian', 70, 'Easy', 8, '3 pcs ripe bananas; 250 g flour; 100 g butter; 150 g sugar; 2 pcs eggs; 1 tsp baking soda', ['Mash the bananas.', 'Mix in butter, sugar, eggs, then flour.', 'Bake at 175 °C for 60 minutes.']],
];

function parseIngredients(s: string): Ingredient[] {
  return s.split(';').map((part) => {
    const [qty, unit, ...name] = part.trim().split(' ');
    return { qty: Number(qty), unit, name: name.join(' ') };
  });
}

function slugify(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function build(): Recipe[] {
  const rnd = mulberry32(7_202_611);
  return ROWS.map(([name, cuisine, diets, minutes, difficulty, servings, ing, steps]) => ({
    slug: slugify(name),
    name,
    cuisine,
    diets: diets ? diets.split(',') : [],
    minutes,
    difficulty,
    servings,
    rating: Math.round((3.4 + rnd() * 1.6) * 10) / 10,
    reviews: 5 + Math.floor(rnd() * 900),
    calories: 150 + Math.floor(rnd() * 55) * 10,
    protein_g: 3 + Math.floor(rnd() * 40),
    ingredients: parseIngredients(ing),
    steps,
  }));
}

export const RECIPES: readonly Recipe[] = build();
export const CUISINES = [...new Set(RECIPES.map((r) => r.cuisine))];
export const DIETS = ['vegetarian', 'vegan', 'gluten-free'];

export function recipeBySlug(slug: string): Recipe | undefined {
  return RECIPES.find((r) => r.slug === slug);
}

/** Ingredient quantity scaled to `servings`, rounded like a cookbook would (to 1 decimal, or whole grams). */
export function scaleQty(ing: Ingredient, base: number, servings: number): number {
  const v = (ing.qty * servings) / base;
  return ing.unit === 'g' || ing.unit === 'ml' ? Math.round(v) : Math.round(v * 10) / 10;
}

export function ingredientLines(r: Recipe, servings: number): string[] {
  return r.ingredients.map((i) => {
    const q = scaleQty(i, r.servings, servings);
    return i.unit === 'pcs' ? `${q} ${i.name}` : `${q} ${i.unit} ${i.name}`;
  });
}

export const RECIPE_SORTS = { rating: 'Top rated', quickest: 'Quickest', popular: 'Most reviewed', az: 'A–Z' } as const;
export type RecipeSort = keyof typeof RECIPE_SORTS;
const RECIPE_PAGE_SIZE = 6;

export function browseRecipes(q: { q?: string; cuisine?: string; diet?: string; max_time?: number; sort?: RecipeSort; page?: number }) {
  const words = (q.q ?? '').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  let xs = RECIPES.filter((r) => {
    const hay = `${r.name} ${r.cuisine} ${r.diets.join(' ')} ${r.ingredients.map((i) => i.name).join(' ')}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
  if (q.cuisine) xs = xs.filter((r) => r.cuisine === q.cuisine);
  // Vegan dishes are vegetarian too, as on real recipe sites.
  if (q.diet) xs = xs.filter((r) => r.diets.includes(q.diet!) || (q.diet === 'vegetarian' && r.diets.includes('vegan')));
  if (q.max_time) xs = xs.filter((r) => r.minutes <= q.max_time!);
  const s = [...xs];
  switch (q.sort ?? 'rating') {
    case 'quickest': s.sort((a, b) => a.minutes - b.minutes || a.name.localeCompare(b.name)); break;
    case 'popular': s.sort((a, b) => b.reviews - a.reviews); break;
    case 'az': s.sort((a, b) => a.name.localeCompare(b.name)); break;
    default: s.sort((a, b) => b.rating - a.rating || b.reviews - a.reviews);
  }
  const pages = Math.max(1, Math.ceil(s.length / RECIPE_PAGE_SIZE));
  const page = Math.min(Math.max(1, q.page ?? 1), pages);
  return { items: s.slice((page - 1) * RECIPE_PAGE_SIZE, page * RECIPE_PAGE_SIZE), total: s.length, page, pages };
}
