"""tiktoken's BPE ranks without the network: they ship in the npm package `js-tiktoken`, from which they are rewritten
as tiktoken's own cache files (named by the sha1 of the URL tiktoken would download, checked against the sha256 it
expects), so a peer that builds a tokenizer at start never reaches the network."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

JS_TIKTOKEN = "js-tiktoken@1.0.21"
ENCODINGS = {  # name → (the URL tiktoken downloads it from, the sha256 tiktoken checks)
    "o200k_base": ("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": ("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
}


def ranks_file(cache: Path, encoding: str) -> Path:
    """Where tiktoken looks for `encoding` in `cache` (TIKTOKEN_CACHE_DIR)."""
    return cache / hashlib.sha1(ENCODINGS[encoding][0].encode()).hexdigest()


def ensure_ranks(cache: Path, *encodings: str) -> None:
    """Write each encoding's cache file that is not there yet (one `npm pack` for all)."""
    todo = [e for e in encodings if not ranks_file(cache, e).exists()]
    if not todo:
        return
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", JS_TIKTOKEN, "--silent"], cwd=tmp, check=True, capture_output=True)
        tarball = next(Path(tmp).glob("js-tiktoken-*.tgz"))
        with tarfile.open(tarball) as tar:
            for encoding in todo:
                member = tar.extractfile(f"package/dist/ranks/{encoding}.js")
                assert member is not None
                out = _tiktoken_format(member.read().decode())
                if hashlib.sha256(out).hexdigest() != ENCODINGS[encoding][1]:
                    raise RuntimeError(f"{encoding} ranks rebuilt from {JS_TIKTOKEN} do not match tiktoken's sha256")
                tmp_file = ranks_file(cache, encoding).with_suffix(".tmp")
                tmp_file.write_bytes(out)
                tmp_file.replace(ranks_file(cache, encoding))


def _tiktoken_format(module_text: str) -> bytes:
    """js-tiktoken's `export default {bpe_ranks: "<name> <offset> token token …\n…"}` as tiktoken's file: one
    `token rank` line each, in rank order."""
    data = json.loads(module_text.removeprefix("export default ").rstrip().rstrip(";"))
    ranks: dict[str, int] = {}
    for line in data["bpe_ranks"].split("\n"):
        if line:
            _, offset, *tokens = line.split(" ")
            for i, token in enumerate(tokens):
                ranks[token] = int(offset) + i
    return "".join(f"{token} {rank}\n" for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])).encode()
