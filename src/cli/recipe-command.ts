/** `episode-lab recipe NAME`: reproduce a section of the chapter, for one seed or several in parallel. */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initBackend, stepLabel } from '../core/index.js';
import {
  aggregateTables,
  findRecipe,
  formatAggregated,
  formatTable,
  RECIPES,
  type RecipeResult,
  runRecipe,
} from '../core/recipes/index.js';
import { type Command, UsageError } from './args.js';
import { threadsLabel } from './threads.js';

function listText(): string {
  const w = Math.max(...RECIPES.map((r) => r.name.length));
  return RECIPES.map((r) => `  ${r.name.padEnd(w)}  ${r.title}${r.trains ? ' (trains)' : ''}`).join('\n');
}

function printResult(r: RecipeResult): void {
  for (const t of r.tables) process.stdout.write(`\n${formatTable(t)}\n`);
  for (const n of r.notes) process.stdout.write(`${n}\n`);
}

/** Run `count` seeds as child processes, `jobs` at a time; returns their results in seed order. */
async function runSeeds(
  name: string,
  seeds: number[],
  jobs: number,
  dir: string,
  extra: string[],
): Promise<RecipeResult[]> {
  const results: RecipeResult[] = new Array(seeds.length);
  let next = 0;
  const worker = async () => {
    while (next < seeds.length) {
      const i = next++;
      const seed = seeds[i];
      const sub = path.join(dir, `seed-${seed}`);
      const args = [
        ...process.execArgv,
        process.argv[1],
        'recipe',
        name,
        '--seed',
        String(seed),
        '--dir',
        sub,
        '--quiet',
        ...extra,
      ];
      process.stderr.write(`seed ${seed}: started (${sub})\n`);
      const code = await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
        child.stderr.on('data', (d: Buffer) => {
          for (const line of d.toString().split('\n'))
            if (line.trim()) process.stderr.write(`seed ${seed}: ${line}\n`);
        });
        child.on('close', (c) => resolve(c ?? 1));
      });
      if (code !== 0) throw new Error(`seed ${seed} failed (exit ${code}); see ${sub}`);
      results[i] = JSON.parse(fs.readFileSync(path.join(sub, 'recipe.json'), 'utf8'));
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, seeds.length) }, worker));
  return results;
}

export const recipeCommand: Command = {
  name: 'recipe',
  summary: 'Reproduce a section of the chapter (its table, figures and runs); --seeds N for mean and spread.',
  usage: '<name> [options]   (names: --list)',
  positionals: ['name'],
  options: {
    list: { type: 'boolean', default: false, help: 'list the recipes' },
    seed: { type: 'int', default: 0, min: 0, help: 'seed (with --seeds: the first seed)' },
    seeds: {
      type: 'int',
      default: 1,
      min: 1,
      help: 'run this many seeds in parallel processes and report mean ± sd',
    },
    jobs: { type: 'int', default: 2, min: 1, help: 'processes at a time for --seeds' },
    steps: { type: 'int', min: 1, help: 'training steps per arm (default 40; 2 with --smoke)' },
    runsDir: {
      type: 'string',
      default: '.episode-lab/runs',
      metavar: 'DIR',
      help: 'where the recipe folder goes',
    },
    dir: {
      type: 'string',
      metavar: 'DIR',
      help: 'the recipe folder itself (default: .episode-lab/runs/recipe-NAME-seedS-TIME)',
    },
    smoke: {
      type: 'boolean',
      default: false,
      help: 'a reduced form (few steps and episodes) for a quick check',
    },
    quiet: { type: 'boolean', default: false, help: 'no per-step lines' },
  },
  async run(o, positionals) {
    if (o.list || positionals.length === 0) {
      process.stdout.write(`recipes:\n${listText()}\n`);
      return o.list ? 0 : 2;
    }
    const name = positionals[0];
    const recipe = findRecipe(name);
    if (!recipe) throw new UsageError(`unknown recipe '${name}'; recipes:\n${listText()}`);
    const extra: string[] = [];
    if (o.steps !== undefined) extra.push('--steps', String(o.steps));
    if (o.smoke) extra.push('--smoke');
    const seeds = Array.from({ length: o.seeds as number }, (_, i) => (o.seed as number) + i);
    if (seeds.length > 1) {
      const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
      const dir = path.resolve(
        (o.dir as string | undefined) ??
          path.join(o.runsDir as string, `recipe-${name}-${seeds.length}seeds-${stamp}`),
      );
      fs.mkdirSync(dir, { recursive: true });
      const t0 = performance.now();
      const results = await runSeeds(name, seeds, o.jobs as number, dir, extra);
      for (let t = 0; t < results[0].tables.length; t++) {
        const agg = aggregateTables(results.map((r) => r.tables[t]));
        process.stdout.write(`\n${formatAggregated(agg)}\n`);
      }
      fs.writeFileSync(
        path.join(dir, 'seeds.json'),
        `${JSON.stringify({ name, seeds, tables: results[0].tables.map((_, t) => aggregateTables(results.map((r) => r.tables[t]))) }, null, 1)}\n`,
      );
      process.stdout.write(
        `\n${seeds.length} seeds in ${((performance.now() - t0) / 1000).toFixed(0)}s; folders under ${dir}\n`,
      );
      return 0;
    }
    const info = await initBackend();
    if (!o.quiet) process.stderr.write(`backend: ${info.detail}; sampling on ${threadsLabel()}\n`);
    let stop = false;
    const onSignal = () => {
      stop = true;
      process.stderr.write('\nstopping after this step\n');
    };
    process.on('SIGINT', onSignal);
    const t0 = performance.now();
    const res = await runRecipe(name, {
      runsDir: o.runsDir as string,
      dir: o.dir ? path.resolve(o.dir as string) : undefined,
      seed: o.seed as number,
      steps: o.steps as number | undefined,
      smoke: o.smoke as boolean,
      log: (line) => process.stderr.write(`${line}\n`),
      onStep: o.quiet
        ? undefined
        : (arm, r, total) =>
            process.stderr.write(
              `  ${arm} ${stepLabel(r.step, total)}: pass ${r.pass_rate.toFixed(2)} reads ${r.reads.toFixed(2)} tests ${r.tests.toFixed(2)} turns ${r.turns.toFixed(2)} reward ${r.reward.toFixed(3)}\n`,
            ),
      shouldStop: () => stop,
    });
    process.off('SIGINT', onSignal);
    printResult(res);
    process.stdout.write(
      `\n${name} (seed ${o.seed}) in ${((performance.now() - t0) / 1000).toFixed(0)}s: ${res.dir}\n`,
    );
    return stop ? 130 : 0;
  },
};
