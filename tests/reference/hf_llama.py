#!/usr/bin/env python3
"""An independent reference of Hugging Face's causal LMs, in numpy, for the lab's tests.

Written from the published architecture (transformers' modeling_llama.py, modeling_qwen2.py,
modeling_qwen3.py, modeling_gpt2.py), not from the lab's TypeScript, so that the two agree only
if both follow Hugging Face. Computes in float32, as a model loaded with torch_dtype=float32:
16-bit weights are widened exactly, then every product is float32.

    python3 tests/reference/hf_llama.py CHECKPOINT_DIR --ids 1,2,3 [--adapter DIR]
        → {"logits": [...]}  (the last position's logits)
    python3 tests/reference/hf_llama.py CHECKPOINT_DIR --encode "text"
        → {"ids": [...]}     (byte-level BPE over ASCII text, added tokens matched first)

Only numpy; safetensors is parsed by hand (8-byte little-endian header length, JSON header,
raw little-endian data).
"""

import argparse
import json
import math
import os
import re
import struct
import sys

import numpy as np


# ---- safetensors -------------------------------------------------------------------------


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = memoryview(data)[8 + n :]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = body[begin:end]
        dtype = entry["dtype"]
        if dtype == "F32":
            arr = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dtype == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            # bfloat16 is the top half of a float32.
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: {name} has dtype {dtype}")
        out[name] = arr.reshape(entry["shape"])
    return out


def read_weights(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        weights = {}
        for shard in shards:
            weights.update(read_safetensors(os.path.join(folder, shard)))
        return weights
    return read_safetensors(os.path.join(folder, "model.safetensors"))


# ---- PEFT LoRA ---------------------------------------------------------------------------


def read_adapter(folder):
    """{module name without PEFT's prefix: (A [r, in], B [out, r], scale)}."""
    with open(os.path.join(folder, "adapter_config.json")) as f:
        cfg = json.load(f)
    r = cfg["r"]
    alpha = cfg["lora_alpha"]
    scale = alpha / math.sqrt(r) if cfg.get("use_rslora") else alpha / r
    tensors = read_safetensors(os.path.join(folder, "adapter_model.safetensors"))
    out = {}
    prefix = "base_model.model."
    for name, a in tensors.items():
        if not name.endswith(".lora_A.weight"):
            continue
        module = name[len(prefix) : -len(".lora_A.weight")]
        b = tensors[name.replace(".lora_A.", ".lora_B.")]
        out[module] = (a, b, np.float32(scale))
    return out


# ---- the Llama family (Llama, Qwen2, Qwen3) ------------------------------------------------


def rms_norm(x, weight, eps):
    x = x.astype(np.float32)
    variance = np.mean(x * x, axis=-1, keepdims=True)
    return weight * (x / np.sqrt(variance + np.float32(eps))).astype(np.float32)


def silu(x):
    return x / (np.float32(1) + np.exp(-x))


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


class Linear:
    """nn.Linear: y = x Wᵀ + b, W [out, in]; with a LoRA adapter, + scale · (x Aᵀ) Bᵀ."""

    def __init__(self, w, name, bias=None, adapter=None):
        self.w, self.b = w, bias
        self.lora = (adapter or {}).get(name)

    def __call__(self, x):
        y = x @ self.w.T
        if self.b is not None:
            y = y + self.b
        if self.lora is not None:
            a, b, scale = self.lora
            y = y + scale * ((x @ a.T) @ b.T)
        return y.astype(np.float32)


def rope_scaled_inv_freq(cfg, inv_freq):
    """rope_scaling as transformers' modeling_rope_utils.py applies it to the default inv_freq
    (float32 throughout): `linear` (_compute_linear_scaling_rope_parameters) and `llama3`
    (_compute_llama3_parameters); both leave the attention factor at 1."""
    scaling = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type == "default":
        return inv_freq
    if rope_type == "linear":
        return (inv_freq / np.float32(scaling["factor"])).astype(np.float32)
    if rope_type != "llama3":
        raise SystemExit(f"rope_type {rope_type} is not in this reference")
    factor = scaling["factor"]
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = (np.float32(2 * math.pi) / inv_freq).astype(np.float32)
    # Longer than low_freq_wavelen: divided by factor; shorter than high_freq_wavelen: kept.
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / np.float32(factor), inv_freq)
    # Between: interpolated with a smooth factor.
    smooth_factor = (np.float32(old_context_len) / wavelen - np.float32(low_freq_factor)) / np.float32(
        high_freq_factor - low_freq_factor
    )
    smoothed = (1 - smooth_factor) * inv_freq_llama / np.float32(factor) + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium, smoothed, inv_freq_llama).astype(np.float32)


def llama_logits(cfg, w, ids, adapter):
    model_type = cfg["model_type"]
    hidden = cfg["hidden_size"]
    n_heads = cfg["num_attention_heads"]
    n_kv = cfg.get("num_key_value_heads") or n_heads
    head_dim = cfg.get("head_dim") or hidden // n_heads
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta", 10000.0)
    T = len(ids)

    def lin(name, bias=False):
        return Linear(w[name + ".weight"], name, w.get(name + ".bias") if bias else None, adapter)

    # RoPE: inv_freq over even dims, cos/sin of position × inv_freq, duplicated (rotate-half).
    inv_freq = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.int64).astype(np.float32) / head_dim))
    inv_freq = rope_scaled_inv_freq(cfg, inv_freq.astype(np.float32))
    freqs = np.arange(T, dtype=np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)

    mask = np.triu(np.full((T, T), -np.inf, dtype=np.float32), k=1)
    x = w["model.embed_tokens.weight"][np.array(ids)]
    qkv_bias = model_type == "qwen2" or bool(cfg.get("attention_bias"))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = lin(p + "self_attn.q_proj", qkv_bias)(h).reshape(T, n_heads, head_dim)
        k = lin(p + "self_attn.k_proj", qkv_bias)(h).reshape(T, n_kv, head_dim)
        v = lin(p + "self_attn.v_proj", qkv_bias)(h).reshape(T, n_kv, head_dim)
        if model_type == "qwen3":
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # repeat_kv: each key/value head serves n_heads / n_kv consecutive query heads.
        k = np.repeat(k, n_heads // n_kv, axis=0)
        v = np.repeat(v, n_heads // n_kv, axis=0)
        scores = (q @ k.transpose(0, 2, 1)) * np.float32(head_dim**-0.5) + mask
        attn = (softmax(scores) @ v).transpose(1, 0, 2).reshape(T, n_heads * head_dim)
        x = x + lin(p + "self_attn.o_proj", bool(cfg.get("attention_bias")) and model_type != "qwen2")(attn)
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = lin(p + "mlp.gate_proj")(h)
        up = lin(p + "mlp.up_proj")(h)
        x = x + lin(p + "mlp.down_proj")(silu(gate) * up)
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    return Linear(head, "lm_head", None, adapter)(x[-1:])[0]


# ---- GPT-2 (the lab's own tiny models use its names) ---------------------------------------


def layer_norm(x, g, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * g + b


def gelu_new(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def merge_conv1d_adapter(w, adapter):
    """PEFT's merge on GPT-2's Conv1D (fan_in_fan_out): W [in, out] += scale · (B A)ᵀ."""
    w = dict(w)
    for module, (a, b, scale) in adapter.items():
        w[module + ".weight"] = w[module + ".weight"] + scale * (b @ a).T
    return w


def gpt2_logits(cfg, w, ids, adapter=None):
    if adapter:
        w = merge_conv1d_adapter(w, adapter)
    d, H = cfg["n_embd"], cfg["n_head"]
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    T, hd = len(ids), d // H
    x = w["transformer.wte.weight"][np.array(ids)] + w["transformer.wpe.weight"][:T]
    mask = np.triu(np.full((T, T), -np.inf, dtype=np.float32), k=1)
    for i in range(cfg["n_layer"]):
        p = f"transformer.h.{i}."
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # Conv1D: [in, out]
        q, k, v = (t.reshape(T, H, hd).transpose(1, 0, 2) for t in np.split(qkv, 3, axis=-1))
        att = softmax(q @ k.transpose(0, 2, 1) / np.float32(math.sqrt(hd)) + mask) @ v
        x = x + att.transpose(1, 0, 2).reshape(T, d) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        h = gelu_new(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], eps)
    # GPT2LMHeadModel ties lm_head to wte unless tie_word_embeddings is false.
    head = w["transformer.wte.weight"] if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return (x[-1:] @ head.T)[0]


# ---- byte-level BPE (GPT-2's byte-to-unicode table, merges by rank), ASCII pre-split -------


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


# GPT-2's split pattern with \p{L} / \p{N} read as ASCII letters / digits (the tests' texts are ASCII).
SPLIT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def bpe_encode(folder, text):
    with open(os.path.join(folder, "tokenizer.json")) as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    ranks = {tuple(m.split(" ") if isinstance(m, str) else m): i for i, m in enumerate(tok["model"]["merges"])}
    added = {t["content"]: t["id"] for t in tok["added_tokens"]}
    table = bytes_to_unicode()
    ids = []
    pattern = "(" + "|".join(re.escape(a) for a in sorted(added, key=len, reverse=True)) + ")" if added else None
    pieces = re.split(pattern, text) if pattern else [text]
    for piece in pieces:
        if piece in added:
            ids.append(added[piece])
            continue
        for word in SPLIT.findall(piece):
            parts = [table[b] for b in word.encode("utf-8")]
            while len(parts) > 1:
                pairs = [(ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
                rank, i = min(pairs)
                if rank == math.inf:
                    break
                parts = parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2 :]
            ids.extend(vocab[p] for p in parts)
    return ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--ids")
    ap.add_argument("--encode")
    ap.add_argument("--adapter")
    args = ap.parse_args()
    if args.encode is not None:
        print(json.dumps({"ids": bpe_encode(args.checkpoint, args.encode)}))
        return
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        cfg = json.load(f)
    ids = [int(s) for s in args.ids.split(",")]
    w = read_weights(args.checkpoint)
    adapter = read_adapter(args.adapter) if args.adapter else None
    if cfg["model_type"] == "gpt2":
        # GPT2LMHeadModel's base_model_prefix: the original checkpoints name h.0…, wte, ln_f
        # without "transformer.", and transformers adds it on load.
        w = {k if k.startswith("transformer.") or k == "lm_head.weight" else "transformer." + k: v for k, v in w.items()}
        logits = gpt2_logits(cfg, w, ids, adapter)
    elif cfg["model_type"] in ("llama", "qwen2", "qwen3"):
        logits = llama_logits(cfg, w, ids, adapter)
    else:
        raise SystemExit(f"unknown model_type {cfg['model_type']}")
    json.dump({"logits": [float(v) for v in logits]}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
