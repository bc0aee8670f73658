/**
 * Command-line options with help text and errors that name the bad option or value.
 */

import { suggest } from '../core/suggest.js';

export { suggest };

export class UsageError extends Error {}

export interface OptionSpec {
  type: 'string' | 'int' | 'number' | 'boolean';
  help: string;
  default?: string | number | boolean;
  /** Allowed values (string options). */
  choices?: readonly string[];
  /** Smallest allowed value (int and number options). */
  min?: number;
  /** Largest allowed value (int and number options). */
  max?: number;
  /** A placeholder for the help text, for example `N`. */
  metavar?: string;
}

export type OptionValues = Record<string, string | number | boolean | undefined>;

export interface Command {
  name: string;
  summary: string;
  usage?: string;
  options: Record<string, OptionSpec>;
  /** Positional arguments allowed (names for the help text). */
  positionals?: string[];
  run(opts: OptionValues, positionals: string[]): Promise<number | undefined> | number | undefined;
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Parse `argv` against a command's options; throws UsageError naming what is wrong. */
export function parseOptions(
  cmd: Command,
  argv: readonly string[],
): { opts: OptionValues; positionals: string[] } {
  const byFlag = new Map<string, string>(Object.keys(cmd.options).map((k) => [kebab(k), k]));
  const opts: OptionValues = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-') && arg !== '-')
        throw new UsageError(`unknown option '${arg}' (options are spelled --name; see --help)`);
      positionals.push(arg);
      continue;
    }
    let [flag, value] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    let negated = false;
    if (!byFlag.has(flag) && flag.startsWith('no-') && byFlag.has(flag.slice(3))) {
      flag = flag.slice(3);
      negated = true;
    }
    const key = byFlag.get(flag);
    if (!key) {
      const hint = suggest(flag, [...byFlag.keys()]);
      throw new UsageError(
        `unknown option '--${flag}'${hint ? ` (did you mean --${hint}?)` : ''}; see --help`,
      );
    }
    const spec = cmd.options[key];
    if (spec.type === 'boolean') {
      if (value !== undefined) throw new UsageError(`option --${flag} takes no value`);
      opts[key] = !negated;
      continue;
    }
    if (negated) throw new UsageError(`option --${flag} cannot be negated`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined || value.startsWith('--'))
        throw new UsageError(`option --${flag} needs a value`);
    }
    opts[key] = convert(flag, spec, value);
  }
  const variadic = cmd.positionals?.[cmd.positionals.length - 1]?.endsWith('...') ?? false;
  if (!variadic && positionals.length > (cmd.positionals?.length ?? 0))
    throw new UsageError(
      cmd.positionals?.length
        ? `too many arguments: ${positionals.join(' ')} (expected ${cmd.positionals.join(' ')})`
        : `unexpected argument '${positionals[0]}' (this command takes only options; see --help)`,
    );
  for (const [key, spec] of Object.entries(cmd.options))
    if (opts[key] === undefined) opts[key] = spec.default;
  return { opts, positionals };
}

function convert(flag: string, spec: OptionSpec, value: string): string | number {
  if (spec.type === 'string') {
    if (spec.choices && !spec.choices.includes(value)) {
      const hint = suggest(value, spec.choices);
      throw new UsageError(
        `--${flag} must be one of ${spec.choices.join(', ')}; got '${value}'${hint ? ` (did you mean '${hint}'?)` : ''}`,
      );
    }
    return value;
  }
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n))
    throw new UsageError(`--${flag} must be a number, got '${value}'`);
  if (spec.type === 'int' && !Number.isInteger(n))
    throw new UsageError(`--${flag} must be an integer, got '${value}'`);
  if (spec.min !== undefined && n < spec.min)
    throw new UsageError(`--${flag} must be at least ${spec.min}, got ${n}`);
  if (spec.max !== undefined && n > spec.max)
    throw new UsageError(`--${flag} must be at most ${spec.max}, got ${n}`);
  return n;
}

/** The help text of one command. */
export function commandHelp(prog: string, cmd: Command): string {
  const lines = [
    `${prog} ${cmd.name}${cmd.usage ? ` ${cmd.usage}` : ' [options]'}`,
    '',
    cmd.summary,
    '',
    'Options:',
  ];
  const rows = Object.entries(cmd.options).map(([key, spec]) => {
    const flag = `--${kebab(key)}${spec.type === 'boolean' ? '' : ` ${spec.metavar ?? (spec.choices ? spec.choices.join('|') : spec.type === 'string' ? 'VALUE' : 'N')}`}`;
    const def = spec.default !== undefined && spec.type !== 'boolean' ? ` (default ${spec.default})` : '';
    return [flag, spec.help + def];
  });
  rows.push(['--help', 'show this help']);
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [flag, help] of rows) lines.push(`  ${flag.padEnd(width)}  ${help}`);
  return lines.join('\n');
}
