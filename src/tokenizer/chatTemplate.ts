// A checkpoint's chat template (tokenizer_config.json's chat_template, Jinja) rendered under
// bounds, because it is code from whoever serves the checkpoint: a template that loops, recurses
// or builds a huge string stops with a clear error instead of hanging the Worker. Rendering is
// synchronous, so the bounds are checked inside the interpreter: every node it evaluates counts a
// step, nests a level and is timed, and every string or list it makes is measured. The globals
// are the library's own (Template.render's), with a `range` that refuses a huge list before
// building it.
import { Environment, Interpreter, Template } from '@huggingface/jinja';

export interface TemplateBounds {
  milliseconds: number;
  /** Nodes evaluated. */
  steps: number;
  /** Nesting of evaluations (macros calling themselves). */
  depth: number;
  /** Characters of any string, elements of any list, the output included. */
  size: number;
}

/** Far above a real template's needs (Qwen's and Llama's render a short chat in ~2k steps). */
export const TEMPLATE_BOUNDS: TemplateBounds = {
  milliseconds: 2000,
  steps: 2_000_000,
  depth: 1000,
  size: 1_000_000,
};

interface Budget extends TemplateBounds {
  used: number;
  nesting: number;
  deadline: number;
}

class TemplateBoundExceeded extends Error {}

function exceeded(why: string): never {
  throw new TemplateBoundExceeded(why);
}

type Statement = Parameters<Interpreter['evaluate']>[0];

/** The library's interpreter, counting and measuring every node it evaluates. */
class BoundedInterpreter extends Interpreter {
  constructor(
    env: Environment,
    private readonly budget: Budget,
  ) {
    super(env);
  }

  override evaluate(statement: Statement, environment: Environment) {
    const budget = this.budget;
    budget.used++;
    if (budget.used > budget.steps) exceeded(`it ran over ${budget.steps} steps`);
    if (budget.used % 1024 === 0 && Date.now() > budget.deadline)
      exceeded(`it ran over ${budget.milliseconds} ms`);
    if (++budget.nesting > budget.depth) exceeded(`it nested deeper than ${budget.depth} levels`);
    try {
      const value = super.evaluate(statement, environment);
      const inner = (value as { value?: unknown }).value;
      const size = typeof inner === 'string' || Array.isArray(inner) ? inner.length : 0;
      if (size > budget.size) exceeded(`it built a value of ${size} characters or items`);
      return value;
    } finally {
      budget.nesting--;
    }
  }
}

/** Jinja's range, refusing a list longer than `limit` before building it. */
function boundedRange(limit: number) {
  return (start: number, stop?: number, step = 1): number[] => {
    const [from, to] = stop === undefined ? [0, start] : [start, stop];
    if (step === 0) throw new Error('range() step must not be zero');
    const length = Math.max(0, Math.ceil((to - from) / step));
    if (!(length <= limit)) exceeded(`range() of ${length} items`);
    return Array.from({ length }, (_, i) => from + i * step);
  };
}

const MONTHS =
  'January February March April May June July August September October November December'.split(
    ' ',
  );

/** strftime_now as the library's globals give it: %Y %m %d %b %B %H %M %%. */
function strftimeNow(format: string): string {
  const now = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  const parts: Record<string, string> = {
    '%Y': String(now.getFullYear()),
    '%m': pad(now.getMonth() + 1),
    '%d': pad(now.getDate()),
    '%b': MONTHS[now.getMonth()]!.slice(0, 3),
    '%B': MONTHS[now.getMonth()]!,
    '%H': pad(now.getHours()),
    '%M': pad(now.getMinutes()),
    '%%': '%',
  };
  return format.replace(/%[YmdbBHM%]/g, (token) => parts[token] ?? token);
}

/** Template.render's globals (the library does not export them), range bounded. */
function globals(bounds: TemplateBounds): Record<string, unknown> {
  return {
    false: false,
    true: true,
    none: null,
    False: false,
    True: true,
    None: null,
    raise_exception: (message: unknown) => {
      throw new Error(String(message));
    },
    range: boundedRange(bounds.size),
    strftime_now: strftimeNow,
  };
}

/** A parsed chat template whose render stops at the bounds with an error that says which. */
export class BoundedTemplate {
  private readonly template: Template;

  /** Throws when the source does not parse (or is itself beyond the size bound). */
  constructor(
    source: string,
    private readonly bounds: TemplateBounds = TEMPLATE_BOUNDS,
  ) {
    if (source.length > bounds.size)
      throw new Error(`the template is ${source.length} characters, over ${bounds.size}`);
    this.template = new Template(source);
  }

  /** Renders; a template past a bound throws "chat_template stopped: …". */
  render(items: Record<string, unknown>): string {
    const budget: Budget = {
      ...this.bounds,
      used: 0,
      nesting: 0,
      deadline: Date.now() + this.bounds.milliseconds,
    };
    const env = new Environment();
    for (const [name, value] of Object.entries({ ...globals(this.bounds), ...items }))
      env.set(name, value);
    try {
      const out = new BoundedInterpreter(env, budget).run(this.template.parsed);
      const text = (out as { value: unknown }).value as string;
      if (text.length > this.bounds.size) exceeded(`its output is ${text.length} characters`);
      return text;
    } catch (err) {
      if (err instanceof TemplateBoundExceeded)
        throw new Error(`chat_template stopped: ${err.message}`);
      if (err instanceof RangeError)
        throw new Error(`chat_template stopped: ${err.message} (recursion or a huge string)`);
      throw err;
    }
  }
}
