"""The one cheapest check that confirms or rules out each cause, as a user would run it.

A differential names the symptom, the two or three candidate causes in order, and for each the check below:
one sentence, imperative, something that takes minutes on the user's own code and data. ``CHECK_SOURCES`` names
where the practice is documented, for the checks that have such a source (the keys of
``advisor.knowledge.prior_sources.SOURCES``, followed by the part of that source the check comes from); a check
without an entry is a direct test of the cause's definition in docs/causes.md.
"""

from __future__ import annotations

CHECKS: dict[str, str] = {
    "lr_too_high": (
        "Rerun 200 steps at a tenth of the learning rate: if the NaN, the spikes or the divergence go away or "
        "come later, the rate is the cause."
    ),
    "lr_too_low": (
        "Rerun 200 steps at ten times the learning rate: if the loss falls clearly faster and stays finite, the "
        "rate was too low."
    ),
    "loss_scale_bad": (
        "Print the loss scale and whether the step was skipped every 50 steps: a scale that keeps halving or "
        "sits at 1 with steps skipped again and again, or a small fixed scale with gradients that are all zero, "
        "means the scale does not suit the run; rerun with dynamic loss scaling."
    ),
    "weight_init_bad": (
        "Print the loss at step 0, before any update, and each layer's weight mean and std: a softmax classifier "
        "should start near ln(C) and no layer should be all zeros or all one value; a far larger first loss or "
        "constant weights point at the initialisation."
    ),
    "hparam_mismatch": (
        "Print the effective settings of both runs side by side (optimizer and its epsilon and betas, learning "
        "rate and schedule, batch size, weight decay, BatchNorm momentum, dropout) and rerun with the baseline's "
        "value for the first one that differs: if the gap closes, that setting is the cause."
    ),
    "insufficient_epochs": (
        "Resume from the last checkpoint for another quarter of the steps: if the loss or the score keeps "
        "improving at about the same rate, training stopped too early."
    ),
    "wrong_operator": (
        "Run one fixed batch with forward hooks and print each layer's output dtype and a few values: a float "
        "output holding only whole numbers or zeros (integer division, a cast), or a hand-written softmax/log "
        "that disagrees with the built-in one on the same input, marks the misused operator."
    ),
    "weight_sharing_error": (
        "Print the storage of every parameter (data_ptr() in PyTorch, the variable name in TensorFlow): two layers "
        "meant to be separate that share one storage, or two meant to be tied that do not, are the cause."
    ),
    "weight_freezing_error": (
        "Copy all parameters, run 10 steps, and list those whose values did not change (and those with "
        "requires_grad=False or trainable=False): a layer that should train but stayed the same is frozen."
    ),
    "disconnected_node": (
        "After one backward pass list the parameters whose gradient is None or exactly zero: a block without a "
        "gradient does not reach the loss."
    ),
    "loss_function_error": (
        "Print the model's last layer and the loss: a softmax/sigmoid before a loss that takes logits "
        "(CrossEntropyLoss, from_logits=True), MSE on class ids, or a loss made for another label format is the "
        "cause."
    ),
    "optimizer_error": (
        "Take one optimizer step on a single batch and recompute the loss on that same batch: it must go down, "
        "and every parameter must have moved against its gradient (with the gradients zeroed before each "
        "backward); if not, the optimizer is wired or configured wrongly."
    ),
    "missing_values": (
        "Count the NaNs in the training and evaluation inputs and labels (np.isnan(x).sum() per array): any NaN "
        "explains a NaN loss; drop or impute those samples and rerun."
    ),
    "class_imbalance": (
        "Print the label histogram of the training and the evaluation set and the majority-class share: an "
        "accuracy equal to that share means the model predicts one class."
    ),
    "outliers": (
        "Print the min, max and 0.1/99.9 percentiles of every input feature and of the targets: values orders of "
        "magnitude outside the bulk, or infinities, are the outliers; clip or drop them and rerun 200 steps."
    ),
    "label_errors": (
        "Look at 20 random training samples next to their labels and the class-index mapping: pairs that do not "
        "match mean the labels are wrong."
    ),
    "insufficient_samples": (
        "Train once on half of the training set: if the evaluation score drops clearly against the full set, the "
        "model is data-limited and more samples or augmentation will help."
    ),
    "not_normalized": (
        "Print the mean, std, min and max of one input batch as it enters the model: raw 0-255 pixels, or "
        "features with means and spreads far from 0 and 1, mean the inputs are not normalised."
    ),
    "preprocessing_mismatch": (
        "Push the same 8 raw samples through the training pipeline and through the evaluation (or baseline) "
        "pipeline and compare the tensors that come out (shape, dtype, mean, std): any difference is the mismatch."
    ),
    "gradient_explosion": (
        "Log the global gradient norm every step for 200 steps, then rerun with clipping at about its 90th "
        "percentile: a norm that grows by orders of magnitude before the loss spikes, and spikes that vanish "
        "with clipping, name the explosion."
    ),
    "gradient_vanishing": (
        "Print each layer's gradient norm after one backward pass: first layers several orders of magnitude "
        "below the last ones, or near zero, mean the gradients vanish."
    ),
    "activation_saturation": (
        "Run one batch with forward hooks and print, per activation, the share of ReLU outputs that are exactly 0 "
        "and of sigmoid/tanh outputs within 1% of their limits: shares near 100% mean dead or saturated units."
    ),
    "overfitting": (
        "Plot the train and the evaluation loss on one axis: a train loss still falling while the evaluation "
        "loss has turned up is overfitting; the evaluation score at the turn is what early stopping would keep."
    ),
    "fp_overflow": "Run the same steps in fp32 (or bf16): if the NaN/Inf is gone, it is fp16 overflow or underflow.",
    "nan_inf_source": (
        "Rerun the failing step with anomaly detection on (torch.autograd.set_detect_anomaly(True), or "
        "tf.debugging.enable_check_numerics()) and read the first operator it names: a log, division, sqrt or "
        "exp that turns finite inputs into NaN/Inf is the source."
    ),
    "operator_accuracy": (
        "Dump the per-operator outputs of the run and of the baseline on the same input and weights and compare "
        "them (advisor compare RUN_DUMP BASELINE_DUMP): the first operator beyond tolerance is the one that "
        "deviates, the later ones inherit its error."
    ),
    "fusion_error": (
        "Rerun the same steps with operator fusion and graph optimisation off (eager mode, torch.compile or XLA "
        "off, MindSpore graph-kernel fusion off): if the result then matches the baseline, fusion is the cause."
    ),
    "communication_error": (
        "Rerun the step with the collective checked: all-reduce a tensor of known values (each rank its rank "
        "number) on the same process group and compare with the expected sum on every rank; then compare the "
        "deviating rank's collective input and output dumps with the other ranks'."
    ),
    "hardware_fault": (
        "Rerun the same step with the deviating rank's work moved to another device (swap two ranks' devices): "
        "if the deviation follows the device, not the rank, the card is faulty; run the vendor's device "
        "diagnostics on it."
    ),
    "data_sharding_error": (
        "Print the first sample ids each rank reads in the run and in the benchmark (the sampler's indices for "
        "its rank and world size): a rank whose ids differ, or two ranks with the same ids, shows the sharding."
    ),
    "nondeterminism": (
        "Run the same configuration twice with the same seed for 50 steps and compare the losses step by step; if "
        "they differ, repeat with deterministic algorithms on (torch.use_deterministic_algorithms(True)): a "
        "difference that disappears names nondeterminism."
    ),
    "data_not_shuffled": (
        "Shuffle check: print the labels of the first two batches and of two batches later in the epoch: long "
        "runs of one class, or the same order every epoch, mean the data is not shuffled."
    ),
    "metric_misuse": (
        "Compute the metric by hand on 10 evaluation samples (prediction next to target) and compare it with the "
        "reported value, and check that it fits the task (accuracy on a regression target is always near 0): a "
        "disagreement means the metric is misused."
    ),
    "baseline_unqualified": (
        "Plot the baseline's own loss and score curves and compare its final value with the published figure for "
        "that model and data: a baseline that diverged, stalled, or ran another configuration is no reference."
    ),
    "environment_mismatch": (
        "Print the framework and library versions of the run and of the setup the code was written for (or the "
        "baseline's), and rerun a few hundred steps on the versions the project names: if the problem goes away, "
        "the version is the cause."
    ),
}

#: cause -> where the practice behind its check is documented (prior_sources.SOURCES key: the part used)
CHECK_SOURCES: dict[str, str] = {
    "lr_too_high": "tuning_playbook: 'any workload will become unstable if the learning rate is too large'; lr sweep",
    "lr_too_low": "tuning_playbook: learning-rate sweep; autotrainer: its notes name a too-small rate first",
    "loss_scale_bad": "pytorch_amp: GradScaler skips steps with inf/NaN gradients and lowers the scale",
    "weight_init_bad": "karpathy2019: 'verify loss @ init', 'init well'",
    "disconnected_node": "karpathy2019: 'use backprop to chart dependencies'",
    "loss_function_error": "umlaut: softmax/from_logits heuristic; karpathy2019: overfit one batch",
    "class_imbalance": "karpathy2019: 'become one with the data' (data imbalances), 'init well'",
    "outliers": "karpathy2019: 'become one with the data' (outliers)",
    "label_errors": "karpathy2019: 'become one with the data' (label noise)",
    "not_normalized": "umlaut: input-normalisation heuristic (inputs outside [-1, 1]); karpathy2019: "
    "'visualize just before the net'",
    "preprocessing_mismatch": "karpathy2019: 'visualize just before the net'",
    "gradient_explosion": "tuning_playbook: log the gradient norm; clip near its 90th percentile",
    "activation_saturation": "autotrainer: dying-ReLU and gradient-vanish detection",
    "fp_overflow": "micikevicius2018: fp16 range and loss scaling; pytorch_amp",
    "environment_mismatch": "tambon2023: silent framework bugs fixed in later releases",
    "hardware_fault": "dixit2021: silent data corruptions at scale, found by rerunning on other devices",
}
