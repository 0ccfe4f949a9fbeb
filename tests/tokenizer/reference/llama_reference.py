"""python llama_reference.py OUT_DIR [TEXT_FILE...]

Writes what the LlamaReference.* tests read into OUT_DIR:
 - llama3/tokenizer.model: Llama 3's ranks in tiktoken's format, a copy of
   llama-models' llama_models/llama3/tokenizer.model;
 - llama3/tokenizer.json and tokenizer_config.json: a Hugging Face
   tokenizer.json made from those ranks with the `tokenizers` API, laid out
   as Llama 3's published one is (byte-level BPE whose merges are every cut
   of each token in two tokens, in rank order, with ignore_merges; Llama 3's
   pattern then ByteLevel; the 256 special tokens of llama-models'
   tokenizer.py as added tokens; <|begin_of_text|> put before the text by
   the post-processor);
 - cases/llama3.jsonl: {"text", "ids", "added"}. With "added" false the ids
   are those of `tokenizers` on that tokenizer.json less its added tokens,
   so that text such as <|end_of_text|> is ordinary text (Strata's
   encode(text)); with true, those of the file as written, which splits the
   added tokens out. Neither adds the post-processor's <|begin_of_text|>.
   tiktoken on the ranks, Llama 3's own tokenizer, must give the same ids
   (special tokens as text, or recognised): fails naming the first text it
   does not agree on;
 - cases/llama2.jsonl: {"text", "ids"}: the `sentencepiece` package, Google's
   own implementation, on cases/llama2-tokenizer.model, without BOS or EOS;
 - cases/llama2-tokenizer.model: a copy of mistral-common's
   mistral_common/data/tokenizer.model.v1, Mistral 7B's SentencePiece BPE
   model, Llama 2's kind (32000 pieces, byte fallback, eos id 2).
Each reference must decode its ids back to the text.
The texts: sentences in English, German, French, Spanish, Vietnamese,
Russian, Greek, Arabic, Hebrew, Hindi, Chinese, Japanese, Korean and Thai;
emoji (skin tones, flags, ZWJ sequences); numbers of 1 to 40 digits; code
with indentation and tabs; runs of spaces, tabs and newlines (CR LF, U+0085,
U+2028, no-break and ideographic spaces); contractions in mixed case; 2000
lines mixed from them with a fixed seed; every line of each TEXT_FILE and
each TEXT_FILE whole. llama3.jsonl adds each of Llama 3's 256 special tokens
alone and texts with them inside, both ways.
Prints how many texts and tokens each file has, and the versions used.
"""

import ast
import json
import sys
import time

import sentencepiece
import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

import reference_common as common

LLAMA3_RANKS = "llama_models/llama3/tokenizer.model"
LLAMA3_SOURCE = "llama_models/llama3/tokenizer.py"
LLAMA2_MODEL = "mistral_common/data/tokenizer.model.v1"
BEGIN_OF_TEXT = "<|begin_of_text|>"
END_OF_TEXT = "<|end_of_text|>"

# --- texts -------------------------------------------------------------------

SAMPLES = {
    "english": [
        "The quick brown fox jumps over the lazy dog.",
        "Pipeline parallelism splits a model's layers across devices; tensor parallelism splits each layer.",
        'She said, "It\'s 4:30 p.m. already?!" and left (without her umbrella).',
    ],
    "contractions": [
        "DON'T SHOUT. I'M NOT DEAF, YOU'RE NOT EITHER, AND WE'VE TOLD THEM WE'LL STAY.",
        "I'm sure they'd've said it's fine; isn't it? You'll see. He'D, She'S, it'LL, we'Re, you'Ve.",
        "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D rock'n'roll O'Neil ol' cats'",
    ],
    "german": [
        "Größere Modelle brauchen mehr Speicher, aber Übung macht den Meister.",
        "Die Straße führt über den Fluss nach Köln; Äpfel, Öl und Süßigkeiten kosten 3,50 €.",
    ],
    "french": [
        "L'été dernier, nous sommes allés à la plage près de Nîmes — c'était génial !",
        "« Où est la bibliothèque ? » demanda-t-elle, déçue ; l’œuvre coûtait 12 000 €.",
    ],
    "spanish": ["¿Dónde está el baño? ¡Mañana será otro día, señor Núñez!"],
    "vietnamese": ['Tiếng Việt có nhiều dấu: ă, â, ê, ô, ơ, ư, đ — "Xin chào thế giới".'],
    "russian": [
        "Съешь же ещё этих мягких французских булок, да выпей чаю.",
        "Москва — столица России; население более 13 миллионов человек.",
    ],
    "greek": ["Καλημέρα κόσμε! Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο."],
    "arabic": ["مرحبا بالعالم! اللغة العربية تكتب من اليمين إلى اليسار، والأرقام ١٢٣٤٥٦."],
    "hebrew": ["שלום עולם! עברית נכתבת מימין לשמאל, עם ניקוד: שָׁלוֹם."],
    "hindi": ["नमस्ते दुनिया! हिन्दी देवनागरी लिपि में लिखी जाती है; संख्या १२३४५।"],
    "chinese": ["你好，世界！机器学习模型需要大量的数据和计算资源。", "繁體中文：臺灣的夜市很熱鬧。"],
    "japanese": ["こんにちは世界！日本語はひらがな、カタカナ、漢字を使います。ｶﾀｶﾅもあります。"],
    "korean": ["안녕하세요 세계! 한국어는 한글로 씁니다. 대규모 언어 모델을 훈련합니다."],
    "thai": ["สวัสดีชาวโลก ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ"],
    "emoji": [
        "Emoji: 😀 👍🏽 🇫🇷 🇯🇵 ❤️ 🤖 ✨ 🎉🎉🎉 #️⃣ 1️⃣",
        "ZWJ sequences: 👨\u200d👩\u200d👧\u200d👦 🧑\u200d💻 🏳️\u200d🌈 👩🏾\u200d🚀 🐻\u200d❄️ 🫶",
    ],
    "numbers": [
        "0 7 42 123 1234 12345 123456 1234567 3.14159265358979 1,234,567.89 -17 +3 1e-5 0x1F 2024-01-05",
        "١٢٣٤٥ १२३४५ １２３４５ ½ ² Ⅻ ① 𝟙𝟚𝟛",
    ],
    "code": [
        "def f(x):\n    if x > 0:\n        return x ** 2\n    return -x\n",
        "int main() {\n\tfor (int i = 0; i < n; ++i) {\n\t\tsum += a[i];\n\t}\n\treturn 0;\n}\n",
        '{"key": "value", "list": [1, 2, 3], "nested": {"a": null}}\n$ make test -j2 && echo ok',
    ],
    "whitespace": [
        "a  b   c    d     e\t\tf\n\ng\n\n\nh",
        "   leading and trailing   ",
        "line one\r\nline two\r\n\r\nline four\rend",
        "no-break\u00a0space, ideographic\u3000space, next\u0085line, line\u2028separator",
        "\n\n\n\n    \t\n  x",
    ],
}

# Texts with Llama 3's special tokens inside, and near misses.
WITH_SPECIAL = [
    "<|begin_of_text|>Hello world<|end_of_text|>",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "a<|eot_id|>b <|eot_id|> c\n<|eot_id|>\n",
    "<|end_of_text|><|end_of_text|><|begin_of_text|>",
    "not special: <|begin_of_text <|end_of_text| <|eot_id |> <|reserved_special_token_999|>",
    "Größe<|reserved_special_token_0|>日本語<|reserved_special_token_250|>😀",
    "  <|finetune_right_pad_id|>  ",
]

SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n", "\n\n", "\r\n", " \n", "\u00a0", "\u3000"]
SEED = 0x11A3A
MIXED_LINES = 2000


def digit_runs():
    """Numbers of 1..40 digits: Llama 3 splits digits in groups of up to
    three."""
    return [("9876543210" * 4)[:n] for n in range(1, 41)]


def mixed_lines(fragments):
    """1 to 10 fragments joined by assorted white space, from a fixed seed."""
    rng = common.Mulberry32(SEED)
    lines = []
    for _ in range(MIXED_LINES):
        count = 1 + rng.below(10)
        line = ""
        for f in range(count):
            line += (rng.pick(SEPARATORS) if f else "") + rng.pick(fragments)
        lines.append(line)
    return lines


def texts(text_files):
    sentences = [s for group in SAMPLES.values() for s in group]
    digits = digit_runs()
    fragments = [f for s in sentences for f in s.split(" ") if f] + digits
    out = sentences + digits + [" " + d for d in digits] + mixed_lines(fragments)
    for path in text_files:
        content = common.read_text(path)
        out += common.lines_of(content)
        out.append(content)
    return out


# --- Llama 3 -------------------------------------------------------------------


def llama3_source_facts(path):
    """Llama 3's pattern and special tokens, read out of llama-models'
    tokenizer.py without importing it: the class attributes pat_str and
    num_reserved_special_tokens, and the named special tokens listed in
    __init__, followed by reserved ones numbered from 2 as its f-string
    numbers them (checked to be still spelled so)."""
    source = path.read_text(encoding="utf-8")
    reserved_spelling = 'f"<|reserved_special_token_{2 + i}|>"'
    if reserved_spelling not in source:
        common.fail(f"{path} no longer names its reserved tokens {reserved_spelling}")
    pattern = reserved = named = None
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if "pat_str" in names:
            pattern = ast.literal_eval(node.value)
        elif "num_reserved_special_tokens" in names:
            reserved = ast.literal_eval(node.value)
        elif "special_tokens" in names and isinstance(node.value, ast.List):
            named = ast.literal_eval(node.value)
    if pattern is None or reserved is None or named is None:
        common.fail(f"{path}: pat_str, num_reserved_special_tokens or the special_tokens list "
                    f"not found")
    specials = named + [f"<|reserved_special_token_{2 + i}|>" for i in range(reserved - len(named))]
    return pattern, specials


def byte_level_bpe(ranks):
    """The BPE model of a Hugging Face tokenizer.json for tiktoken ranks:
    tokens spelled in GPT-2's byte alphabet, merges derived from the ranks.
    Llama 3's ranks have tokens that are not the join of the two parts their
    own bytes come to (common.unreachable_tokens), so one merge a token, as
    GPT-2's files have, would not give tiktoken's ids: every cut of each
    token is listed, as in Llama 3's published file. ignore_merges, as that
    file has it: a piece that is a token is that token, as in tiktoken."""
    vocab = {common.spell(token): rank for token, rank in ranks.items()}
    merges = [(common.spell(a), common.spell(b)) for a, b in common.all_split_merges(ranks)]
    return models.BPE(vocab=vocab, merges=merges, ignore_merges=True, byte_fallback=False,
                      fuse_unk=False), len(merges)


def llama3_tokenizer(ranks, pattern, specials):
    """Llama 3's tokenizer.json as Meta's published one is laid out."""
    model, merges = byte_level_bpe(ranks)
    tokenizer = Tokenizer(model)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    byte_level.trim_offsets = True
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        byte_level,
    ])
    tokenizer.decoder = decoders.ByteLevel()
    begin_id = len(ranks) + specials.index(BEGIN_OF_TEXT)
    tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
        processors.TemplateProcessing(
            single=f"{BEGIN_OF_TEXT} $A",
            pair=f"{BEGIN_OF_TEXT} $A {BEGIN_OF_TEXT}:1 $B:1",
            special_tokens=[(BEGIN_OF_TEXT, begin_id)],
        ),
    ])
    tokenizer.add_special_tokens([
        AddedToken(name, special=True, normalized=False, lstrip=False, rstrip=False,
                   single_word=False)
        for name in specials
    ])
    for i, name in enumerate(specials):
        if tokenizer.token_to_id(name) != len(ranks) + i:
            common.fail(f"tokenizers gave {name} id {tokenizer.token_to_id(name)}, "
                        f"not {len(ranks) + i}")
    return tokenizer, merges


def write_llama3_files(folder, ranks_file, tokenizer):
    common.copy_file(ranks_file, folder / "tokenizer.model")
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {
        "bos_token": BEGIN_OF_TEXT,
        "eos_token": END_OF_TEXT,
        "add_bos_token": True,
        "clean_up_tokenization_spaces": True,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n",
                                                   encoding="utf-8")


def without_added_tokens(path):
    """The tokenizer.json at `path` less its added tokens."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["added_tokens"] = []
    return Tokenizer.from_str(json.dumps(data))


class Llama3References:
    """`tokenizers` on the tokenizer.json written (with and without its
    added tokens) next to tiktoken on the ranks, and their comparison."""

    def __init__(self, folder, ranks, pattern, specials):
        self.with_added = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.as_text = without_added_tokens(folder / "tokenizer.json")
        self.tiktoken = common.tiktoken.Encoding(
            name="llama3 (llama-models' tokenizer.model)",
            pat_str=pattern,
            mergeable_ranks=ranks,
            special_tokens={name: len(ranks) + i for i, name in enumerate(specials)},
        )
        self.disagreements = []

    def case(self, text, added):
        hf = self.with_added if added else self.as_text
        ids = hf.encode(text, add_special_tokens=False).ids
        if added:
            theirs = self.tiktoken.encode(text, allowed_special="all")
        else:
            theirs = self.tiktoken.encode(text, allowed_special=set(), disallowed_special=())
        if ids != theirs:
            self.disagreements.append((text, added, ids, theirs))
        if hf.decode(ids, skip_special_tokens=False) != text:
            common.fail(f"tokenizers does not decode its ids back to {text!r} (added {added})")
        if self.tiktoken.decode_bytes(theirs) != text.encode("utf-8"):
            common.fail(f"tiktoken does not decode its ids back to {text!r} (added {added})")
        return {"text": text, "ids": ids, "added": added}

    def check_agreement(self):
        if not self.disagreements:
            return
        text, added, ids, theirs = self.disagreements[0]
        common.fail(f"tokenizers and tiktoken give different ids for {len(self.disagreements)} "
                    f"texts; the first: {text!r} (added {added})\n  tokenizers: {ids}\n"
                    f"  tiktoken:   {theirs}")


def llama3_cases(references, plain, specials):
    cases = [references.case(text, added=False) for text in plain]
    for text in specials + WITH_SPECIAL:
        cases.append(references.case(text, added=True))
        cases.append(references.case(text, added=False))
    references.check_agreement()
    return cases


# --- Llama 2's kind: SentencePiece ---------------------------------------------------


def llama2_cases(model_file, plain):
    """Ids without BOS or EOS; the leading ▁ of each text is SentencePiece's
    dummy prefix, which decoding takes off again."""
    processor = sentencepiece.SentencePieceProcessor(model_file=str(model_file))
    if processor.vocab_size() != 32000 or processor.eos_id() != 2:
        common.fail(f"{model_file}: {processor.vocab_size()} pieces and eos id "
                    f"{processor.eos_id()}, not Llama 2's 32000 and 2")
    cases = []
    for text in plain:
        ids = processor.encode(text, out_type=int, add_bos=False, add_eos=False)
        if processor.decode(ids) != text:
            common.fail(f"sentencepiece does not decode its ids back to {text!r}")
        cases.append({"text": text, "ids": ids})
    return cases


# --- main ------------------------------------------------------------------------------


def report(name, cases):
    tokens = sum(len(c["ids"]) for c in cases)
    added = sum(1 for c in cases if c.get("added"))
    extra = f" ({added} with added tokens recognised)" if added else ""
    print(f"{name}: {len(cases)} texts{extra}, {tokens} tokens")


def main():
    started = time.monotonic()
    out_dir, text_files = common.usage_or_args("llama_reference.py", sys.argv)
    plain = texts(text_files)

    ranks_file = common.package_file(LLAMA3_RANKS)
    ranks = common.load_ranks(ranks_file)
    pattern, specials = llama3_source_facts(common.package_file(LLAMA3_SOURCE))
    tokenizer, merges = llama3_tokenizer(ranks, pattern, specials)
    write_llama3_files(out_dir / "llama3", ranks_file, tokenizer)
    references = Llama3References(out_dir / "llama3", ranks, pattern, specials)
    llama3 = llama3_cases(references, plain, specials)
    common.write_jsonl(out_dir / "cases" / "llama3.jsonl", llama3)

    model_file = out_dir / "cases" / "llama2-tokenizer.model"
    common.copy_file(common.package_file(LLAMA2_MODEL), model_file)
    llama2 = llama2_cases(model_file, plain)
    common.write_jsonl(out_dir / "cases" / "llama2.jsonl", llama2)

    unreachable = common.unreachable_tokens(ranks)
    print(f"llama3/tokenizer.json: {len(ranks)} tokens, {merges} merges (every cut of each "
          f"token in two tokens), {len(specials)} special tokens; {len(unreachable)} tokens are "
          f"not the join of the two parts their own bytes come to under the ranks below them, "
          f"the first {unreachable[0][1]!r} (rank {unreachable[0][0]}) -> {unreachable[0][2]!r}"
          if unreachable else "")
    report("cases/llama3.jsonl", llama3)
    report("cases/llama2.jsonl", llama2)
    print(f"({time.monotonic() - started:.1f} s; tokenizers {tokenizers.__version__}, "
          f"tiktoken {common.version('tiktoken')}, sentencepiece {sentencepiece.__version__}; "
          f"llama-models {common.version('llama-models')}, "
          f"mistral-common {common.version('mistral-common')}; Python {sys.version.split()[0]})")


if __name__ == "__main__":
    common.run(main)
