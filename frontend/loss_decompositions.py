"""The negative log-likelihood loss as ops fuser fuses, for the torch.compile backend.

``aten.nll_loss_forward`` reads one value a row of its ``[N, C]`` input, and
``aten.nll_loss_backward`` writes a ``[N, C]`` gradient that is zero except at the
targets. Left to torch (as torch's own decompositions leave them: ``gather`` and
``scatter``, which fuser has no torch handler for), they are fusion boundaries at the
widest tensor of a language model: the forward must write the ``[N, C]`` float32
log-probabilities for torch to pick from, and the backward reads torch's dense
float32 gradient back. For GPT-2 small (4096 x 50257) that is 823 MB written and
read again in each direction.

Here the pick is a comparison with an iota and a sum over the classes::

    hit[n, c]   = (c == where(target[n] != ignore_index, target[n], -1))
    picked[n]   = sum_c where(hit[n, c], self[n, c], 0)
    forward     = -sum_n picked[n] / count                  (reduction "mean")
    grad[n, c]  = where(hit[n, c], -grad_output / count, 0)  (the backward)

so the forward's pick fuses into the log-softmax's reductions and the backward's
gradient into the log-softmax's backward: neither ``[N, C]`` float32 tensor exists,
and AOTAutograd's min-cut partitioner saves the logits and the row statistics instead
of the log-probabilities. The sum adds exact zeros to the one picked value, so it is
exact. A target outside ``[0, C)`` (other than ``ignore_index``) picks nothing where
torch's kernels stop with a device assertion.

Taken: ``self`` a matrix of rows (or one row), with or without class weights (the
weight of each row's target picked the same way). Anything else (the ``K``-dimensional
losses go through ``nll_loss2d``) returns ``NotImplemented``, and the op stays
torch's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["loss_decompositions"]

NONE, MEAN, SUM = 0, 1, 2
"""``reduction``, as ATen numbers it."""


def _hits(self: Any, target: Any, ignore_index: int) -> Any:
    """``[N, C]`` booleans: the target class of each row, none in ignored rows."""
    import torch

    classes = torch.arange(self.shape[1], device=self.device)
    t = torch.where(target != ignore_index, target, -1)
    return classes.unsqueeze(0) == t.unsqueeze(1)


def _taken(self: Any, target: Any) -> bool:
    """Whether the decomposition takes this call: a matrix and a vector of targets,
    or a vector and one target (taken as one row)."""
    return (self.dim() == 2 and target.dim() == 1) or (self.dim() == 1 and target.dim() == 0)


def nll_loss_forward(self: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    import torch

    if not _taken(self, target):
        return NotImplemented
    if self.dim() == 1:
        out, total = nll_loss_forward(self.unsqueeze(0), target.unsqueeze(0), weight, reduction, ignore_index)
        return (out.squeeze(0) if reduction == NONE else out), total
    hits = _hits(self, target, ignore_index)
    picked = torch.where(hits, self, 0.0)
    if weight is not None:
        # The weight of each row's target class (0 in ignored rows), as the pick.
        row_weight = torch.where(hits, weight.unsqueeze(0), 0.0).sum(1)
        picked = picked * weight.unsqueeze(0)
    picked = picked.sum(1)
    if reduction == NONE:
        return -picked, self.new_zeros(())
    if weight is None:
        total_weight = (target != ignore_index).sum().to(self.dtype)
    else:
        total_weight = row_weight.sum()
    total = -picked.sum()
    return (total / total_weight if reduction == MEAN else total), total_weight


def nll_loss_backward(
    grad_output: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int, total_weight: Any
) -> Any:
    import torch

    if not _taken(self, target):
        return NotImplemented
    if self.dim() == 1:
        grad = grad_output.unsqueeze(0) if reduction == NONE else grad_output
        return nll_loss_backward(
            grad, self.unsqueeze(0), target.unsqueeze(0), weight, reduction, ignore_index, total_weight
        ).squeeze(0)
    if reduction == NONE:
        scale = -grad_output.unsqueeze(1)
    else:
        scale = -grad_output / total_weight if reduction == MEAN else -grad_output
    if weight is not None:
        scale = scale * weight.unsqueeze(0)
    return torch.where(_hits(self, target, ignore_index), scale, 0.0).to(self.dtype)


def loss_decompositions() -> dict[Any, Any]:
    """The table entries, for AOTAutograd's ``decompositions``."""
    import torch

    aten = torch.ops.aten
    return {aten.nll_loss_forward.default: nll_loss_forward, aten.nll_loss_backward.default: nll_loss_backward}
