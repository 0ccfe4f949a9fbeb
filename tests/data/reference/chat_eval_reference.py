"""The reference for `strata eval --chat`: transformers' Llama over a Strata
export, its tokenizer and chat template, scoring each conversation's last
assistant turn as greedy decoding would write it.

usage: chat_eval_reference.py MODEL_DIR TOKENIZER_DIR CONVERSATIONS.jsonl

The prompt is apply_chat_template(messages[:-1], add_generation_prompt=True)
and the answer the tokens that the whole conversation's rendering adds after
it (the content and the end of the turn). Greedy decoding from the prompt,
one token at a time, gives the answer exactly or not; the answer loss is the
cross-entropy of the answer's tokens after the prompt. Prints one JSON line:
{"conversations", "exact_matches", "answer_loss", "answer_tokens"}.
"""

import json
import sys

import torch
from transformers import AutoTokenizer, LlamaForCausalLM


def main():
    model_dir, tokenizer_dir, conversations = sys.argv[1:4]
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    model = LlamaForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    matches, tokens, loss_sum, count = 0, 0, 0.0, 0
    with open(conversations) as lines:
        for line in lines:
            messages = json.loads(line)["messages"]
            whole = tokenizer.apply_chat_template(
                messages, tokenize=True, return_dict=True)["input_ids"]
            prompt = tokenizer.apply_chat_template(
                messages[:-1], tokenize=True, add_generation_prompt=True, return_dict=True
            )["input_ids"]
            assert whole[: len(prompt)] == prompt, "the prompt is not where the answer starts"
            answer = whole[len(prompt):]
            ids = list(prompt)
            with torch.no_grad():
                for _ in answer:
                    logits = model(torch.tensor([ids])).logits[0, -1]
                    ids.append(int(logits.argmax()))
                    if ids[len(prompt):] != answer[: len(ids) - len(prompt)]:
                        break
                logits = model(torch.tensor([whole])).logits[0]
            matches += ids[len(prompt):] == answer
            targets = torch.tensor(answer)
            predicting = logits[len(prompt) - 1 : len(whole) - 1]
            loss_sum += float(torch.nn.functional.cross_entropy(predicting, targets, reduction="sum"))
            tokens += len(answer)
            count += 1
    print(json.dumps({"conversations": count, "exact_matches": matches,
                      "answer_loss": loss_sum / tokens, "answer_tokens": tokens}))


if __name__ == "__main__":
    main()
