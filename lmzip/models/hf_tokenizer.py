"""A Hugging Face byte-level BPE (``tokenizer.json``) as lmzip's own byte-level BPE, token ids kept.

GPT-2-style tokenizers spell each byte as one printable character (``bytes_to_unicode``: the space is
``Ġ``); lmzip spells it as its latin-1 character. Remapping the vocabulary and the merges from one
alphabet to the other gives the same tokens on ASCII text and a tokenizer that codes every byte
string, valid UTF-8 or not. The checkpoint's normalizer, special-token matching, post-processor and
decoder are dropped: they are not lossless (an input that spells ``<|endoftext|>`` is coded as text).
"""

from __future__ import annotations

import json
from typing import Any

from lmzip.errors import LmzipError
from lmzip.models.tokenizer import SPLIT, BPETokenizer


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (the one every byte-level BPE of the Hub uses)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    out, extra = {b: chr(b) for b in keep}, 0
    for b in range(256):
        if b not in out:
            out[b] = chr(256 + extra)
            extra += 1
    return out


_U2B = {c: b for b, c in bytes_to_unicode().items()}


def _latin1(token: str) -> str | None:
    """A byte-level token in lmzip's alphabet, or None when it is not made of byte symbols."""
    try:
        return bytes(_U2B[c] for c in token).decode("latin-1")
    except KeyError:
        return None


def _split_pattern(pre: dict[str, Any] | None) -> str:
    """The checkpoint's own split regex where it has one (Llama 3), else GPT-2's."""
    items = (pre or {}).get("pretokenizers", [pre or {}])
    for p in items:
        if p.get("type") == "Split" and "Regex" in (p.get("pattern") or {}):
            return p["pattern"]["Regex"]
    return SPLIT


def convert(tok_json: str, vocab_size: int) -> BPETokenizer:
    """lmzip's BPE equivalent of a byte-level BPE ``tokenizer.json`` whose ids are below ``vocab_size``."""
    from tokenizers import Regex, models, pre_tokenizers
    from tokenizers import Tokenizer as HFTokenizer

    try:
        d = json.loads(tok_json)
        model = d["model"]
    except (ValueError, KeyError, TypeError) as e:
        raise LmzipError(f"tokenizer.json is not a Hugging Face tokenizer ({e})") from e
    if model.get("type") != "BPE":
        raise LmzipError(f"the tokenizer is a {model.get('type')} model; only byte-level BPE can be imported")
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise LmzipError("the tokenizer uses sub-word prefixes or suffixes; only byte-level BPE can be imported")
    vocab: dict[str, int] = dict(model["vocab"])
    missing = sum(1 for c in bytes_to_unicode().values() if c not in vocab)
    if missing:
        raise LmzipError(f"the tokenizer cannot code every byte string: {missing} of the 256 byte-level symbols "
                         "are missing from its vocabulary (not a byte-level BPE)")
    special = {t["id"]: t["content"] for t in d.get("added_tokens") or []}
    ids = {i: tok for tok, i in vocab.items()} | special
    new: dict[str, int] = {}
    for i, tok in sorted(ids.items()):
        s = None if i in special else _latin1(tok)
        if s is None or s in new:  # a special token (or a clash): ids the model knows, spelled so that no
            s = f"\x00<{i}>\x00"  # input is ever split into this piece, so text never becomes them
        new[s] = i
    if len(set(new.values())) != len(new) or max(new.values()) + 1 != len(new):
        raise LmzipError("the tokenizer's ids are not 0 .. n-1 once each")
    if max(i for s, i in new.items() if not s.startswith("\x00<")) >= vocab_size:
        raise LmzipError(f"the tokenizer has ids beyond the model's {vocab_size} outputs")
    merges = []
    for m in model.get("merges") or []:
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        la, lb = _latin1(a), _latin1(b)
        if la is None or lb is None:
            raise LmzipError(f"the tokenizer has a merge of non-byte symbols ({a!r} {b!r})")
        merges.append((la, lb))
    bpe = models.BPE(vocab=new, merges=merges, ignore_merges=bool(model.get("ignore_merges", False)))
    hf = HFTokenizer(bpe)
    hf.pre_tokenizer = pre_tokenizers.Split(Regex(_split_pattern(d.get("pre_tokenizer"))), behavior="isolated")
    out = BPETokenizer(hf.to_str())
    probe = bytes(range(256)) + "héllo wörld\n".encode()
    if out.decode(out.encode(probe)) != probe:  # what lmzip's tokenizer promises; checked, never assumed
        raise LmzipError("the converted tokenizer does not round-trip every byte")
    return out
