"""The PEFT side of the PeftReference.* tests (tests/trainer/
peft_reference_test.cpp), which compare Strata's LoRA adapters with
Hugging Face's PEFT library: PEFT makes, saves, loads and runs the adapters,
transformers the base model. Offline: nothing is downloaded.

python peft_reference.py make OUT_DIR [FAMILY]
    transformers_reference.py's small Llama (FAMILY llama, the default) or
    Mixtral (mixtral), saved into OUT_DIR/model, with a LoRA adapter made by
    PEFT's get_peft_model on every projection (q, k, v, o, gate, up, down;
    a Mixtral's experts through target_parameters, experts.gate_up_proj and
    experts.down_proj; r 4, lora_alpha 8), A and B both
    drawn (init_lora_weights=False: B is not zero, so the adapter changes the
    logits), saved by PEFT's save_pretrained into OUT_DIR/adapter; and
    OUT_DIR/logits.safetensors ("logits" [2, 16, vocab], float32, the adapted
    model's on report.json's ids), OUT_DIR/base_logits.safetensors (the base
    model's) and OUT_DIR/report.json ({"versions", "ids",
    "adapter_config": what PEFT wrote, "prompt" and "generated": the ids
    greedy generate() of the adapted model appends to the prompt's bytes}).

python peft_reference.py run BASE ADAPTER IDS_JSON OUT_DIR
    Loads the model at BASE with transformers and the adapter at ADAPTER with
    PeftModel.from_pretrained, and writes the adapted model's logits on the
    ids of IDS_JSON into OUT_DIR/logits.safetensors and OUT_DIR/report.json
    ({"versions", "adapter_keys": the tensors PEFT loaded into the model's
    adapter, "missing": adapter weights PEFT found no tensor for}).

Exits 0 when it wrote everything; any problem raises.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import transformers_reference as ref  # noqa: E402  (sets the offline environment first)

import peft  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

ATTENTION = ["q_proj", "k_proj", "v_proj", "o_proj"]
# Llama's MLP is three modules; a Mixtral's experts are two parameters.
MLP_MODULES = {"llama": ["gate_proj", "up_proj", "down_proj"], "mixtral": []}
MLP_PARAMETERS = {"llama": None, "mixtral": ["experts.gate_up_proj", "experts.down_proj"]}


def versions():
    return dict(ref.versions(), peft=peft.__version__)


def logits_of(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits.float().contiguous()


def load_base(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager", local_files_only=True)


def make(out_dir, family="llama"):
    out_dir = Path(out_dir)
    ref.make(family, out_dir)
    (out_dir / "logits.safetensors").rename(out_dir / "base_logits.safetensors")
    base = load_base(out_dir / "model")
    torch.manual_seed(20261207)
    config = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0,
                             target_modules=ATTENTION + MLP_MODULES[family],
                             target_parameters=MLP_PARAMETERS[family],
                             init_lora_weights=False, task_type="CAUSAL_LM")
    model = peft.get_peft_model(base, config).eval()
    model.save_pretrained(out_dir / "adapter")
    report = json.loads((out_dir / "report.json").read_text())
    ids = torch.tensor(report["ids"], dtype=torch.long)
    save_file({"logits": logits_of(model, ids)}, str(out_dir / "logits.safetensors"))
    prompt = torch.tensor([list(ref.PROMPT.encode())], dtype=torch.long)
    with torch.no_grad():
        generated = model.generate(
            input_ids=prompt, attention_mask=torch.ones_like(prompt),
            max_new_tokens=ref.NEW_TOKENS, do_sample=False,
            suppress_tokens=list(range(ref.BYTES, ref.VOCAB)))
    report["generated"] = generated[0, prompt.shape[1]:].tolist()
    report["versions"] = versions()
    report["adapter_config"] = json.loads((out_dir / "adapter" / "adapter_config.json").read_text())
    (out_dir / "report.json").write_text(json.dumps(report, indent=1))


def run(base_dir, adapter_dir, ids_json, out_dir):
    model = peft.PeftModel.from_pretrained(load_base(base_dir), adapter_dir).eval()
    ids = torch.tensor(json.loads(Path(ids_json).read_text()), dtype=torch.long)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({"logits": logits_of(model, ids)}, str(out_dir / "logits.safetensors"))
    state = peft.get_peft_model_state_dict(model)
    saved = peft.utils.load_peft_weights(adapter_dir)
    report = {
        "versions": versions(),
        "adapter_keys": sorted(state.keys()),
        "missing": sorted(k for k in state.keys() if k not in saved),
        "unexpected": sorted(k for k in saved.keys() if k not in state),
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=1))


def main(argv):
    if len(argv) in (2, 3) and argv[0] == "make":
        make(*argv[1:])
    elif len(argv) == 5 and argv[0] == "run":
        run(*argv[1:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
