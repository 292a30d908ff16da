"""FSDP2 units of model.py's Llama, torchtitan's llama3 layout (torchtitan/models/llama3/infra/parallelize.py
`apply_fsdp`): the token embedding its own unit, each block one unit, the final norm and lm_head one unit that
is not resharded after forward (backward needs it at once), and the root for what is left. A tied model
(tie_embeddings) has one tensor under embed_tokens and lm_head: one unit holds both (FSDP2's tied-weights
layout, pytorch test_fully_shard_training "mem_eff_weight_tied"), the final norm stays in the root.

Before, the root unit held the embedding, the final norm and lm_head together (13% of 8B, never resharded,
its reduce-scatter exposed at the end of backward); separate units let FSDP2 overlap them like the blocks.
"""

from __future__ import annotations

from typing import Any

import torch.nn as nn
from torch.distributed.fsdp import fully_shard


def shard(model: nn.Module, **kw: Any) -> list[str]:
    """fully_shard every unit of `model` with `kw` (mesh, mp_policy); returns the units, outermost last."""
    body, units = model.model, []
    if model.cfg.tie_embeddings:
        fully_shard([body.embed_tokens, model.lm_head], **kw)
        units.append("model.embed_tokens + lm_head (tied)")
    else:
        fully_shard(body.embed_tokens, **kw)
        units.append("model.embed_tokens")
    for i, block in enumerate(body.layers):
        fully_shard(block, **kw)
        units.append(f"model.layers.{i}")
    if not model.cfg.tie_embeddings:
        fully_shard([body.norm, model.lm_head], reshard_after_forward=False, **kw)
        units.append("model.norm + lm_head")
    fully_shard(model, **kw)
    units.append("root")
    return units
