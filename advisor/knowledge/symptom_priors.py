"""Priors from the field: for each symptom a run shows, how often each cause explains it in real faulty programs.

The model
---------
advisor first decides what a run *shows* (a symptom id, the keys of ``PRIORS``), then ranks the causes that
explain it. For a symptom ``s`` and a cause ``c`` the prior ``PRIORS[s][c]`` is P(c | s): among real faulty
deep-learning programs that show ``s``, the share whose confirmed cause is ``c``. The rules supply the likelihood
of their evidence under each cause, and the ranking combines the two (posterior proportional to prior times
likelihood). ``"other"`` holds causes outside the list (outside advisor's catalogue, or unknown); a consumer that
needs a value for an unlisted catalogue cause shares ``"other"`` out, this table does not prescribe how.

How the numbers were obtained, the same way for every symptom:

1. The causes the documented mechanism of the symptom admits are listed (3 to 8 of them, plus ``"other"``).
2. Real bugs whose recorded symptom is ``s`` are counted per advisor cause (``COUNTS``), mapping each source's own
   root-cause label (and, where the label is too coarse, its one-line description) onto advisor's ids; bugs whose
   cause has no advisor id count under ``"other"``.
3. ``PRIORS[s][c] = (COUNTS[s][c] + 1) / (N + K)``, where ``N`` is the number of bugs counted for ``s`` and ``K``
   the number of entries (listed causes plus ``"other"``): add-one (Laplace) smoothing, i.e. the posterior mean
   under a uniform Dirichlet prior. With no published count for a symptom this is the same share for every cause
   the mechanism admits; the rule, not a paper, sets those figures, and ``BASIS`` says so symptom by symptom.

The only source that labels real faulty programs with *both* a symptom and a root cause in a form that could be
read here is the defect4ML benchmark (95 labelled bugs, ``[defect4ml]``). Other studies give mechanisms, symptom
frequencies or whole-study shares that do not condition on advisor's symptoms; ``BASIS`` cites them where they
decide which causes are admitted, but their numbers are not mixed into the counts. Counts are small (N = 44 for
``target_gap`` and 39 for ``crash``, 3 or fewer elsewhere): these priors are weak and meant to be overruled by
evidence. The labelled corpora of this project (eval-dev, eval-real-dev, the mutation corpus) were deliberately
not used, so that the priors stay independent of the sets advisor is measured on.
"""

from __future__ import annotations


#: bugs counted per symptom and advisor cause (step 2 of the model); 0 = admitted by the mechanism, none counted
COUNTS: dict[str, dict[str, float]] = {
    "predictions_saturated": {
        "loss_function_error": 0,
        "activation_saturation": 0,
        "not_normalized": 0,
        "lr_too_high": 0,
        "weight_init_bad": 0,
        "other": 0,
    },
    "loss_scale_collapses": {
        "fp_overflow": 0,
        "loss_scale_bad": 0,
        "lr_too_high": 0,
        "gradient_explosion": 0,
        "nan_inf_source": 0,
        "other": 0,
    },
    "nonfinite_loss_at_start": {
        "nan_inf_source": 0,
        "missing_values": 0,
        "outliers": 0,
        "fp_overflow": 0,
        "weight_init_bad": 0,
        "loss_function_error": 0,
        "other": 0,
    },
    "nonfinite_loss": {
        "nan_inf_source": 2,
        "not_normalized": 1,
        "lr_too_high": 0,
        "fp_overflow": 0,
        "gradient_explosion": 0,
        "loss_scale_bad": 0,
        "outliers": 0,
        "missing_values": 0,
        "other": 0,
    },
    "nonfinite_eval_loss": {
        "preprocessing_mismatch": 0,
        "missing_values": 0,
        "outliers": 0,
        "nan_inf_source": 0,
        "fp_overflow": 0,
        "lr_too_high": 0,
        "other": 0,
    },
    "nonfinite_gradients": {
        "fp_overflow": 0,
        "loss_scale_bad": 0,
        "gradient_explosion": 0,
        "nan_inf_source": 0,
        "other": 0,
    },
    "loss_explodes": {
        "lr_too_high": 1,
        "gradient_explosion": 0,
        "weight_init_bad": 0,
        "not_normalized": 0,
        "outliers": 0,
        "optimizer_error": 0,
        "other": 0,
    },
    "loss_stuck": {
        "lr_too_low": 0,
        "weight_freezing_error": 0,
        "disconnected_node": 0,
        "gradient_vanishing": 0,
        "activation_saturation": 0,
        "weight_init_bad": 0,
        "optimizer_error": 0,
        "loss_function_error": 0,
        "other": 0,
    },
    "loss_at_chance": {
        "wrong_operator": 1,
        "lr_too_high": 0.5,
        "lr_too_low": 0.5,
        "loss_function_error": 0,
        "label_errors": 0,
        "activation_saturation": 0,
        "weight_init_bad": 0,
        "not_normalized": 0,
        "other": 0,
    },
    "loss_at_floor": {
        "loss_function_error": 0,
        "label_errors": 0,
        "lr_too_high": 0,
        "activation_saturation": 0,
        "wrong_operator": 0,
        "other": 0,
    },
    "loss_oscillates": {
        "lr_too_high": 0,
        "optimizer_error": 0,
        "data_not_shuffled": 0,
        "gradient_explosion": 0,
        "outliers": 0,
        "other": 0,
    },
    "eval_worse_than_train": {
        "preprocessing_mismatch": 1,
        "overfitting": 0,
        "insufficient_samples": 0,
        "class_imbalance": 0,
        "environment_mismatch": 0,
        "other": 0,
    },
    "score_at_chance": {
        "data_not_shuffled": 1,
        "preprocessing_mismatch": 0,
        "class_imbalance": 0,
        "metric_misuse": 0,
        "label_errors": 0,
        "environment_mismatch": 0,
        "other": 0,
    },
    "score_near_zero": {
        "insufficient_epochs": 0,
        "weight_init_bad": 0,
        "lr_too_high": 0,
        "lr_too_low": 0,
        "label_errors": 0,
        "preprocessing_mismatch": 0,
        "hparam_mismatch": 0,
        "environment_mismatch": 0,
        "other": 0,
    },
    "metric_inconsistent": {
        "metric_misuse": 0,
        "loss_function_error": 0,
        "environment_mismatch": 0,
        "preprocessing_mismatch": 0,
        "other": 0,
    },
    "slow_or_unfinished": {
        "lr_too_low": 0,
        "insufficient_epochs": 0,
        "not_normalized": 0,
        "gradient_vanishing": 0,
        "activation_saturation": 0,
        "weight_init_bad": 0,
        "other": 0,
    },
    "baseline_gap": {
        "hparam_mismatch": 0,
        "preprocessing_mismatch": 0,
        "operator_accuracy": 0,
        "fusion_error": 0,
        "environment_mismatch": 0,
        "nondeterminism": 0,
        "baseline_unqualified": 0,
        "other": 0,
    },
    "target_gap": {
        "loss_function_error": 10,
        "activation_saturation": 6,
        "insufficient_epochs": 4,
        "lr_too_high": 2,
        "lr_too_low": 2,
        "optimizer_error": 2,
        "not_normalized": 1,
        "data_not_shuffled": 1,
        "other": 16,
    },
    "crash": {
        "environment_mismatch": 6,
        "loss_function_error": 2,
        "optimizer_error": 1,
        "weight_init_bad": 1,
        "preprocessing_mismatch": 1,
        "other": 28,
    },
}

#: P(cause | symptom) = (count + 1) / (N + K), written as that fraction so the basis stays visible
PRIORS: dict[str, dict[str, float]] = {
    "predictions_saturated": {
        "loss_function_error": 1 / 6,
        "activation_saturation": 1 / 6,
        "not_normalized": 1 / 6,
        "lr_too_high": 1 / 6,
        "weight_init_bad": 1 / 6,
        "other": 1 / 6,
    },
    "loss_scale_collapses": {
        "fp_overflow": 1 / 6,
        "loss_scale_bad": 1 / 6,
        "lr_too_high": 1 / 6,
        "gradient_explosion": 1 / 6,
        "nan_inf_source": 1 / 6,
        "other": 1 / 6,
    },
    "nonfinite_loss_at_start": {
        "nan_inf_source": 1 / 7,
        "missing_values": 1 / 7,
        "outliers": 1 / 7,
        "fp_overflow": 1 / 7,
        "weight_init_bad": 1 / 7,
        "loss_function_error": 1 / 7,
        "other": 1 / 7,
    },
    "nonfinite_loss": {
        "nan_inf_source": 3 / 12,
        "not_normalized": 2 / 12,
        "lr_too_high": 1 / 12,
        "fp_overflow": 1 / 12,
        "gradient_explosion": 1 / 12,
        "loss_scale_bad": 1 / 12,
        "outliers": 1 / 12,
        "missing_values": 1 / 12,
        "other": 1 / 12,
    },
    "nonfinite_eval_loss": {
        "preprocessing_mismatch": 1 / 7,
        "missing_values": 1 / 7,
        "outliers": 1 / 7,
        "nan_inf_source": 1 / 7,
        "fp_overflow": 1 / 7,
        "lr_too_high": 1 / 7,
        "other": 1 / 7,
    },
    "nonfinite_gradients": {
        "fp_overflow": 1 / 5,
        "loss_scale_bad": 1 / 5,
        "gradient_explosion": 1 / 5,
        "nan_inf_source": 1 / 5,
        "other": 1 / 5,
    },
    "loss_explodes": {
        "lr_too_high": 2 / 8,
        "gradient_explosion": 1 / 8,
        "weight_init_bad": 1 / 8,
        "not_normalized": 1 / 8,
        "outliers": 1 / 8,
        "optimizer_error": 1 / 8,
        "other": 1 / 8,
    },
    "loss_stuck": {
        "lr_too_low": 1 / 9,
        "weight_freezing_error": 1 / 9,
        "disconnected_node": 1 / 9,
        "gradient_vanishing": 1 / 9,
        "activation_saturation": 1 / 9,
        "weight_init_bad": 1 / 9,
        "optimizer_error": 1 / 9,
        "loss_function_error": 1 / 9,
        "other": 1 / 9,
    },
    "loss_at_chance": {
        "wrong_operator": 2 / 11,
        "lr_too_high": 1.5 / 11,
        "lr_too_low": 1.5 / 11,
        "loss_function_error": 1 / 11,
        "label_errors": 1 / 11,
        "activation_saturation": 1 / 11,
        "weight_init_bad": 1 / 11,
        "not_normalized": 1 / 11,
        "other": 1 / 11,
    },
    "loss_at_floor": {
        "loss_function_error": 1 / 6,
        "label_errors": 1 / 6,
        "lr_too_high": 1 / 6,
        "activation_saturation": 1 / 6,
        "wrong_operator": 1 / 6,
        "other": 1 / 6,
    },
    "loss_oscillates": {
        "lr_too_high": 1 / 6,
        "optimizer_error": 1 / 6,
        "data_not_shuffled": 1 / 6,
        "gradient_explosion": 1 / 6,
        "outliers": 1 / 6,
        "other": 1 / 6,
    },
    "eval_worse_than_train": {
        "preprocessing_mismatch": 2 / 7,
        "overfitting": 1 / 7,
        "insufficient_samples": 1 / 7,
        "class_imbalance": 1 / 7,
        "environment_mismatch": 1 / 7,
        "other": 1 / 7,
    },
    "score_at_chance": {
        "data_not_shuffled": 2 / 8,
        "preprocessing_mismatch": 1 / 8,
        "class_imbalance": 1 / 8,
        "metric_misuse": 1 / 8,
        "label_errors": 1 / 8,
        "environment_mismatch": 1 / 8,
        "other": 1 / 8,
    },
    "score_near_zero": {
        "insufficient_epochs": 1 / 9,
        "weight_init_bad": 1 / 9,
        "lr_too_high": 1 / 9,
        "lr_too_low": 1 / 9,
        "label_errors": 1 / 9,
        "preprocessing_mismatch": 1 / 9,
        "hparam_mismatch": 1 / 9,
        "environment_mismatch": 1 / 9,
        "other": 1 / 9,
    },
    "metric_inconsistent": {
        "metric_misuse": 1 / 5,
        "loss_function_error": 1 / 5,
        "environment_mismatch": 1 / 5,
        "preprocessing_mismatch": 1 / 5,
        "other": 1 / 5,
    },
    "slow_or_unfinished": {
        "lr_too_low": 1 / 7,
        "insufficient_epochs": 1 / 7,
        "not_normalized": 1 / 7,
        "gradient_vanishing": 1 / 7,
        "activation_saturation": 1 / 7,
        "weight_init_bad": 1 / 7,
        "other": 1 / 7,
    },
    "baseline_gap": {
        "hparam_mismatch": 1 / 8,
        "preprocessing_mismatch": 1 / 8,
        "operator_accuracy": 1 / 8,
        "fusion_error": 1 / 8,
        "environment_mismatch": 1 / 8,
        "nondeterminism": 1 / 8,
        "baseline_unqualified": 1 / 8,
        "other": 1 / 8,
    },
    "target_gap": {
        "loss_function_error": 11 / 53,
        "activation_saturation": 7 / 53,
        "insufficient_epochs": 5 / 53,
        "lr_too_high": 3 / 53,
        "lr_too_low": 3 / 53,
        "optimizer_error": 3 / 53,
        "not_normalized": 2 / 53,
        "data_not_shuffled": 2 / 53,
        "other": 17 / 53,
    },
    "crash": {
        "environment_mismatch": 7 / 45,
        "loss_function_error": 3 / 45,
        "optimizer_error": 2 / 45,
        "weight_init_bad": 2 / 45,
        "preprocessing_mismatch": 2 / 45,
        "other": 29 / 45,
    },
}

#: bugs counted per advisor cause over every symptom (the column sums of ``COUNTS``: [defect4ml]'s labelled bugs as
#: mapped there). Only a tie-break: where a symptom's prior and the rules leave candidates level, the one more
#: often found in real faulty programs is listed first instead of the first in the alphabet.
FIELD_COUNTS: dict[str, float] = {
    cause: float(sum(counts.get(cause, 0) for counts in COUNTS.values()))
    for cause in sorted({c for counts in COUNTS.values() for c in counts} - {"other"})
}


#: how each symptom's numbers were obtained; [key] names a Source
BASIS: dict[str, str] = {
    "nonfinite_loss_at_start": (
        "No published count: [defect4ml] has no bug described as NaN before the first update, and no study read "
        "separates first-step NaNs. Nothing has been updated yet, so causes that act through updates (learning "
        "rate, optimiser, gradient explosion, loss scale) are excluded; [grist] (79 bugs) and [debar] show real "
        "NaN/Inf bugs that the forward computation produces on some inputs, and [micikevicius2018] fp16's "
        "overflow range. Rule: the same share for the six causes that mechanism admits "
        "(an unsafe operator, NaN or Inf in the data, fp16 overflow in the forward pass, weights so large that "
        "activations overflow, a loss fed values outside its domain) and for 'other'."
    ),
    "nonfinite_loss": (
        "[defect4ml] bugs described as a train loss that turns NaN during training: 001 ('after a number of "
        "training iterations') and 003, both a hand-written cross-entropy, 001 fixed with the built-in "
        "softmax_cross_entropy_with_logits (a numerically unsafe operation in the model) -> nan_inf_source 2; "
        "100 (missing input normalisation, NaN 'after some epochs') -> not_normalized 1; N = 3, then add-one over "
        "the admitted causes: a too-large learning rate "
        "([tuning_playbook]: any workload becomes unstable if the learning rate is too large), fp16 overflow "
        "([micikevicius2018]) and an unsuitable loss scale ([pytorch_amp]), gradient explosion ([autotrainer]'s "
        "notes: it comes with abnormally large, even NaN, losses), and NaN/Inf or extreme values in the data. "
        "[grist]'s 79 NaN/INF bugs were selected for being numerical and are not counted."
    ),
    "nonfinite_eval_loss": (
        "No published count: none of the 95 [defect4ml] bugs shows a NaN in the evaluation loss only. Rule: the "
        "same share for the causes that can reach the evaluation pass while the training loss stays finite: an evaluation "
        "pipeline that differs from training (preprocessing_mismatch), NaN or extreme values only in the "
        "evaluation data, an operator that turns some evaluation inputs into NaN/Inf ([grist]: such bugs are "
        "input-triggered), fp16 evaluation without the "
        "safeguards of training ([pytorch_amp]), weights that a too-large learning rate drove so large that an "
        "unbounded output (an exponential box decoding, [yolov3]; logits) overflows on inputs the training batches "
        "did not hold, and 'other'."
    ),
    "predictions_saturated": (
        "No published count. Mechanism: a cross-entropy equal to the error rate times -ln of the probability clip "
        "means every output sits at 0 or 1: an output activation that cannot give probabilities for the loss "
        "(softmax over one unit, a linear or ReLU output into binary cross-entropy), a saturated sigmoid/softmax "
        "from inputs or weights far too large (unnormalised inputs, a blown-up initialisation or step size) "
        "([karpathy2019]: check the loss at initialisation). Rule: the same share for these five causes and "
        "'other'."
    ),
    "loss_scale_collapses": (
        "No published count. Mechanism: [pytorch_amp]'s GradScaler halves the scale at every step whose gradients "
        "overflow, so a scale that keeps falling to 1 means gradients overflow at every scale ([micikevicius2018]): "
        "values beyond the fp16 range (fp16 overflow), a scale set badly, updates that blow the weights up (a "
        "rate too large, exploding gradients), or an operator making Inf/NaN. Rule: the same share for these "
        "five causes and 'other'."
    ),
    "nonfinite_gradients": (
        "No published count. Mechanism: with mixed precision [pytorch_amp]'s GradScaler skips a step whose "
        "unscaled gradients hold inf or NaN and lowers the scale, so occasional skips are expected and persistent "
        "ones point at fp16 overflow ([micikevicius2018]) or an unsuitable scale; with a finite loss the "
        "non-finite value can also come from exploding gradients or from an operator whose backward is "
        "unbounded (the derivative of sqrt or log at 0). Rule: the same share for these four causes and 'other'."
    ),
    "loss_explodes": (
        "[defect4ml] bug 002 (learning rate not small enough, parameters blow up during training) -> lr_too_high "
        "1; N = 1, then add-one over the admitted causes: gradient explosion ([autotrainer] repaired 38 models "
        "for it; its notes trace it to activations with gradients above 1 in deep nets), weights initialised too "
        "large, unnormalised inputs or extreme values, a wrongly configured optimiser; [tuning_playbook]: any "
        "workload becomes unstable if the learning rate is too large."
    ),
    "loss_stuck": (
        "No published share over causes: none of the 95 [defect4ml] bugs is described as a loss that never moves; "
        "[autotrainer] counts symptoms (34 gradient-vanishing and 17 dying-ReLU repairs among 495 partly "
        "generated models), not causes. Rule: the same share for the eight causes whose mechanism leaves the "
        "weights (nearly) unchanged: a tiny learning rate, frozen weights, a block cut off from the loss, "
        "vanishing gradients, dead or saturated activations, a zero or constant initialisation, an optimiser "
        "that does not step, a loss whose gradient is zero, and 'other'."
    ),
    "loss_at_chance": (
        "[defect4ml] bugs whose accuracy stays at a chance-like level: 005 (hand-written softmax, accuracy near "
        "10%, fixed with the built-in softmax layer) -> wrong_operator 1; 078 (the optimiser's default "
        "learning rate, accuracy near 50%; the direction is not stated) -> 0.5 lr_too_high and "
        "0.5 lr_too_low; N = 2, then add-one over the causes that make a classifier output the uniform guess: a "
        "loss/output pairing that does not fit ([umlaut] checks softmax versus from_logits), labels that carry "
        "no signal, saturated activations, a bad initialisation ([karpathy2019]: verify loss @ init), and inputs far from unit "
        "scale, which saturate the first layers so that the output stays uniform (LeCun et al., Efficient BackProp, "
        "1998: normalise the inputs)."
    ),
    "loss_at_floor": (
        "No published count: none of the 95 [defect4ml] bugs is described as a loss floor. Rule: the same share "
        "for the documented floor mechanisms: a softmax applied before a loss that takes logits ([umlaut]'s "
        "heuristic), label noise, a learning rate too large to settle, saturated activations, a misused operator, "
        "and 'other'."
    ),
    "loss_oscillates": (
        "No published share over causes. [autotrainer]'s notes on its oscillating-loss problem (17 repaired "
        "models) list an unsuitable optimiser, a too-large learning rate, an unsuitable batch size and "
        "overfitting, and report that lowering the learning rate or switching to Adam fixed most of their cases; "
        "[tuning_playbook]: outlier gradients cause mid-training spikes. Rule: the same share for lr_too_high, "
        "optimizer_error, gradient_explosion, data_not_shuffled (a swing with the period of an epoch), outliers "
        "(spikes on outlier batches) and 'other' (batch size has no cause id here)."
    ),
    "eval_worse_than_train": (
        "[defect4ml] bug 098 (test data given a wrong shape, so the model misses its accuracy on it) -> "
        "preprocessing_mismatch 1; N = 1, then add-one over overfitting, too few samples, class imbalance between "
        "the splits and environment_mismatch ([tambon2023]: 10 of 77 silent framework bugs lose accuracy on save "
        "or reload, fixed in a later release; a framework-only sample, so admitted, not counted)."
    ),
    "score_at_chance": (
        "[defect4ml] bug 091 (no shuffling, accuracy stays near 0, below chance) -> data_not_shuffled 1; N = 1, then add-one "
        "over an evaluation pipeline that differs from training, class imbalance (accuracy equal to the "
        "majority share), a metric that does not fit, evaluation labels that do not match their inputs, and a "
        "framework bug fixed upstream ([tambon2023], admitted, not counted)."
    ),
    "score_near_zero": (
        "No published share over causes: none of the 95 [defect4ml] bugs is a detection or segmentation model. "
        "Rule: the same share for the causes whose mechanism leaves a detector or segmenter finding nothing: "
        "training stopped far short of the recipe (from scratch for a tenth of its epochs), weights not loaded "
        "from the pre-trained checkpoint the recipe starts from, a learning rate far off the recipe's, labels "
        "in the wrong format or class ids, an evaluation pipeline that differs from training, a setting that "
        "differs from the reference config, a library version or bug fixed upstream, and 'other'."
    ),
    "metric_inconsistent": (
        "No published share over causes: none of the 95 [defect4ml] bugs shows it. [tambon2023] finds 15 of 77 "
        "silent Keras/TensorFlow bugs showing a wrong displayed message and 3 in the Metrics component (issues "
        "16, 45, 72), all fixed in later releases, so a reported metric can be wrong while the loss is right; "
        "the sample holds framework bugs only and gives no share. Rule: the same share for a metric that does "
        "not fit the task, a loss that does not fit it (accuracy on a regression loss), a label format the "
        "metric does not expect, a framework bug (environment_mismatch), and 'other'."
    ),
    "slow_or_unfinished": (
        "No published share over causes: [defect4ml]'s slow-training bugs (012, 035, 040) are about compute time, "
        "not convergence. [autotrainer] finds slow convergence its most frequent problem (149 repaired models) "
        "and its notes name a too-small learning rate as the most likely cause, without a figure. Rule: the same "
        "share for a small learning rate, too few epochs, unnormalised inputs, vanishing gradients, saturated "
        "activations, a poor initialisation, and 'other'."
    ),
    "baseline_gap": (
        "No published study of porting faults was found, and none of the 95 [defect4ml] bugs is a port. "
        "[tambon2023] shows silent framework bugs fixed between releases, so one program on two versions can "
        "differ. Rule: the same share for the pre-check and comparison causes of docs/causes.md: a setting or "
        "framework default that differs, a data pipeline that differs, an operator that deviates, fusion, a "
        "library version or bug, run-to-run nondeterminism, a baseline that is not a valid reference, and "
        "'other'."
    ),
    "target_gap": (
        "[defect4ml], 44 bugs: its 51 'Bad performance' bugs less 002 (loss_explodes), 005 and 078 "
        "(loss_at_chance), 091 (score_at_chance), 098 (eval_worse_than_train) and 012, 019, 035, 040 (training "
        "time, not accuracy), plus the 'Incorrect functionality' bugs 066 and 073 (an output activation that "
        "cannot fit the targets). Mapping: wrong selection of loss function (021, 033, 067, 072, 074), wrong loss "
        "calculation (004, 017) and a wrong output-layer activation (061, 066, 073) -> loss_function_error 10; "
        "a wrong hidden/dense-layer activation (026, 046, 068, 084, 086, 092) -> activation_saturation 6; "
        "suboptimal number of epochs (011, 022, 023, 053) -> insufficient_epochs 4; suboptimal learning rate with "
        "no direction stated (038, 052, 070, 075) -> lr_too_high 2 and lr_too_low 2; wrong optimisation function "
        "(024, 060) -> optimizer_error 2; missing normalisation (069) -> not_normalized 1; missing shuffle (034) "
        "-> data_not_shuffled 1; 'other' 16: network structure, architecture, layer type or filter size (010, "
        "025, 027, 031, 041, 042, 045, 048, 049, 062, 063), missing dropout (051), upsampling in the wrong place "
        "(032), redundant augmentation (037), batch size (030), API misuse (095). Then add-one."
    ),
    "crash": (
        "[defect4ml], 39 bugs: 38 'Crash' and 099 ('Memory out of bound'). Mapping: deprecated API (014, 018, "
        "057, 064, 076) and an API that does not match the installed Keras version (071) -> environment_mismatch "
        "6; a hand-written loss that fails (015, 083) -> loss_function_error 2; wrong optimiser (059) -> "
        "optimizer_error 1; a checkpoint loaded in the wrong place, weights left random (013) -> weight_init_bad "
        "1; wrong preprocessing of train and test data (006) -> preprocessing_mismatch 1; 'other' 28: shape, type "
        "and format errors of inputs and tensors (17), other API misuse (4), architecture or layers (4), missing "
        "variable initialisation (1), out-of-memory structures (055, 099). Then add-one. [zhang2020] finds 48.0% "
        "of 4960 failed platform jobs failing in the interaction with the platform, mostly from environment "
        "differences; its categories do not map onto these ids and are not counted, but they suggest "
        "environment_mismatch is, if anything, under-weighted here for jobs run on a shared platform."
    ),
}
