// The start of every CLI: read its flags (flags.ts) and answer any error with one line,
// `name: message`, exit status 2 for a usage error and 1 for the rest; `--debug` adds the stack.
//
// Why handlers and not only a try/catch: the CLIs are modules with top-level await, so an error
// reaches Node as an unhandled rejection of vite-node's run. tfjs-backend-wasm's emscripten glue
// registers `unhandledRejection → throw reason` and `uncaughtException → throw ex`; its rethrow
// made Node print the throwing line of the minified glue (tens of thousands of characters) and a
// stack, then exit 7. Our rejection listener is registered first and exits, so the glue's never
// runs; uncaught exceptions go to a capture callback, which Node calls instead of any
// 'uncaughtException' listener (and instead of printing the source line).
import './nodeModules';
import {
  type CommandLine,
  type FlagSpecs,
  flagsHelp,
  parseFlags,
  UsageError,
  type WordSpec,
} from './flags';

export { UsageError } from './flags';

export interface CliShape {
  /** The usage line after `usage: ` in --help and in a usage error's hint. */
  usage: string;
  /** Subcommand or section words. */
  words?: WordSpec;
  /** The arguments (default: the process's, after node and the script). */
  argv?: readonly string[];
}

/**
 * Installs the one-line error handling for CLI `name`, then reads its flags: a usage error
 * ends the process with status 2 before the CLI does anything; `--help` prints the flags.
 */
export function commandLine<S extends FlagSpecs>(
  name: string,
  specs: S,
  shape: CliShape,
): CommandLine<S> {
  const argv = shape.argv ?? process.argv.slice(2);
  handleErrors(name, argv.includes('--debug'));
  try {
    const parsed = parseFlags(specs, argv, shape.words);
    if ((parsed.flags as { help?: boolean }).help) exitWithHelp(shape.usage, specs);
    return parsed;
  } catch (error) {
    if (argv.includes('--help')) exitWithHelp(shape.usage, specs);
    return exitWithError(error);
  }
}

/** The running CLI's name and --debug, once commandLine has read them. */
let running: { name: string; debug: boolean } | null = null;

/**
 * From here on every error ends the process with one line (see the file's comment): the
 * listeners go first in line, so the wasm glue's own never run.
 */
export function handleErrors(name: string, debug: boolean): void {
  const first = running === null;
  running = { name, debug };
  if (!first) return;
  process.prependListener('unhandledRejection', exitWithError);
  try {
    process.setUncaughtExceptionCaptureCallback(exitWithError);
  } catch {
    // Someone else captures already (a debugger's domain): a listener first in line does.
    process.prependListener('uncaughtException', exitWithError);
  }
}

/**
 * Ends the CLI once everything written to stdout has left the process: a pipe's writes are
 * asynchronous, and process.exit() right after a large write (a vocabulary's logits) cut the
 * JSON short for a reader slower than the writer.
 */
export async function exitWhenWritten(code = 0): Promise<never> {
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}

/** Ends the CLI on `error`: one line on stderr, status 2 for a usage error, else 1. */
export function exitWithError(error: unknown): never {
  const { name, debug } = running ?? { name: 'cli', debug: false };
  process.stderr.write(`${describeError(name, error, debug)}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
}

/** `name: message` (one line), or with `debug` the stack below it. */
export function describeError(name: string, error: unknown, debug: boolean): string {
  const message =
    error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);
  const line = `${name}: ${message.replace(/\s*\n\s*/g, ' ')}`;
  if (debug && error instanceof Error && error.stack) return `${line}\n${error.stack}`;
  // A bug's message rarely says where it happened: point at the flag that does.
  const bug = error instanceof TypeError || error instanceof ReferenceError;
  return bug ? `${line} (--debug shows where)` : line;
}

function exitWithHelp(usage: string, specs: FlagSpecs): never {
  process.stdout.write(`${flagsHelp(usage, specs)}\n`);
  process.exit(0);
}
