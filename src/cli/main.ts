/**
 * `episode-lab`: the headless CLI over the core library.
 */
import { type Command, commandHelp, parseOptions, suggest, UsageError } from './args.js';
import { gymCommand, tasksCommand } from './gym-commands.js';
import { lintCommand } from './lint-command.js';
import { mismatchCommand } from './mismatch-command.js';
import { makeBaseCommand, sampleCommand, trainCommand } from './model-commands.js';
import { recipeCommand } from './recipe-command.js';

const PROG = 'episode-lab';

export const COMMANDS: Command[] = [
  gymCommand,
  tasksCommand,
  sampleCommand,
  trainCommand,
  recipeCommand,
  makeBaseCommand,
  lintCommand,
  mismatchCommand,
];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `${PROG} <command> [options]`,
    '',
    'Train tiny multi-turn tool-using agents with RL and inspect their episodes token by token.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run '${PROG} <command> --help' for the options of a command.`,
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${mainHelp()}\n`);
    return name ? 0 : 2;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    const hint = suggest(
      name,
      COMMANDS.map((c) => c.name),
    );
    process.stderr.write(
      `${PROG}: unknown command '${name}'${hint ? ` (did you mean '${hint}'?)` : ''}\n\n${mainHelp()}\n`,
    );
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${commandHelp(PROG, cmd)}\n`);
    return 0;
  }
  try {
    const { opts, positionals } = parseOptions(cmd, rest);
    return (await cmd.run(opts, positionals)) ?? 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${PROG} ${cmd.name}: ${e.message}\n`);
      return 2;
    }
    const err = e as Error;
    process.stderr.write(`${PROG} ${cmd.name}: ${err.message}\n`);
    if (process.env.EPISODE_LAB_DEBUG) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}

// Run when this file is the program (dist/cli.js, or src/cli/main.ts through tsx), not when a
// bundle that imports it is (the unit tests' bundles keep each module's own __filename).
if (require.main?.filename === __filename) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`${PROG}: ${(e as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
