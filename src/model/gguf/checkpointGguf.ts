// A checkpoint as the one Hugging Face loader reads it (the lab's GPT-2 or the Hub's, the Llama
// family), a role's adapter merged in, as GGUF in llama.cpp's architecture for its config.
import type { GgufContents } from './ggufFile';
import { gpt2Gguf } from './ggufGpt2';
import { llamaGguf } from './ggufLlama';
import type { CheckpointGgufInput } from './ggufTensors';

export function checkpointGguf(input: CheckpointGgufInput): GgufContents {
  return input.checkpoint.config.family === 'gpt2' ? gpt2Gguf(input) : llamaGguf(input);
}
