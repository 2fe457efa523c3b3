// The program the playground opens on: one function and its structured tests.
export const exampleCode = `// Keep the even numbers, square each one, add them up.
function sumEvenSquares(numbers) {
  return numbers
    .filter((x) => x % 2 === 0)
    .map((x) => x * x)
    .reduce((sum, x) => sum + x, 0);
}
`;

export const exampleTests = `[
  { "args": [[1, 2, 3, 4]], "expected": 20 },
  { "args": [[]], "expected": 0 },
  { "args": [[-2, 5, 7]], "expected": 4 },
  { "args": [[6]], "expected": 36 }
]
`;
