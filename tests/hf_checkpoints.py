"""Tiny random-weight Hugging Face checkpoints (GPT-2 and Llama) with a byte-level BPE trained here."""

from __future__ import annotations

from pathlib import Path

# ~3 KB of varied English-like text: the tokenizer's training text and the data the tests code
WORDS = ("the model predicts each next token and the coder turns those predictions into bits; "
         "a language model that guesses well leaves little to code. Numbers like 1234 and 56.78, "
         "punctuation (such as this!), CamelCase names, and a few accents: café, naïve, Zürich.\n").split(" ")
TEXT = " ".join(WORDS[(i * 7 + i // 5) % len(WORDS)] for i in range(520)).encode()
EOT = "<|endoftext|>"


def train_tokenizer(vocab: int = 400):
    """A GPT-2-style byte-level BPE (ByteLevel pre-tokenizer and alphabet), special token first (id 0)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[EOT], show_progress=False)
    tok.train_from_iterator([TEXT.decode()], trainer)
    return tok


def make_checkpoint(kind: str, path: Path, tok=None, seed: int = 0) -> Path:
    """Save a tiny random ``kind`` ("gpt2" or "llama") checkpoint with save_pretrained; returns ``path``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = tok or train_tokenizer()
    V, eot = tok.get_vocab_size(), tok.token_to_id(EOT)
    torch.manual_seed(seed)
    # initializer_range 0.1: predictions far from uniform, so the size comparison means something
    if kind == "gpt2":
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=128, vocab_size=V, bos_token_id=eot,
                         eos_token_id=eot, initializer_range=0.1)
        model = GPT2LMHeadModel(cfg)
    else:
        cfg = LlamaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                          intermediate_size=128, max_position_embeddings=128, vocab_size=V, bos_token_id=eot,
                          eos_token_id=eot, initializer_range=0.1, rope_theta=10000.0)
        model = LlamaForCausalLM(cfg)
    model.eval().save_pretrained(path)
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT).save_pretrained(path)
    return Path(path)


def hf_cross_entropy_bits(path: Path, ids, bos: int, segment: int) -> float:
    """The checkpoint's own cross-entropy (bits, float32 transformers) of ``ids`` coded in segments of
    ``segment`` tokens, each starting from ``bos`` (as lmzip codes them)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    ids = torch.as_tensor(ids, dtype=torch.long)
    total = 0.0
    with torch.no_grad():
        for s in range(0, len(ids), segment):
            y = ids[s : s + segment]
            x = torch.cat([torch.tensor([bos]), y[:-1]])[None]
            logp = torch.log_softmax(model(input_ids=x).logits[0].double(), -1)
            total -= float(logp[torch.arange(len(y)), y].sum())
    return total / float(torch.log(torch.tensor(2.0, dtype=torch.float64)))
