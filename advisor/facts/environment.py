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


class ApiWarning(Fact):
    """A warning a library printed about the run's own calls: deprecated, renamed, or behaving differently now."""

    kind: Literal["api_warning"] = "api_warning"
    category: Literal["behaviour_changed", "legacy_api", "deprecated"] = Field(
        description="behaviour_changed: the library says the call does something else in the installed version "
        "than the code was written for (PyTorch's 'In PyTorch 1.1.0 and later ...', 'was removed and now has no "
        "effect', a default 'changed'); legacy_api: the code is written against an older major API that the "
        "library converts, renames or reads differently (Keras 2's 'Update your `Conv2D` call to the Keras 2 API', "
        "'The semantics of the Keras 2 argument `steps_per_epoch` is not the same as ...'); deprecated: the call "
        "still works as written and is going away (TensorFlow's 'Please use tf.compat.v1.X instead')"
    )
    library: str = Field(default="", description="the library that warned, where the line says (torch, ...)")
    message: str = Field(description="the warning's text, as printed (at most 240 characters)")
    count: int = Field(default=1, description="how many times the same message appears in the text read")
    doc = "a library's warning about a deprecated, renamed or changed API the run's code calls"
