"""What gpt2_reference.py and llama_reference.py share: where the data-file
packages put their files, tiktoken ranks, the BPE merges those ranks imply,
GPT-2's spelling of bytes, the seeded generator of the texts, the lines of
the TEXT_FILEs, and writing cases.

The data-file packages (openai-whisper, llama-models, mistral-common) are
installed without their dependencies, so they are never imported: their
files are read from the environment's site-packages by path.
"""

import importlib.metadata
import json
import os
import shutil
import sys
import sysconfig
from pathlib import Path

import tiktoken
import tiktoken.load

# tiktoken caches whatever its loaders read, local paths included, under the
# temporary directory keyed by the path alone, and would hand back a stale
# copy once the file at that path changed: read the files afresh (tiktoken
# looks at the variable on each read).
os.environ["TIKTOKEN_CACHE_DIR"] = ""


class Disagreement(Exception):
    """A reference disagrees with itself, with the other, or with a file."""


def fail(message):
    raise Disagreement(message)


def package_file(relative):
    """A file a data-file package installed, by its path in site-packages."""
    path = Path(sysconfig.get_paths()["purelib"]) / relative
    if not path.is_file():
        fail(f"{path} is missing: run scripts/python-env.sh (it installs requirements/files.txt)")
    return path


def version(distribution):
    return importlib.metadata.version(distribution)


def copy_file(source, destination):
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)


# --- tiktoken ranks and the merges they imply -------------------------------


def load_ranks(path):
    """A tiktoken rank file (`base64(bytes) rank` a line) as bytes -> rank."""
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    if sorted(ranks.values()) != list(range(len(ranks))):
        fail(f"{path}: the ranks are not 0..{len(ranks) - 1}, each once")
    return ranks


def tokens_by_rank(ranks):
    ordered = [b""] * len(ranks)
    for token, rank in ranks.items():
        ordered[rank] = token
    return ordered


def bpe_parts(token, ranks, below):
    """Byte-pair encoding of `token`'s bytes using only the ranks below
    `below`: repeatedly join the adjacent pair whose join has the lowest rank
    (the leftmost such pair on a tie), as tiktoken does, until none is left."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, where = below, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], below)
            if rank < best:
                best, where = rank, i
        if where < 0:
            break
        parts[where : where + 2] = [parts[where] + parts[where + 1]]
    return parts


def merged_tokens(ranks):
    """The tokens of rank 256 on, in rank order, after checking that the
    first 256 ranks are the 256 single bytes, as a byte-level BPE needs."""
    ordered = tokens_by_rank(ranks)
    if len({token for token in ordered[:256] if len(token) == 1}) != 256:
        fail("ranks 0..255 are not the 256 single bytes")
    return list(enumerate(ordered))[256:]


def unreachable_tokens(ranks):
    """(rank, token, parts) of the tokens that byte-pair encoding of their own
    bytes under the ranks below them does not bring to exactly two parts."""
    out = []
    for rank, token in merged_tokens(ranks):
        parts = bpe_parts(token, ranks, rank)
        if len(parts) != 2:
            out.append((rank, token, parts))
    return out


def derive_merges(ranks):
    """One merge a token, in rank order, as GPT-2's vocab.bpe has them: token
    r >= 256 is the join of the two parts its own bytes come to under the
    ranks below r. With these merges a merges-list BPE gives tiktoken's
    tokens only when every token comes to exactly two parts: fails naming
    the first one that does not."""
    merges = []
    for rank, token in merged_tokens(ranks):
        parts = bpe_parts(token, ranks, rank)
        if len(parts) != 2:
            fail(f"token {rank} {token!r} comes to {len(parts)} parts under the ranks below it, "
                 f"not 2: {parts!r}")
        merges.append((parts[0], parts[1]))
    return merges


def all_split_merges(ranks):
    """Every way of cutting each token in two tokens, in rank order of the
    token (the shorter left part first), as Hugging Face's conversion of
    tiktoken ranks writes them and Llama 3's published tokenizer.json holds
    them. tiktoken joins any two adjacent parts whose join is a token, the
    lowest-ranked join first, so its tokens need not be the join of the two
    parts their own bytes come to (see unreachable_tokens): with every cut
    listed, the merges-list BPE joins what tiktoken joins. Fails naming a
    token that cannot be cut in two tokens at all."""
    merges = []
    for rank, token in merged_tokens(ranks):
        cuts = [(token[:i], token[i:]) for i in range(1, len(token))
                if token[:i] in ranks and token[i:] in ranks]
        if not cuts:
            fail(f"token {rank} {token!r} is not the join of any two tokens")
        merges += cuts
    return merges


# --- GPT-2's spelling of bytes ----------------------------------------------


def byte_alphabet():
    """byte -> character, GPT-2's byte-level alphabet (encoder.py's
    bytes_to_unicode, which tokenizer.json's ByteLevel shares): the printable
    Latin-1 bytes stand for themselves, and the others (controls, space,
    DEL, no-break and soft hyphen) take U+0100 onwards in byte order, so
    that no token is spelled with white space or a control character."""
    def kept(b):
        return ord("!") <= b <= ord("~") or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF

    alphabet, moved = {}, 0
    for b in range(256):
        if kept(b):
            alphabet[b] = chr(b)
        else:
            alphabet[b] = chr(256 + moved)
            moved += 1
    return alphabet


BYTE_ALPHABET = byte_alphabet()


def spell(token):
    return "".join(BYTE_ALPHABET[b] for b in token)


# --- texts -------------------------------------------------------------------


class Mulberry32:
    """mulberry32, the small seeded generator the earlier JavaScript
    references used, in 32-bit arithmetic, so that the generated lines are
    the same ones as before and the same on every run."""

    MASK = 0xFFFFFFFF

    def __init__(self, seed):
        self.state = seed & self.MASK

    def random(self):
        """A float in [0, 1)."""
        m = self.MASK
        self.state = (self.state + 0x6D2B79F5) & m
        s = self.state
        t = ((s ^ (s >> 15)) * (s | 1)) & m
        t = ((t + (((t ^ (t >> 7)) * (t | 61)) & m)) & m) ^ t
        return ((t ^ (t >> 14)) & m) / 4294967296

    def below(self, n):
        return int(self.random() * n)

    def pick(self, items):
        return items[self.below(len(items))]


def read_text(path):
    return Path(path).read_text(encoding="utf-8")


def lines_of(content):
    """The lines of a file's text, empty ones left out (a line keeps a CR of
    CR LF)."""
    return [line for line in content.split("\n") if line]


# --- output ------------------------------------------------------------------


def write_jsonl(path, records):
    """One JSON object a line, UTF-8 as it is (not \\u escapes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def usage_or_args(script, argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(f"usage: python {script} OUT_DIR [TEXT_FILE...]", file=sys.stderr)
        sys.exit(2)
    return Path(argv[1]), argv[2:]


def run(main):
    """Runs main(), turning a Disagreement or a file that cannot be read into
    a message and exit code 1."""
    try:
        main()
    except (Disagreement, OSError) as error:
        print(f"{Path(sys.argv[0]).name}: {error}", file=sys.stderr)
        sys.exit(1)
