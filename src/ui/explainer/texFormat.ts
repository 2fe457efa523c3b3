// Numbers as they appear inside the explainer's TeX.

/** 3 significant decimals, no trailing zeros, a proper minus sign. */
export function num(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Number(value.toFixed(digits));
  return Object.is(rounded, -0) ? '0' : String(rounded);
}

/** A number that follows an operator: negative values get parentheses. */
export function operand(value: number, digits = 3): string {
  const text = num(value, digits);
  return value < 0 && text !== '0' ? `(${text})` : text;
}

/** "a + b + c" of the values, each as an operand. */
export function sumOf(values: readonly number[], digits = 3): string {
  return values
    .map((value, i) => (i === 0 ? num(value, digits) : operand(value, digits)))
    .join(' + ');
}
