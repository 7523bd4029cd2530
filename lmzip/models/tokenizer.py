"""Tokenizers that round-trip every byte string: raw bytes, or a byte-level BPE.

The BPE maps each byte to exactly one base symbol (its latin-1 character) before merging, so
any input, valid UTF-8 or not, tokenizes and detokenizes to the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

import numpy as np

# GPT-2's split pattern; with behavior="isolated" every character stays in some piece.
SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# The same pieces drawn along UTF-8 characters (``ubpe<N>``). The BPE sees each byte as its latin-1
# character, so SPLIT's \p{L} cuts a CJK or Cyrillic character's bytes into different pieces and no
# merge can ever join them. Here a word is a run of ASCII letters and two-byte characters (Latin,
# Greek, Cyrillic...), a run of three- or four-byte characters (CJK, kana) is one piece, CJK
# punctuation (U+3000-U+303F) stands apart, and a byte that starts no valid sequence is a piece alone.
# No piece holds a non-space followed by a space or newline, so ``chunks`` cuts it as it cuts SPLIT.
SPLIT_UTF8 = (
    r"'s|'t|'re|'ve|'m|'ll|'d"
    r"| ?(?:[A-Za-z]|[\x{c0}-\x{df}][\x{80}-\x{bf}])+"
    r"| ?[0-9]+"
    r"|(?:\x{e3}\x{80}[\x{80}-\x{bf}])+"
    r"|(?:(?!\x{e3}\x{80})[\x{e0}-\x{ef}][\x{80}-\x{bf}]{2}|[\x{f0}-\x{f7}][\x{80}-\x{bf}]{3})+"
    r"| ?[^\sA-Za-z0-9\x{80}-\x{ff}]+"
    r"|\s+(?!\S)|\s+"
    r"|[\x{80}-\x{ff}]"
)
# Characters per call of the Hugging Face tokenizer: its encoding keeps ~470 bytes per token (a 4 MiB
# block peaked at 635 MB in one call), so long inputs are tokenized in pieces of this size.
CHUNK = 1 << 18
_CUT = re.compile(r"\S[ \n]")


def chunks(text: str, size: int = CHUNK) -> Iterator[str]:
    """``text`` in pieces of at most ``size`` characters whose tokens are the whole text's tokens.

    Each piece ends, where it can, just before a space or newline that follows a character that is
    not white space. Every alternative of SPLIT that matches white space matches only white space,
    and its one lookahead ends inside such a run, so the pattern always ends a piece at that point
    and starts the next one there alike. Python's ``\\S`` excludes every character that SPLIT's ``\\s``
    matches, so the test errs on the safe side. With no such point, a hard cut: still a round trip,
    and the same cut on every machine.
    """
    start, n = 0, len(text)
    while n - start > size:
        cuts = [m.start() + 1 for m in _CUT.finditer(text, start + 1, start + size + 1)]
        end = cuts[-1] if cuts else start + size
        yield text[start:end]
        start = end
    yield text[start:]


class ByteTokenizer:
    """One token per byte (vocabulary 256)."""

    kind = "bytes"
    vocab_size = 256

    def encode(self, data: bytes) -> np.ndarray:
        """Bytes -> token ids (int64)."""
        return np.frombuffer(data, dtype=np.uint8).astype(np.int64)

    def decode(self, ids: Iterable[int]) -> bytes:
        """Token ids -> bytes."""
        return bytes(np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids, dtype=np.uint8))

    def token_bytes(self, i: int) -> bytes:
        """The bytes of one token."""
        return bytes([i])

    def to_json(self) -> str:
        """Serialized form stored beside the model."""
        return json.dumps({"kind": "bytes"})


class BPETokenizer:
    """A Hugging Face `tokenizers` BPE over the 256 latin-1 base symbols."""

    kind = "bpe"

    def __init__(self, tok_json: str):
        from tokenizers import Tokenizer

        self._json = tok_json
        self._tok = Tokenizer.from_str(tok_json)
        self.vocab_size = self._tok.get_vocab_size()
        vocab = self._tok.get_vocab()
        self._pieces: list[bytes] = [b""] * self.vocab_size
        for s, i in vocab.items():
            self._pieces[i] = s.encode("latin-1")

    def encode(self, data: bytes) -> np.ndarray:
        """Bytes -> token ids (int64), piece by piece (``chunks``): the same ids as one call, in bounded memory."""
        ids = [np.asarray(self._tok.encode(c, add_special_tokens=False).ids, dtype=np.int64)
               for c in chunks(data.decode("latin-1"), CHUNK)]
        return np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)

    def encode_batch(self, docs: list[bytes]) -> list[np.ndarray]:
        """Encode many documents in parallel (used for training data)."""
        enc = self._tok.encode_batch([d.decode("latin-1") for d in docs], add_special_tokens=False)
        return [np.asarray(e.ids, dtype=np.int64) for e in enc]

    def decode(self, ids: Iterable[int]) -> bytes:
        """Token ids -> bytes, 64 Ki tokens at a time (a Python object per token only for those)."""
        ids = ids if isinstance(ids, np.ndarray) else np.fromiter(ids, dtype=np.int64)
        piece = self._pieces.__getitem__
        return b"".join(b"".join(map(piece, ids[i : i + (1 << 16)].tolist())) for i in range(0, len(ids), 1 << 16))

    def token_bytes(self, i: int) -> bytes:
        return self._pieces[i]

    def to_json(self) -> str:
        return self._json


Tokenizer = ByteTokenizer | BPETokenizer


def train_bpe(texts: Iterator[bytes], vocab_size: int, split: str = SPLIT) -> BPETokenizer:
    """Learn a byte-level BPE of ``vocab_size`` symbols (256 of them the single bytes) over ``split``'s pieces."""
    from tokenizers import Regex, models, pre_tokenizers, trainers
    from tokenizers import Tokenizer as HFTokenizer

    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(split), behavior="isolated")
    alphabet = [chr(i) for i in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=alphabet, show_progress=False, special_tokens=[]
    )
    tok.train_from_iterator((t.decode("latin-1") for t in texts), trainer=trainer)
    out = BPETokenizer(tok.to_str())
    assert all(out.token_bytes(out._tok.token_to_id(c)) == c.encode("latin-1") for c in alphabet)
    return out


def tokenizer_from_json(s: str) -> Tokenizer:
    """Rebuild a tokenizer from its stored form."""
    d = json.loads(s)
    if d.get("kind") == "bytes":
        return ByteTokenizer()
    return BPETokenizer(s)
