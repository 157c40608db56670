"""Class counts of well-known public classification data sets, as their loaders document them.

A config that names its data set (``dataset: cifar10``) states the class count as surely as ``num_classes``
does, as long as the name is the data set's own: only exact names (after lower-casing and dropping ``-``, ``_``,
spaces and dots) are looked up, so ``digits-subset`` or ``cifar10-3class`` say nothing.
"""

from __future__ import annotations

import re

_TV = "https://pytorch.org/vision/stable/generated/torchvision.datasets."
_SK = "https://scikit-learn.org/stable/modules/generated/sklearn.datasets."

#: normalised name -> (classes, where the count is documented)
DATASET_CLASSES: dict[str, tuple[int, str]] = {
    "mnist": (10, _TV + "MNIST.html"),
    "fashionmnist": (10, _TV + "FashionMNIST.html"),
    "kmnist": (10, _TV + "KMNIST.html"),
    "cifar10": (10, _TV + "CIFAR10.html"),
    "cifar100": (100, _TV + "CIFAR100.html"),
    "svhn": (10, _TV + "SVHN.html"),
    "stl10": (10, _TV + "STL10.html"),
    "imagenet": (1000, _TV + "ImageNet.html"),
    "imagenet1k": (1000, _TV + "ImageNet.html"),
    "ilsvrc2012": (1000, _TV + "ImageNet.html"),
    "food101": (101, _TV + "Food101.html"),
    "flowers102": (102, _TV + "Flowers102.html"),
    "oxfordiiitpet": (37, _TV + "OxfordIIITPet.html"),
    "digits": (10, _SK + "load_digits.html"),
    "iris": (3, _SK + "load_iris.html"),
    "wine": (3, _SK + "load_wine.html"),
    "breastcancer": (2, _SK + "load_breast_cancer.html"),
    "covtype": (7, _SK + "fetch_covtype.html"),
}

_DROP = re.compile(r"[-_\s.]+")


def dataset_classes(name: str) -> tuple[int, str] | None:
    """(classes, documentation) of a data set named exactly, else None."""
    return DATASET_CLASSES.get(_DROP.sub("", name.strip().lower()))


__all__ = ["DATASET_CLASSES", "dataset_classes"]
