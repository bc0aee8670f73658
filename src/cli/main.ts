/**
 * `episode-lab`: the headless CLI over the core library.
 */
import { type Command, commandHelp, parseOptions, suggest, UsageError } from './args.js';
import { gymCommand, tasksCommand } from './gym-commands.js';
import { lintCommand } from './lint-command.js';
import { mismatchCommand } from './mismatch-command.js';
import { makeBaseCommand, sampleCommand, trainCommand } from './model-commands.js';
import { recipeCommand } from './recipe-command.js';
import { mergeCommand } from './shard-commands.js';

const PROG = 'episode-lab';

export const COMMANDS: Command[] = [
  gymCommand,
  tasksCommand,
  sampleCommand,
  trainCommand,
  recipeCommand,
  makeBaseCommand,
  lintCommand,
  mergeCommand,
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
    const internal = isInternalError(cmd.name, e);
    const err = e instanceof Error ? e : new Error(String(e));
    const what = internal
      ? `internal error (a bug in Episode Lab, please report it): ${err.message}`
      : err.message;
    process.stderr.write(`${PROG} ${cmd.name}: ${what}\n`);
    if (internal || process.env.EPISODE_LAB_DEBUG) process.stderr.write(`${err.stack}\n`);
    return internal ? EXIT.internal : EXIT.failed;
  }
}

/**
 * The exit codes every command shares. `lint` and `mismatch`: 0 nothing found, 1 findings or a gate
 * that failed, 2 unreadable input or bad usage (2 wins over 1), 3 an internal error (3 wins over
 * both). The other commands: 0 done, 1 the job failed (the message says why), 2 bad usage, 3 an
 * internal error.
 */
export const EXIT = { ok: 0, failed: 1, findings: 1, unreadable: 2, usage: 2, internal: 3 } as const;

/** The commands whose unreadable input comes back as a result, so that any exception is a bug. */
const CHECKING_COMMANDS = new Set(['lint', 'mismatch']);

/** The exceptions the JavaScript engine throws on a bug (a deliberate message of ours is an Error or a subclass of ours). */
const ENGINE_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

/** Whether an exception out of a command is a bug: any in lint and mismatch; elsewhere an engine error (a TypeError, ...) or a thrown non-Error. */
export function isInternalError(command: string, e: unknown): boolean {
  if (CHECKING_COMMANDS.has(command)) return true;
  return !(e instanceof Error) || ENGINE_ERRORS.some((k) => e instanceof k);
}

// Run when this file is the program (dist/cli.js, or src/cli/main.ts through tsx), not when a
// bundle that imports it is (the unit tests' bundles keep each module's own __filename).
if (require.main?.filename === __filename) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`${PROG}: internal error: ${(e as Error).stack}\n`);
      process.exitCode = EXIT.internal;
    },
  );
}
