"""The transformers side of the TransformersReference.* tests (tests/trainer/
transformers_reference_test.cpp), which compare Strata's Hugging Face
conversion with Hugging Face's own code: transformers builds and runs the
models, safetensors reads the files. Offline: nothing is downloaded.

python transformers_reference.py export FOLDER IDS_JSON OUT_DIR
    Loads the model Strata exported to FOLDER (config.json and
    model.safetensors) as the transformers class its config.json names
    ("architectures"), in float32, and writes into OUT_DIR:
     - logits.safetensors: "logits" [b, s, vocab], float32, of the token ids
       of IDS_JSON (a JSON list of b lists of s ids);
     - report.json: {"versions", "class", "loading": what from_pretrained
       missed, did not expect or found of another shape, "file": each tensor
       of FOLDER/model.safetensors as safetensors' reader sees it (dtype,
       shape) and its "__metadata__", "transformers": the same of the file
       transformers' own save_pretrained writes for the loaded model}.

python transformers_reference.py make FAMILY OUT_DIR
    FAMILY gpt2, llama or mixtral: a small model of transformers' class for
    it (GPT2LMHeadModel, LlamaForCausalLM, MixtralForCausalLM), built by
    transformers from a fixed seed and saved with its save_pretrained into
    OUT_DIR/model, and into OUT_DIR:
     - logits.safetensors: "logits" [2, 16, vocab], float32, the model's on
       the ids of report.json;
     - report.json: {"versions", "class", "ids": 2 lists of 16 token ids,
       "prompt": a text, "generated": the ids of the 8 tokens greedy
       generate() appends to the prompt's bytes, only byte ids allowed}.

Exits 0 when it wrote everything; any problem raises.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

# Before transformers is imported: no network, no progress bars in the
# tests' output.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"

import safetensors  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors import safe_open  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

# Strata's byte tokenizer spells ids 0..255; the models' vocabularies are
# larger (and odd, so that tp 2 pads them), and generation is kept to bytes.
BYTES = 256
VOCAB = 301
PROMPT = "Strata "
NEW_TOKENS = 8


def versions():
    return {
        "transformers": transformers.__version__,
        "safetensors": safetensors.__version__,
        "torch": torch.__version__,
    }


def tensors_of(path):
    """Each tensor of a .safetensors file as safetensors' reader sees it."""
    with safe_open(str(path), framework="pt") as f:
        tensors = {}
        for name in f.keys():
            view = f.get_slice(name)
            tensors[name] = {"dtype": view.get_dtype(), "shape": list(view.get_shape())}
        return {"tensors": tensors, "metadata": f.metadata() or {}}


def export(folder, ids_json, out_dir):
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    # The class Strata's config.json names: GPT2LMHeadModel, LlamaForCausalLM
    # or MixtralForCausalLM. Eager attention: transformers' plain definition.
    cls = getattr(transformers, config["architectures"][0])
    model, loading = cls.from_pretrained(
        folder,
        dtype=torch.float32,
        attn_implementation="eager",
        output_loading_info=True,
        local_files_only=True,
    )
    model.eval()
    ids = torch.tensor(json.loads(Path(ids_json).read_text()), dtype=torch.long)
    with torch.no_grad():
        logits = model(input_ids=ids).logits.float().contiguous()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({"logits": logits}, str(out_dir / "logits.safetensors"))
    # What transformers itself writes for this model: the names, shapes and
    # dtypes a file of its class holds (a tied head left out, say).
    with tempfile.TemporaryDirectory() as saved:
        model.save_pretrained(saved)
        theirs = tensors_of(Path(saved) / "model.safetensors")
    report = {
        "versions": versions(),
        "class": type(model).__name__,
        "loading": {key: sorted(str(k) for k in value) for key, value in loading.items()},
        "file": tensors_of(folder / "model.safetensors"),
        "transformers": theirs,
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=1))


def config_of(family):
    # Tiny, and without bos/eos ids (GPT-2's 50256 lies outside the vocabulary;
    # Llama's 2 would end a generation early, where Strata's byte tokenizer
    # has no end of text). initializer_range 0.2 rather than 0.02: the scores
    # q.k/sqrt(d), the MLP's inputs and the router's logits of order one, so
    # that another GELU, rotary convention or head order would change the
    # logits far above the tolerance, as it would not at a trained model's
    # first steps.
    common = dict(vocab_size=VOCAB, bos_token_id=None, eos_token_id=None, pad_token_id=None,
                  initializer_range=0.2)
    if family == "gpt2":
        return transformers.GPT2LMHeadModel, transformers.GPT2Config(
            n_positions=64, n_embd=64, n_layer=2, n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, **common)
    # Llama 3.1's rotary base and scaling (rope_parameters, transformers 5's
    # form of rope_theta and rope_scaling), its original context short
    # enough that the scaling changes the frequencies positions 0..15 use.
    llama = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5,
                 tie_word_embeddings=False, **common)
    if family == "llama":
        return transformers.LlamaForCausalLM, transformers.LlamaConfig(
            intermediate_size=112,
            rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                             "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 32},
            **llama)
    if family == "mixtral":
        return transformers.MixtralForCausalLM, transformers.MixtralConfig(
            intermediate_size=48, num_local_experts=4, num_experts_per_tok=2,
            rope_parameters={"rope_type": "default", "rope_theta": 500000.0}, **llama)
    raise SystemExit(f"unknown family {family!r}: gpt2, llama or mixtral")


def make(family, out_dir):
    torch.manual_seed(20240611)
    cls, config = config_of(family)
    model = cls(config).eval()
    # transformers starts norms' weights at 1 and biases at 0, where a bias
    # or norm weight loaded into the wrong place would change nothing: move
    # every vector parameter off its start.
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() == 1:
                parameter.add_(0.2 * torch.randn_like(parameter))
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir / "model")
    ids = torch.randint(0, VOCAB, (2, 16), dtype=torch.long)
    prompt = torch.tensor([list(PROMPT.encode())], dtype=torch.long)
    with torch.no_grad():
        logits = model(input_ids=ids).logits.float().contiguous()
        # Greedy; Strata's generate draws among the tokenizer's ids only
        # (the bytes), so the ids past them are suppressed here alike.
        generated = model.generate(
            prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS,
            do_sample=False,
            suppress_tokens=list(range(BYTES, VOCAB)))
    save_file({"logits": logits}, str(out_dir / "logits.safetensors"))
    report = {
        "versions": versions(),
        "class": type(model).__name__,
        "ids": ids.tolist(),
        "prompt": PROMPT,
        "generated": generated[0, prompt.shape[1]:].tolist(),
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=1))


def main(argv):
    if len(argv) == 4 and argv[0] == "export":
        export(*argv[1:])
    elif len(argv) == 3 and argv[0] == "make":
        make(*argv[1:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
