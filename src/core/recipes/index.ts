/** The recipe registry and runner. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTasks } from '../gym/tasks.js';
import { buildTokenizer } from '../gym/tokenizer.js';
import { backendInfo } from '../tf/backend.js';
import { recipeExBootstrap } from './ex-bootstrap.js';
import { recipeExBudgetObs } from './ex-budget-obs.js';
import { recipeExCurriculum } from './ex-curriculum.js';
import { recipeExLossMode } from './ex-loss-mode.js';
import { recipeExSummarize } from './ex-summarize.js';
import { recipe121Budget, recipe121Mask } from './s12-1.js';
import { recipe122 } from './s12-2.js';
import { recipe123 } from './s12-3.js';
import { recipe124 } from './s12-4.js';
import { recipe125 } from './s12-5.js';
import { recipe126 } from './s12-6.js';
import { recipe127NeverSubmit } from './s12-7-never-submit.js';
import { recipe127Overflow } from './s12-7-overflow.js';
import { recipe127SubmitAtOnce } from './s12-7-submit-at-once.js';
import { recipe127Truncation } from './s12-7-truncation.js';
import type { Recipe, RecipeContext, RecipeResult } from './types.js';

export * from './types.js';

export const RECIPES: Recipe[] = [
  recipe121Mask,
  recipe121Budget,
  recipe122,
  recipe123,
  recipe124,
  recipe125,
  recipe126,
  recipe127SubmitAtOnce,
  recipe127NeverSubmit,
  recipe127Truncation,
  recipe127Overflow,
  recipeExCurriculum,
  recipeExSummarize,
  recipeExBudgetObs,
  recipeExBootstrap,
  recipeExLossMode,
];

export function findRecipe(name: string): Recipe | undefined {
  return RECIPES.find((r) => r.name === name);
}

export interface RunRecipeOptions {
  runsDir: string;
  seed: number;
  steps?: number;
  smoke?: boolean;
  /** The recipe folder (default: `<runsDir>/recipe-<name>-seed<seed>-<time>`). */
  dir?: string;
  log?: (line: string) => void;
  onStep?: RecipeContext['onStep'];
  shouldStop?: () => boolean;
}

/** Run a recipe into its folder and write `recipe.json`. */
export async function runRecipe(name: string, o: RunRecipeOptions): Promise<RecipeResult & { dir: string }> {
  const recipe = findRecipe(name);
  if (!recipe) throw new Error(`unknown recipe '${name}'; recipes: ${RECIPES.map((r) => r.name).join(', ')}`);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const dir = o.dir ?? path.join(o.runsDir, `recipe-${name}-seed${o.seed}-${stamp}`);
  fs.mkdirSync(dir, { recursive: true });
  const ctx: RecipeContext = {
    tok: buildTokenizer(makeTasks('all')),
    dir,
    seed: o.seed,
    steps: o.steps ?? (o.smoke ? 2 : 40),
    smoke: o.smoke ?? false,
    log: o.log ?? (() => {}),
    onStep: o.onStep,
    shouldStop: o.shouldStop ?? (() => false),
  };
  const started = Date.now();
  const res = await recipe.run(ctx);
  const out: RecipeResult & { dir: string } = { name, seed: o.seed, ...res, dir };
  fs.writeFileSync(
    path.join(dir, 'recipe.json'),
    `${JSON.stringify(
      {
        ...out,
        section: recipe.section,
        title: recipe.title,
        mechanism: recipe.mechanism,
        steps: ctx.steps,
        smoke: ctx.smoke,
        seconds: (Date.now() - started) / 1000,
        backend: backendInfo()?.detail,
      },
      null,
      1,
    )}\n`,
  );
  return out;
}
