// No import circle in src/: a module that imports another that (through any chain) imports it
// back loads in an order that depends on who imported first, and hides which layer sits above
// which. Type-only imports vanish at run time, so they are left out; every other relative
// import (static or re-export) is an edge, and the strongly connected components of that graph
// must all be single files.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `import … from './x'` and `export … from './x'`, with whether it is for types only. */
const IMPORT = /^\s*(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+'(\.[^']+)'/gms;

function runtimeImports(file: string, files: Set<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const [, typeKeyword, clause = '', spec = ''] of text.matchAll(IMPORT)) {
    if (typeKeyword) continue;
    const named = clause.match(/^\{([^}]*)\}$/);
    const typesOnly =
      named?.[1]
        ?.split(',')
        .map((part) => part.trim())
        .filter(Boolean)
        .every((part) => part.startsWith('type ')) ?? false;
    if (typesOnly) continue;
    const base = normalize(join(dirname(file), spec));
    const target = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((candidate) =>
      files.has(candidate),
    );
    if (target) targets.push(target);
  }
  return targets;
}

/** Tarjan's strongly connected components with more than one file. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(relative(ROOT, member));
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

it('src/ has no import circle (type-only imports aside)', () => {
  const files = new Set(sourceFiles(SRC));
  const graph = new Map([...files].map((file) => [file, runtimeImports(file, files)]));
  // The parser sees the house's imports: most files import something relative.
  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0);
  expect(edges).toBeGreaterThan(files.size);
  expect(circles(graph)).toEqual([]);
});

it('finds a circle when there is one', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  expect(circles(graph).map((component) => component.length)).toEqual([3]);
});
