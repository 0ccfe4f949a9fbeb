"""Loads the tokenizer Strata exported into FOLDER with transformers'
AutoTokenizer, as a user of the exported model would, and checks that it
gives every case of CASES (a reference fixture's JSON lines: text and the
reference's ids) the same ids and decodes them back to the text, and that it
takes EOS_ID as its end-of-text token. Ordinary cases (tiktoken's
encode_ordinary) are encoded with special tokens read as text
(split_special_tokens); cases marked "added" with them recognised, as
transformers does by default. Prints a summary; exits 1 naming the first
differences.

usage: transformers_tokenizer_check.py FOLDER CASES EOS_ID
"""
import json
import sys

from transformers import AutoTokenizer


def main():
    folder, cases, eos_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tokenizer = AutoTokenizer.from_pretrained(folder)
    texts = tokens = differing = undecoded = 0
    with open(cases, encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            texts += 1
            tokens += len(case["ids"])
            ids = tokenizer.encode(case["text"], add_special_tokens=False,
                                   split_special_tokens=not case.get("added", False))
            if ids != case["ids"]:
                differing += 1
                if differing <= 5:
                    print(f"ids differ for {json.dumps(case['text'])}", file=sys.stderr)
            if tokenizer.decode(case["ids"]) != case["text"]:
                undecoded += 1
                if undecoded <= 5:
                    print(f"ids do not decode to {json.dumps(case['text'])}", file=sys.stderr)
    print(f"[transformers {type(tokenizer).__name__}] {texts} texts, {tokens} tokens: "
          f"{differing} differing, {undecoded} not decoded; eos {tokenizer.eos_token_id}")
    ok = differing == 0 and undecoded == 0 and tokenizer.eos_token_id == eos_id and texts > 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
