"""tokenizer.json files made with the `tokenizers` library itself, for the data-preparation tests: a
word-level tokenizer whose post-processor starts each document with <bos> (as Llama 3's adds
<|begin_of_text|>), with a vocabulary of any size, so Llama 3's 128,256 ids (above uint16's 65,535) can
be written and read."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers, processors

LLAMA3_VOCAB = 128_256


def word_tokenizer(folder: Path, vocab_size: int) -> Path:
    """folder/tokenizer.json: ids 0..3 are <unk>, <bos>, <eos>, <pad>; word `wN` is id N for N >= 4."""
    vocab = {"<unk>": 0, "<bos>": 1, "<eos>": 2, "<pad>": 3} | {f"w{i}": i for i in range(4, vocab_size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 1)])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder / "tokenizer.json"
