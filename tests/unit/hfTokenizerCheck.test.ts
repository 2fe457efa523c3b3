// The untrusted-input checks must pass the real thing: the pre-tokenizer patterns of GPT-2,
// Llama 3 and Qwen2 have no backtracking shape and are quick on the probes, while (a+)+,
// (a|a)*, (a?){30} and a backreference are refused; a bounded chat template renders exactly as
// the library's own Template.render (the lab's Qwen-style template, Llama 3's date global).
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import { repeatedTopLevelKey } from '../../src/model/jsonKeys';
import { BoundedTemplate } from '../../src/tokenizer/chatTemplate';
import { backtrackingShape, checkTokenizerJson } from '../../src/tokenizer/hfTokenizerCheck';
import { byteLevelTokenizerJson, CHAT_TEMPLATE } from './hf-fixtures';

const REAL_PATTERNS = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  llama3:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

const withPattern = (pattern: string) => {
  const { json } = byteLevelTokenizerJson();
  return {
    ...json,
    pre_tokenizer: {
      type: 'Split',
      pattern: { Regex: pattern },
      behavior: 'Isolated',
      invert: false,
    },
  };
};

const fail = (why: string): never => {
  throw new Error(why);
};

describe('tokenizer.json checks', () => {
  it('pass the real pre-tokenizer patterns, shape and speed', () => {
    for (const [name, pattern] of Object.entries(REAL_PATTERNS)) {
      expect(backtrackingShape(pattern), name).toBeNull();
      expect(() => checkTokenizerJson(withPattern(pattern), 1000, fail), name).not.toThrow();
    }
  });

  it('refuse the shapes that backtrack exponentially', () => {
    expect(backtrackingShape('(a+)+$')).toMatch(/holds a quantifier/);
    expect(backtrackingShape('(?:a|a)*b')).toMatch(/holds an alternation/);
    expect(backtrackingShape('(a?){30}a{30}')).toMatch(/holds a quantifier/);
    expect(backtrackingShape('(a)\\1')).toMatch(/backreference/);
    expect(backtrackingShape('(?:ab)+|[a-z]{2,5}')).toBeNull();
  });
});

describe('safetensors names', () => {
  it('finds a name given twice, whatever the nesting and the strings hold', () => {
    expect(repeatedTopLevelKey('{"a":{"a":1,"b":"\\"a\\""},"b":[{"a":2}]}')).toBeNull();
    expect(repeatedTopLevelKey('{"a":{"x":1},"b":2,"a":3}')).toBe('a');
  });
});

describe('the bounded chat template', () => {
  it('renders as the library does', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Sum a list.' },
    ];
    const items = { messages, add_generation_prompt: true, eos_token: '<|im_end|>' };
    expect(new BoundedTemplate(CHAT_TEMPLATE).render(items)).toBe(
      new Template(CHAT_TEMPLATE).render(items),
    );
    const dated =
      '{{ strftime_now("%d %b %Y") }}|{% for i in range(3) %}{{ i }}{% endfor %}|{{ none is none }}';
    expect(new BoundedTemplate(dated).render({})).toBe(new Template(dated).render({}));
  });
});
