// The sampling interface. The tfjs KV-cache sampler implements it today; a WGSL engine
// can replace it later without touching callers.

export interface SampleOptions {
  /** Most new tokens per sequence (also capped by the model's context). */
  maxNewTokens: number;
  /** 0 = greedy. Log-probs are always those of softmax(logits / temperature) (1 when greedy). */
  temperature: number;
  /** Keep the k most likely tokens before sampling; 0 = all. */
  topK: number;
  /** Same seed, same prompts, same backend → same samples. Each row has its own stream. */
  seed: number;
  /** Token that ends a sequence (included in the output); default: the tokenizer's <|endoftext|>. */
  stopId: number;
  /** More tokens that end a sequence (a chat model's end of turn and end of text). */
  stopIds?: readonly number[];
}

export interface SampleResult {
  /** Generated tokens per prompt (not including the prompt), ending with stopId if it was hit. */
  tokens: number[][];
  /** log π(token) for every generated token, same shape as tokens. */
  logProbs: number[][];
  /** Whether each sequence ended with stopId (false: hit the length cap). */
  finished: boolean[];
}

export interface Sampler {
  sample(prompts: number[][], options: SampleOptions): Promise<SampleResult>;
}
