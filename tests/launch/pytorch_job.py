# A plain PyTorch job, as a user would write it for torchrun: the process
# group from the environment (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE),
# one all-reduce, one barrier. Run under `strata launch` by LaunchPyTorch.*.
import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
if os.environ.get("FAIL_RANK") == str(rank) and attempt == "0":
    sys.exit(5)  # the first attempt fails; the restart meets in a fresh store
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
dist.barrier()
print(
    f"pytorch rank {rank} of {world} sum {int(value.item())} "
    f"run {os.environ['TORCHELASTIC_RUN_ID']} role rank {os.environ['ROLE_RANK']} "
    f"group rank {os.environ['GROUP_RANK']} attempt {attempt}",
    flush=True,
)
dist.destroy_process_group()
