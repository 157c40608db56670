"""Facts about the software a run was made with: the library versions its files state.

``library_version``: one library's version as a log prints it (``transformers==4.45.2``, the
``- `transformers` version: 4.45.2`` of ``transformers-cli env``, ``PyTorch version (GPU?): 2.4.1``) or a
config stores it (``transformers_version`` in a Hugging Face ``config.json``). Rules compare ``version_code``
(major x 1,000,000 + minor x 1,000 + patch) with the release that changed or fixed a behaviour.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class LibraryVersion(Fact):
    """One library's version, as the run's files state it."""

    kind: Literal["library_version"] = "library_version"
    library: str = Field(
        description="canonical name: torch, tensorflow, keras, transformers, peft, accelerate, lightning, "
        "mindspore, deepspeed, jax, mxnet, paddle, ultralytics, timm, mmcv, mmdet, detectron2, numpy, onnxruntime"
    )
    version: str = Field(description="the version as written, e.g. 4.45.2 or 2.4.1+cu121")
    version_code: int = Field(description="major x 1,000,000 + minor x 1,000 + patch (4.45.2 -> 4045002)")
    stated_in: str = Field(description="what states it: the line's text or the config key")
    doc = "a library version the run's logs or configs state (version_code for comparisons)"
