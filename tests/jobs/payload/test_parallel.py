"""jobs/payload/parallel.py: the FSDP2 units, torchtitan's llama3 layout (embedding, each block, norm +
lm_head not resharded after forward, the root), and one unit for a tied embedding and lm_head; in one gloo
process (a 1-rank group in a subprocess), where FSDP2's own state says which module holds which parameters."""

from __future__ import annotations

import json
import subprocess

import pytest

from ..jobs_util import PY, SRC, base_env

UNITS = r"""
import json, sys
import torch, torch.distributed as dist
sys.path.insert(0, sys.argv[1])
from model import Llama, LlamaConfig
from parallel import shard
from torch.distributed.fsdp import FSDPModule
dist.init_process_group("gloo", init_method="file://" + sys.argv[2], rank=0, world_size=1)
model = Llama(LlamaConfig(n_layer=2, tie_embeddings=sys.argv[3] == "tied"))
mesh = dist.device_mesh.init_device_mesh("cpu", (1,))
names = shard(model, mesh=mesh)
units = {}
for name, m in model.named_modules():
    if isinstance(m, FSDPModule):
        group = m._get_fsdp_state()._fsdp_param_group
        info = [p._module_info for p in group.fsdp_params] if group else []
        params = sorted(type(i.module).__name__.removeprefix("FSDP") + "." + i.param_name for i in info)
        reshard = group.post_forward_mesh_info is not None if group else None
        units[name or "root"] = {"params": params, "reshard": reshard}
loss = model(torch.randint(0, 512, (2, 8)), torch.randint(0, 512, (2, 8)))
loss.backward()
tied = model.lm_head.weight is model.model.embed_tokens.weight
print(json.dumps({"names": names, "units": units, "tied": tied}))
dist.destroy_process_group()
"""


@pytest.mark.parametrize("tie", ["untied", "tied"])
def test_units_follow_torchtitan_and_a_tied_pair_is_one_unit(tmp_path, tie):
    p = subprocess.run(
        [PY, "-c", UNITS, str(SRC), str(tmp_path / "store"), tie],
        env=base_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.splitlines()[-1])
    units = got["units"]
    assert got["tied"] is (tie == "tied")
    if tie == "untied":
        names = ["model.embed_tokens", "model.layers.0", "model.layers.1", "model.norm + lm_head", "root"]
        assert got["names"] == names
        assert units["model.embed_tokens"]["params"] == ["Embedding.weight"]
        assert units["model.norm"]["params"] == ["Linear.weight", "RMSNorm.weight"]
        assert units["model.norm"]["reshard"] is False  # kept for backward, which starts with it
        assert units["model.layers.0"]["reshard"] is True
        assert units["root"]["params"] == []
    else:
        assert got["names"] == [
            "model.embed_tokens + lm_head (tied)",
            "model.layers.0",
            "model.layers.1",
            "root",
        ]
        assert units["model.embed_tokens"]["params"] == ["Embedding.weight"]  # the one tensor, once
        assert units["root"]["params"] == ["RMSNorm.weight"]
    assert len(units["model.layers.1"]["params"]) == 9  # 2 norms, q/k/v/o, gate/up/down
