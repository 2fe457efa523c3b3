// The keys of a JSON text's outermost object, in order and with repeats. JSON.parse keeps the
// last of two equal keys without a word, so a file that names a thing twice (a safetensors
// header's tensor, say) can only be caught by reading its keys like this.

/** The outermost object's keys, as written; [] when the text is not an object. */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && expectingKey) {
        keys.push(JSON.parse(text.slice(start, i + 1)) as string);
        expectingKey = false;
      }
    } else if (c === '{' || c === '[') {
      depth++;
      expectingKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectingKey = true;
  }
  return keys;
}

/** The first key the outermost object names twice, or null. */
export function repeatedTopLevelKey(text: string): string | null {
  const seen = new Set<string>();
  for (const key of topLevelKeys(text)) {
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return null;
}
