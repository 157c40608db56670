"""The published sources the field knowledge of ``advisor.knowledge`` counts from or cites (symptom priors, cause
checks): each with its citation, where to find it, and what was taken from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    key: str
    citation: str
    url: str
    counted: str


SOURCES: tuple[Source, ...] = (
    Source(
        "defect4ml",
        "M. M. Morovati et al. Bugs in machine learning-based systems: a faultload benchmark (defect4ML). "
        "Empirical Software Engineering, 2023.",
        "https://github.com/mohmehmo/defects4ml",
        "The conf.ini of each of the 95 bugs stored under bugs/001..100 (029, 044, 047, 050, 088 have none), each "
        "with root_cause, symptom and a one-line description; symptoms: Bad performance 51, Crash 38, Incorrect "
        "functionality 5, Memory out of bound 1. Read one by one; the per-bug mapping is given in BASIS.",
    ),
    Source(
        "autotrainer",
        "X. Zhang et al. AUTOTRAINER: An automatic DNN training problem detection and repair system. ICSE 2021.",
        "https://github.com/shiningrain/AUTOTRAINER",
        "Result/Accuracy_improvement_on_problems.csv: repaired models per training problem among the 495 models "
        "studied (gradient vanish 34, gradient explode 38, dying ReLU 17, oscillating loss 17, slow convergence "
        "149); DL_tools/theoretical/*.md: the causes and fixes the authors list per problem. Problems are symptoms, "
        "not causes, and the models come partly from generation, so no count is used.",
    ),
    Source(
        "grist",
        "M. Yan et al. Exposing numerical bugs in deep learning via gradient back-propagation (GRIST). ESEC/FSE 2021.",
        "https://github.com/Jacob-yen/GRIST",
        "README and dataset_info.md: 63 real programs with 79 numerical bugs, each exposed by an input that makes "
        "the program produce NaN or INF (23 known, 56 newly found). Selected for being numerical bugs, so not a "
        "base rate.",
    ),
    Source(
        "debar",
        "Y. Zhang et al. Detecting numerical bugs in neural network architectures (DEBAR). ESEC/FSE 2020.",
        "https://github.com/ForeverZyh/DEBAR",
        "README: 9 buggy architectures from earlier studies (8 from the TensorFlow program bugs of Zhang et al., "
        "ISSTA 2018, all in its 'incorrect model parameter or structure' class, 1 from TensorFuzz) and 48 from the "
        "TensorFlow Models repository. Mechanism only.",
    ),
    Source(
        "zhang2020",
        "R. Zhang, W. Xiao, H. Zhang, Y. Liu, H. Lin, M. Yang. An empirical study on program failures of deep "
        "learning jobs. ICSE 2020.",
        "https://doi.org/10.1145/3377811.3380362",
        "Abstract: 4960 failed jobs on a Microsoft platform; 48.0% fail in the interaction with the platform, "
        "mostly through differences between local and platform environments; 13.5% are deep-learning-specific. "
        "Its 20 categories were not read and are not mapped.",
    ),
    Source(
        "tambon2023",
        "F. Tambon et al. Silent bugs in deep learning frameworks: an empirical study of Keras and TensorFlow. "
        "Empirical Software Engineering, 2023.",
        "https://github.com/SilentBugsICSE/ICSE2023",
        "Artifacts/data.csv: 77 silent framework bugs, each with a buggy and a fixed release; scenarios: wrong "
        "calculation 23, wrong parameter setting 16, wrong displayed message 15, wrong save/reload 10, wrong shape 6, "
        "performance degradation 4, wrong structure 3; 3 in the Metrics component (issues 16, 45, 72). "
        "Framework bugs only, so not a base rate over causes.",
    ),
    Source(
        "dixit2021",
        "H. D. Dixit et al. Silent data corruptions at scale. arXiv:2102.11245, 2021.",
        "https://arxiv.org/abs/2102.11245",
        "Not counted: cited for the practice of finding a device that computes wrongly without an error (silent "
        "data corruption) by running the same computation on other devices and comparing.",
    ),
    Source(
        "micikevicius2018",
        "P. Micikevicius et al. Mixed precision training. ICLR 2018.",
        "https://arxiv.org/abs/1710.03740",
        "Mechanism: fp16's narrow range; updates and gradients below 2^-24 flush to zero, large values overflow; "
        "loss scaling and an fp32 master copy of the weights. No counts.",
    ),
    Source(
        "yolov3",
        "J. Redmon, A. Farhadi. YOLOv3: An incremental improvement. arXiv:1804.02767, 2018.",
        "https://arxiv.org/abs/1804.02767",
        "Mechanism only: box sizes are decoded as b_w = p_w exp(t_w), an output with no upper bound, so weights "
        "driven large give width and height that overflow on inputs the training batches did not hold. No counts.",
    ),
    Source(
        "pytorch_amp",
        "PyTorch documentation, Automatic Mixed Precision (torch.amp / torch.cuda.amp), gradient scaling.",
        "https://pytorch.org/docs/stable/amp.html",
        "Mechanism: small fp16 gradients underflow to zero; GradScaler skips optimizer.step() when the unscaled "
        "gradients contain inf or NaN and lowers the scale. No counts.",
    ),
    Source(
        "tuning_playbook",
        "V. Godbole, G. E. Dahl, J. Gilmer, C. J. Shallue, Z. Nado. Deep Learning Tuning Playbook, version 1.0, 2023.",
        "https://github.com/google-research/tuning_playbook",
        "Section 'How can optimization failures be debugged and mitigated?': any workload becomes unstable if the "
        "learning rate is too large; log the gradient norm; warmup and clipping (threshold near the 90th percentile "
        "of the gradient norm). No counts.",
    ),
    Source(
        "karpathy2019",
        "A. Karpathy. A recipe for training neural networks. Blog post, 25 April 2019.",
        "https://karpathy.github.io/2019/04/25/recipe/",
        "Practice: become one with the data; verify loss @ init (-log(1/n_classes) for a softmax); init well; "
        "overfit one batch; visualize just before the net; use backprop to chart dependencies. No counts.",
    ),
    Source(
        "umlaut",
        "E. Schoop, F. Huang, B. Hartmann. UMLAUT: Debugging deep learning programs using program structure and "
        "model behavior. CHI 2021.",
        "https://github.com/BerkeleyHCI/umlaut",
        "umlaut/heuristics.py: inputs outside [-1, 1], non-float inputs, NaN in the loss, a loss without "
        "from_logits after a last layer that is not a softmax. No counts.",
    ),
)

SOURCE_BY_KEY = {s.key: s for s in SOURCES}
