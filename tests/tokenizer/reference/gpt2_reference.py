"""python gpt2_reference.py OUT_DIR [TEXT_FILE...]

Writes what the GPT2Reference.* tests read into OUT_DIR:
 - files/encoder.json and files/vocab.bpe: GPT-2's vocabulary and merges in
   OpenAI's format, derived from GPT-2's ranks in tiktoken's format
   (whisper/assets/gpt2.tiktoken of openai-whisper): each token is spelled in
   GPT-2's byte alphabet, and the merge of rank r joins the two parts that
   byte-pair encoding of its bytes comes to under the ranks below r. Read
   back through tiktoken's own reader of OpenAI's format they must give the
   ranks they came from, and they must be OpenAI's published files byte for
   byte (their SHA-256);
 - files/gpt2.tiktoken: a copy of the ranks;
 - cases.jsonl: one JSON object a line, {"text", "pieces", "ids"}: `ids` from
   tiktoken, the reference, on those ranks with GPT-2's pattern; `pieces`
   the matches of GPT-2's pre-tokenizer pattern as Hugging Face's `tokenizers`
   runs it. The pieces must join to the text, tiktoken's ids of the pieces
   one by one must be its ids of the text, and tiktoken must decode the ids
   back to the text; fails naming the text otherwise.
The texts:
 - 3000 lines generated from a fixed seed out of fragments chosen to cover
   what GPT-2's pattern tells apart: contractions, letters of many scripts
   (accents, combining marks, CJK, astral-plane letters), digits and other
   numbers, punctuation runs, runs of every kind of white space, emoji;
 - every line of each TEXT_FILE (real English prose, Markdown and code);
 - one document: the first 500 generated lines joined by newlines.
Prints the number of texts and tokens and the versions used.
"""

import hashlib
import json
import sys
import time

import tokenizers
from tiktoken_ext.openai_public import r50k_pat_str
from tokenizers import Regex, pre_tokenizers

import reference_common as common

RANKS_FILE = "whisper/assets/gpt2.tiktoken"
END_OF_TEXT = "<|endoftext|>"
END_OF_TEXT_ID = 50256
# The SHA-256 of the encoder.json and vocab.bpe OpenAI published with GPT-2,
# as tiktoken pins them (gpt2() in tiktoken_ext/openai_public.py): the files
# written here must be those, byte for byte.
OPENAI_SHA256 = {
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
}

# GPT-2's pattern as its encoder.py spells it. tiktoken's r50k_pat_str is
# an equivalent, faster spelling, but its `\s++$` means "at the end of the
# text" only in tiktoken's regex engine: in Oniguruma, which `tokenizers`
# runs, `$` is the end of any line. So each library gets the spelling made
# for it, and the checks below hold them to the same pieces.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# The fragment pools of the generated lines (those of the earlier JavaScript
# reference, so that the lines are the same).
WORDS = [
    "the", "The", "THE", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "model",
    "parallel", "pipeline", "Strata", "tokenizer", "GPT", "a", "I", "x", "hello", "World",
    "internationalization", "e.g.", "i.e.", "U.S.A.", "Mr.", "don't", "I'm", "they're",
    "we've", "you'll", "he'd", "it's", "can't", "O'Neil", "rock'n'roll", "DON'T",
    "IT'S", "'tis", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'x", "'",
    "''", "ol'", "cats'", "snake_case", "camelCase", "e-mail", "C++", "C#", "node.js",
]
NUMBERS = [
    "0", "7", "42", "1999", "3.14159", "1,000,000", "2024-01-05", "12:30", "-17", "+3", "1e-5",
    "0x1F", "007", "٣٤٥", "१२३", "১২", "½", "²", "³", "Ⅻ", "ⅷ", "１２３", "①", "𝟙𝟚𝟛", "߁", "〇",
    "42nd", "v2", "x86_64", "MP3", "4K", "3D",
]
PUNCTUATION = [
    ".", ",", "!", "?", "?!", "...", "…", "—", "–", "-", "«", "»", "“", "”", "„", "‘", "’", '"',
    "(", ")", "[", "]", "{", "}", "<|endoftext|>", "#", "@user", "$5", "100%", "a/b", "\\", "|",
    "`code`", "~~", ";", ":", ":-)", "&&", "||", "=>", "->", "==", "!=", "<=", "**", "//", "/*",
    "*/", '<div class="x">', "</div>", "http://example.com/a?b=c&d=e", "¿", "¡", "§", "¶", "•",
    "、", "。", "，", "：", "！", "？", "「", "」", "©", "®", "™", "°", "±", "×", "÷", "∑", "∞", "→",
    "€", "£", "¥", "₿", "∀", "∈", "ℝ",
]
SPACES = [
    " ", " ", " ", "  ", "   ", "    ", "\t", "\t\t", "\n", "\n\n", "\r\n", " \n", "\n ", " \n ",
    "\u00a0", "\u3000", "\u2028", "\u2029", "\u2003", "\u2009", "\u202f", "\u205f", "\u1680",
    "\ufeff", "\u000b", "\u000c", "\r", " \t ", "\u200b", "\u0085", "\u001f", "\u00a0 ", " \u00a0",
]
LETTERS = [
    "café", "naïve", "résumé", "Ångström", "Straße", "façade", "piñata", "Zürich", "São",
    "Dvořák", "łódź", "Œuvre", "e\u0301", "cafe\u0301", "n\u0303", "ǅemal", "ﬁne", "Ǆ",
    "Καλημέρα", "κόσμε", "Привет", "мир", "Ёлка", "שלום", "עולם", "مرحبا", "بالعالم", "नमस्ते",
    "दुनिया", "สวัสดี", "ชาวโลก", "你好", "世界", "中文字符", "こんにちは", "カタカナ", "ｶﾀｶﾅ", "안녕하세요",
    "세계", "გამარჯობა", "Բարեւ", "வணக்கம்", "ᐊᐃᓐᓇᐃ", "ⴰⵣⵓⵍ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𐍈", "𓀀", "ꙮ", "ǂ",
    "ʰ", "ː", "ª", "º", "µ", "ß", "ĳ",
]
EMOJI = [
    "😀", "👍", "👍🏽", "👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "🇯🇵", "❤️", "❤", "🤖", "✨",
    "🧑\u200d💻", "🏳️\u200d🌈", "☃", "♥", "⚡", "🎉🎉🎉", "🙂🙃", "#️⃣", "1️⃣",
]
CODE = [
    "int main() { return 0; }", "def f(x):\n    return x**2", "    indented", "\t\tif (a && b) {",
    "// comment", "SELECT * FROM t WHERE id = 1;", "for (int i = 0; i < n; ++i)", "#include <vector>",
    "x = [1, 2, 3]", '{"key": "value", "n": [1,2]}', "$ make test -j2", "foo(bar, baz);",
    "  - item", "| a | b |", "**bold** _it_",
]
# Words weigh three times and letters twice, as before.
POOLS = [WORDS, WORDS, WORDS, NUMBERS, PUNCTUATION, LETTERS, LETTERS, EMOJI, CODE]
SEED = 0x5EED1234
GENERATED_LINES = 3000
DOCUMENT_LINES = 500


def generated_line(rng):
    """1 to 12 fragments, mostly space-separated, sometimes run together or
    separated by other white space, sometimes with white space around."""
    text = rng.pick(SPACES) if rng.random() < 0.15 else ""
    fragments = 1 + rng.below(12)
    for i in range(fragments):
        text += rng.pick(rng.pick(POOLS))
        r = rng.random()
        if i + 1 < fragments:
            text += " " if r < 0.6 else "" if r < 0.75 else rng.pick(SPACES)
    if rng.random() < 0.1:
        text += rng.pick(SPACES)
    return text


def texts(text_files):
    rng = common.Mulberry32(SEED)
    generated = [generated_line(rng) for _ in range(GENERATED_LINES)]
    out = list(generated)
    for path in text_files:
        out += common.lines_of(common.read_text(path))
    out.append("\n".join(generated[:DOCUMENT_LINES]))
    return out


def tiktoken_encoding(ranks):
    return common.tiktoken.Encoding(
        name="gpt2 (openai-whisper's gpt2.tiktoken)",
        pat_str=r50k_pat_str,
        mergeable_ranks=ranks,
        special_tokens={END_OF_TEXT: END_OF_TEXT_ID},
        explicit_n_vocab=END_OF_TEXT_ID + 1,
    )


def write_openai_files(ranks, folder):
    """encoder.json and vocab.bpe as OpenAI published them, from the ranks;
    then checks that tiktoken's reader of that format gives the ranks back."""
    if len(ranks) != END_OF_TEXT_ID:
        common.fail(f"{RANKS_FILE} has {len(ranks)} ranks, not GPT-2's {END_OF_TEXT_ID}")
    merges = common.derive_merges(ranks)
    encoder = {common.spell(token): rank for token, rank in
               sorted(ranks.items(), key=lambda item: item[1])}
    encoder[END_OF_TEXT] = END_OF_TEXT_ID
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "encoder.json", "w", encoding="utf-8") as out:
        json.dump(encoder, out)
    with open(folder / "vocab.bpe", "w", encoding="utf-8", newline="\n") as out:
        out.write("#version: 0.2\n")
        for left, right in merges:
            out.write(f"{common.spell(left)} {common.spell(right)}\n")
    again = common.tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        str(folder / "vocab.bpe"), str(folder / "encoder.json"))
    if again != ranks:
        common.fail("encoder.json and vocab.bpe do not read back to the ranks they came from")
    for name, published in OPENAI_SHA256.items():
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        if digest != published:
            common.fail(f"the {name} derived from {RANKS_FILE} has SHA-256 {digest}, "
                        f"not that of OpenAI's {name}, {published}")
    return len(merges)


def gpt2_pieces(pattern_splitter, text):
    return [piece for piece, _ in pattern_splitter.pre_tokenize_str(text)]


def case(encoding, splitter, text):
    """The case of one text, after the checks that tie the pieces of
    `tokenizers` to the ids of tiktoken."""
    pieces = gpt2_pieces(splitter, text)
    if "".join(pieces) != text:
        common.fail(f"GPT-2's pattern in tokenizers does not cover {text!r}: {pieces!r}")
    ids = encoding.encode_ordinary(text)
    by_piece = [i for piece in pieces for i in encoding.encode_ordinary(piece)]
    if by_piece != ids:
        common.fail(f"tiktoken's ids of the pieces of tokenizers are not those of {text!r}: "
                    f"pieces {pieces!r}, ids {ids}, ids piece by piece {by_piece}")
    if encoding.decode_bytes(ids) != text.encode("utf-8"):
        common.fail(f"tiktoken does not decode its ids back to {text!r}")
    return {"text": text, "pieces": pieces, "ids": ids}


def main():
    started = time.monotonic()
    out_dir, text_files = common.usage_or_args("gpt2_reference.py", sys.argv)
    ranks_file = common.package_file(RANKS_FILE)
    ranks = common.load_ranks(ranks_file)
    merges = write_openai_files(ranks, out_dir / "files")
    common.copy_file(ranks_file, out_dir / "files" / "gpt2.tiktoken")

    encoding = tiktoken_encoding(ranks)
    splitter = pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated", invert=False)
    cases = [case(encoding, splitter, text) for text in texts(text_files)]
    common.write_jsonl(out_dir / "cases.jsonl", cases)

    tokens = sum(len(c["ids"]) for c in cases)
    pieces = sum(len(c["pieces"]) for c in cases)
    print(f"files/: {len(ranks) + 1} tokens, {merges} merges derived from gpt2.tiktoken; "
          f"cases.jsonl: {len(cases)} texts, {pieces} pieces, {tokens} tokens "
          f"({time.monotonic() - started:.1f} s; tiktoken {common.version('tiktoken')}, "
          f"tokenizers {tokenizers.__version__}, gpt2.tiktoken of openai-whisper "
          f"{common.version('openai-whisper')}, Python {sys.version.split()[0]})")


if __name__ == "__main__":
    common.run(main)
