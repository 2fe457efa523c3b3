// A Hugging Face checkpoint's tokenizer and chat template, through the maintained libraries:
// tokenizer.json by @huggingface/tokenizers, tokenizer_config.json's chat_template by
// @huggingface/jinja. The ids that end a turn or the text come from generation_config.json's
// eos_token_id (a number or a list), else tokenizer_config.json's eos_token. Both files are
// untrusted: tokenizer.json is checked against config.json's vocab_size first (hfTokenizerCheck.ts:
// ids, merges, its regexes' shapes and speed), and the template renders under bounds
// (chatTemplate.ts), tried once here so a hostile one is refused when the model loads.
import { Tokenizer } from '@huggingface/tokenizers';
import { BoundedTemplate } from './chatTemplate';
import { checkTokenizerJson } from './hfTokenizerCheck';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export class HfTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly template: BoundedTemplate | null;
  /** Ids that end generation: end of turn and end of text. */
  readonly stopIds: number[];
  readonly vocabSize: number;

  constructor(
    tokenizerJson: unknown,
    private readonly tokenizerConfig: Record<string, unknown> | null,
    generationConfig: Record<string, unknown> | null,
    label = 'checkpoint',
    /** config.json's vocab_size: every id of the tokenizer must lie below it. */
    vocabLimit = Number.MAX_SAFE_INTEGER,
  ) {
    const fail = (why: string): never => {
      throw new Error(`${label}: tokenizer.json is refused: ${why}`);
    };
    checkTokenizerJson(tokenizerJson, vocabLimit, fail);
    try {
      this.tokenizer = new Tokenizer(tokenizerJson as object, tokenizerConfig ?? {});
    } catch (err) {
      throw new Error(`${label}: tokenizer.json cannot be read (${(err as Error).message})`);
    }
    this.vocabSize = this.tokenizer.get_vocab(true).size;
    if (this.vocabSize > vocabLimit)
      fail(`${this.vocabSize} tokens, more than config.json's vocab_size ${vocabLimit}`);
    const source = chatTemplateSource(tokenizerConfig);
    try {
      this.template = source === null ? null : new BoundedTemplate(source);
    } catch (err) {
      throw new Error(
        `${label}: tokenizer_config.json's chat_template does not parse (${(err as Error).message})`,
      );
    }
    try {
      // Once now, so a template that loops or explodes is refused with the model, not mid-run.
      if (this.template) this.applyChatTemplate([{ role: 'user', content: 'Hello.' }]);
    } catch (err) {
      const message = (err as Error).message;
      throw new Error(
        message.startsWith('chat_template')
          ? `${label}: tokenizer_config.json's ${message}`
          : `${label}: tokenizer_config.json's chat_template fails on one user turn (${message})`,
      );
    }
    const eos = generationConfig?.eos_token_id;
    const ids = Array.isArray(eos) ? eos : typeof eos === 'number' ? [eos] : [];
    if (ids.length === 0) {
      const token = tokenText(tokenizerConfig?.eos_token);
      const id = token === null ? undefined : this.tokenizer.token_to_id(token);
      if (id !== undefined) ids.push(id);
    }
    this.stopIds = ids.filter((id): id is number => Number.isInteger(id));
  }

  /**
   * Text → ids. With `addSpecialTokens` (the default, as `tokenizer(text)` does) the tokenizer's
   * post-processor may add its own (a BOS); a rendered chat template already holds them, so it is
   * encoded without (as `apply_chat_template(tokenize=True)` does).
   */
  encode(text: string, addSpecialTokens = true): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids;
  }

  decode(ids: readonly number[], skipSpecialTokens = false): string {
    // The library refuses an empty list; an empty completion is empty text.
    if (ids.length === 0) return '';
    return this.tokenizer.decode(ids as number[], { skip_special_tokens: skipSpecialTokens });
  }

  tokenId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  get hasChatTemplate(): boolean {
    return this.template !== null;
  }

  /** The chat template rendered as transformers' apply_chat_template(tokenize=False) does. */
  applyChatTemplate(messages: readonly ChatMessage[], addGenerationPrompt = true): string {
    if (!this.template)
      throw new Error('the checkpoint has no chat_template (tokenizer_config.json)');
    const special: Record<string, string> = {};
    for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
      const token = tokenText(this.tokenizerConfig?.[key]);
      if (token !== null) special[key] = token;
    }
    return this.template.render({
      ...special,
      messages,
      add_generation_prompt: addGenerationPrompt,
    });
  }
}

/** tokenizer_config.json's chat_template: a string, or a list of named ones ("default" first). */
function chatTemplateSource(config: Record<string, unknown> | null): string | null {
  const t = config?.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t as { name?: string; template?: string }[];
    return (named.find((x) => x.name === 'default') ?? named[0])?.template ?? null;
  }
  return null;
}

/** A special token as tokenizer_config.json writes it: a string or {content}. */
function tokenText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : null;
}
