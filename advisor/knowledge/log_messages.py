"""Messages libraries print that name a mechanism, as a table: what to match, what it means, where it is
documented. ``advisor/extract/log_messages.py`` turns each match into a ``log_message`` fact; the rules of
``rules/*/log-message-*.yaml`` say which causes each points at, and when.

Adding a message is one row here (its pattern written from the library's source, never from one run's line), a
rule that reads it, and a test on output the real library printed (tests/extract/test_log_messages.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class MessagePattern:
    """One kind of message: its id, the library that prints it, the pattern, the mechanism and the reference."""

    id: str
    library: str
    pattern: re.Pattern[str]
    mechanism: str
    reference: str


MESSAGES: tuple[MessagePattern, ...] = (
    MessagePattern(
        "numpy_invalid_value",
        "numpy",
        re.compile(r"RuntimeWarning: (?:invalid value|divide by zero) encountered in (?P<op>[\w ]+)"),
        "numpy computed an undefined value (log or sqrt of a negative, 0/0, x/0) and returned NaN or Inf: the "
        "inputs of that line are outside the operation's domain",
        "https://numpy.org/doc/stable/reference/generated/numpy.seterr.html",
    ),
    MessagePattern(
        "numpy_overflow",
        "numpy",
        re.compile(r"RuntimeWarning: overflow encountered in (?P<op>[\w ]+)"),
        "numpy's result exceeded its dtype's range and became Inf (exp of a large value, a product of large values)",
        "https://numpy.org/doc/stable/reference/generated/numpy.seterr.html",
    ),
    MessagePattern(
        "tokenization_mismatch",
        "fastchat",
        re.compile(r"WARNING: tokenization mismatch: (?P<op>\d+ vs\. \d+)"),
        "the preprocessing counted another number of tokens for a conversation than the tokenizer produced (its "
        "offsets were written for another tokenizer or template), and masked every label of that sample: it "
        "teaches nothing",
        "FastChat fastchat/train/train.py preprocess() (LLaVA's train.py copies it): target[:] = IGNORE_TOKEN_ID",
    ),
    MessagePattern(
        "torch_target_size",
        "torch",
        re.compile(r"UserWarning: Using a target size \((?P<op>[^\n]{0,80}?)\) that is different to the input size"),
        "PyTorch's mse_loss / l1_loss broadcast a target and an input of different shapes ((N,) against (N, 1) "
        "gives an N x N difference): the loss compares every prediction with every target, and the model learns "
        "to predict their mean",
        "https://pytorch.org/docs/stable/generated/torch.nn.functional.mse_loss.html (torch/nn/functional.py)",
    ),
)

#: a raising file or source line that handles targets or annotations
ABOUT_TARGETS = re.compile(r"box|anchor|target|annot|label|\bgt_|_gt\b", re.I)
