"""advisor.extract.data_stats on scikit-learn's bundled data sets: clean splits, and each fault injected.

Every case writes the sample files a real pipeline would write (data/train.npz, data/eval.npz),
runs the extractor (exact facts) and the whole diagnosis (advisor.diagnose) on them.
"""

from __future__ import annotations

# confidences here are the rules' combined figure (raw_confidence), before the calibration map that
# benchmarks/calibrate.py fits on labelled runs (tested in tests/test_calibration.py)

import json

import numpy as np
import pytest

import advisor
from advisor.extract.base import RunPair
from advisor.extract.data_compare import compare_pipeline_arrays
from advisor.extract.data_features import feature_stats
from advisor.extract.data_labels import knn_label_noise
from advisor.extract.data_stats import extract
from advisor.inventory import RunFolder
from advisor.read.samples import ArraySource, find_samples

# scikit-learn's loaders by data set; imported per test, so the tests that need no data set run without scikit-learn
LOADERS = {"iris": "load_iris", "digits": "load_digits", "wine": "load_wine", "breast_cancer": "load_breast_cancer"}


def _load(name):
    datasets = pytest.importorskip("sklearn.datasets")
    return getattr(datasets, LOADERS[name])(return_X_y=True)


def _split(name, seed=0):
    x, y = _load(name)
    perm = np.random.default_rng(seed).permutation(len(y))
    x, y = x[perm], y[perm]
    n = int(0.8 * len(y))
    return x[:n], y[:n], x[n:], y[n:]


def _standardise(xtr, xev):
    mu, sd = xtr.mean(0), xtr.std(0)
    sd[sd == 0] = 1.0
    return ((xtr - mu) / sd).astype(np.float32), ((xev - mu) / sd).astype(np.float32)


def _write(root, xtr, ytr, xev=None, yev=None, hparams=None):
    (root / "data").mkdir(parents=True, exist_ok=True)
    np.savez(root / "data" / "train.npz", x=xtr, y=ytr)
    if xev is not None:
        np.savez(root / "data" / "eval.npz", x=xev, y=yev)
    if hparams:
        (root / "hparams.json").write_text(json.dumps(hparams))
    return root


def _clean(tmp_path, name, sub="run"):
    xtr, ytr, xev, yev = _split(name)
    xtr, xev = _standardise(xtr, xev)
    return _write(tmp_path / sub, xtr, ytr, xev, yev)


def _facts(root, kind, baseline=None):
    ex = extract(
        RunPair(run=RunFolder.scan(root), baseline=RunFolder.scan(baseline, side="baseline") if baseline else None)
    )
    return [f for f in ex.facts if f.kind == kind], ex


def _causes(root, baseline=None):
    report = advisor.diagnose(root, baseline=baseline)
    return {c.id: c.raw_confidence for c in report.causes}, report


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_clean_standardised_data_raises_nothing(tmp_path, name):
    root = _clean(tmp_path, name)
    (noise,), _ = _facts(root, "label_noise")
    assert noise.estimated_error_share < 0.02
    causes, report = _causes(root)
    assert {c: v for c, v in causes.items() if v >= 0.5} == {}
    assert any(ch.stage == "input_data" and ch.status == "ran" for ch in report.checks)


def test_missing_values_and_nan_only_column(tmp_path):
    xtr, ytr, xev, yev = _split("wine")
    xtr, xev = _standardise(xtr, xev)
    xtr[::20, 2] = np.nan  # 5% of feature 2
    xtr[:, 7] = np.nan  # a column that is NaN everywhere
    root = _write(tmp_path, xtr, ytr, xev, yev)
    feats, _ = _facts(root, "data_features")
    (tr,) = [f for f in feats if f.split == "train"]
    assert tr.nan_count == int(np.isnan(xtr).sum())
    assert tr.features_with_nan == 2 and tr.all_nan_features == 1
    assert tr.worst_nan_feature == 7 and tr.max_feature_nan_share == 1.0
    causes, _ = _causes(root)
    assert max(causes, key=causes.get) == "missing_values" and causes["missing_values"] >= 0.7


def test_class_imbalance(tmp_path):
    xtr, ytr, xev, yev = _split("breast_cancer")
    xtr, xev = _standardise(xtr, xev)
    keep = (ytr == 1) | (np.cumsum(ytr == 0) <= 15)  # 15 malignant samples left
    root = _write(tmp_path, xtr[keep], ytr[keep], xev, yev)
    labels, _ = _facts(root, "label_stats")
    (tr,) = [f for f in labels if f.split == "train"]
    assert tr.min_class_count == 15 and tr.minority_class == "0"
    assert tr.imbalance_ratio == pytest.approx(int((ytr == 1).sum()) / 15)
    causes, _ = _causes(root)
    assert causes["class_imbalance"] >= 0.6


def test_outliers_are_found_with_their_sample_index(tmp_path):
    xtr, ytr, xev, yev = _split("iris")
    xtr, xev = _standardise(xtr, xev)
    xtr[[5, 40], 1] = 1e4
    root = _write(tmp_path, xtr, ytr, xev, yev)
    feats, _ = _facts(root, "data_features")
    (tr,) = [f for f in feats if f.split == "train"]
    assert tr.worst_outlier_feature == 1 and tr.extreme_sample_count == 2
    assert set(tr.worst_samples.split(", ")[:2]) == {"5", "40"}
    causes, _ = _causes(root)
    assert causes["outliers"] >= 0.6
    assert causes.get("not_normalized", 0) < 0.5  # robust scales: two outliers do not make the data unscaled


@pytest.mark.parametrize("name", ["digits", "wine"])
def test_injected_label_noise_is_estimated(tmp_path, name):
    xtr, ytr, xev, yev = _split(name)
    xtr, xev = _standardise(xtr, xev)
    rng = np.random.default_rng(1)
    flip = rng.random(len(ytr)) < 0.2
    n_cls = int(ytr.max()) + 1
    noisy = ytr.copy()
    noisy[flip] = (ytr[flip] + rng.integers(1, n_cls, flip.sum())) % n_cls
    root = _write(tmp_path, xtr, noisy, xev, yev)
    (noise,), _ = _facts(root, "label_noise")
    assert 0.1 < noise.estimated_error_share <= flip.mean() + 0.02
    suspects = [int(i) for i in noise.suspect_samples.split(", ")]
    assert np.mean(flip[suspects]) >= 0.8  # the named suspects are mostly the flipped ones
    causes, _ = _causes(root)
    assert causes["label_errors"] >= 0.6


def test_insufficient_samples_from_the_stated_training_set_size(tmp_path):
    xtr, ytr, xev, yev = _split("digits")
    xtr, xev = _standardise(xtr, xev)
    root = _write(tmp_path, xtr, ytr, xev, yev, hparams={"num_train_samples": 60, "optimizer": "adam", "lr": 1e-3})
    (size,), _ = _facts(root, "sample_size")
    assert size.samples_source == "hparams" and size.n_train_samples == 60
    assert size.min_samples_per_class < 10
    assert size.mean_samples_per_class == 60 / size.n_classes  # the stated size, not the sample file's rows
    causes, _ = _causes(root)
    assert causes["insufficient_samples"] >= 0.5


def test_raw_features_are_not_normalized(tmp_path):
    xtr, ytr, xev, yev = _split("wine")  # raw: proline in the hundreds, hue below 1
    root = _write(tmp_path / "wine", xtr, ytr, xev, yev)
    feats, _ = _facts(root, "data_features")
    assert all(f.std_ratio > 100 for f in feats)
    causes, _ = _causes(root)
    assert causes["not_normalized"] >= 0.5

    dtr, dytr, dev, dyev = _split("digits")  # 0..16 scaled to 8-bit pixels
    pix = _write(
        tmp_path / "pixels",
        (dtr * 255 / 16).round().astype(np.uint8),
        dytr,
        (dev * 255 / 16).round().astype(np.uint8),
        dyev,
    )
    feats, _ = _facts(pix, "data_features")
    assert all(f.looks_like_raw_pixels and f.is_integer_valued for f in feats)
    causes, _ = _causes(pix)
    assert causes["not_normalized"] >= 0.7


def test_eval_left_unnormalised_is_a_preprocessing_mismatch(tmp_path):
    xtr, ytr, xev, yev = _split("breast_cancer")
    xtr_s, _ = _standardise(xtr, xev)
    root = _write(tmp_path, xtr_s, ytr, xev.astype(np.float32), yev)
    (shift,), _ = _facts(root, "split_shift")
    assert shift.max_mean_shift_std > 5 and shift.max_std_ratio > 100 and shift.shifted_feature_share > 0.3
    causes, _ = _causes(root)
    assert causes["preprocessing_mismatch"] >= 0.7
    assert causes.get("not_normalized", 0) < 0.5  # the training sample is standardised: it is the eval side


def test_eval_images_transposed_is_a_layout_mismatch(tmp_path):
    xtr, ytr, xev, yev = _split("digits")
    img_tr = (xtr / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    img_ev = (xev / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    clean = _write(tmp_path / "clean", img_tr, ytr, img_ev, yev)
    (shift,), _ = _facts(clean, "split_shift")
    assert shift.shifted_position_share < 0.02 and shift.max_mean_shift_std < 0.2
    assert {c: v for c, v in _causes(clean)[0].items() if v >= 0.5} == {}
    flipped = _write(tmp_path / "transposed", img_tr, ytr, img_ev.transpose(0, 1, 3, 2).copy(), yev)
    (shift,), _ = _facts(flipped, "split_shift")
    assert shift.max_mean_shift_std < 0.2  # the channel statistics cannot see it
    assert shift.shifted_position_share > 0.2
    causes, _ = _causes(flipped)
    assert causes["preprocessing_mismatch"] >= 0.55


def test_baseline_pipeline_output_compared_array_by_array(tmp_path):
    run = _clean(tmp_path, "wine", "run")
    same = _clean(tmp_path, "wine", "same")
    cmp, _ = _facts(run, "pipeline_compare", baseline=same)
    assert cmp and all(c.is_allclose and c.mismatch_share == 0.0 for c in cmp)
    causes, _ = _causes(run, baseline=same)
    assert causes.get("preprocessing_mismatch", 0) < 0.5

    # the baseline normalised with min-max instead of mean/std: every value differs
    xtr, ytr, xev, yev = _split("wine")
    lo, hi = xtr.min(0), xtr.max(0)
    other = _write(
        tmp_path / "minmax",
        ((xtr - lo) / (hi - lo)).astype(np.float32),
        ytr,
        ((xev - lo) / (hi - lo)).astype(np.float32),
        yev,
    )
    cmp, _ = _facts(run, "pipeline_compare", baseline=other)
    x_cmp = {(c.file, c.array): c for c in cmp}
    c = x_cmp[("data/train.npz", "x")]
    assert not c.is_allclose and c.first_mismatch_row == 0 and c.is_same_rows_reordered is False
    assert x_cmp[("data/train.npz", "y")].is_allclose
    causes, _ = _causes(run, baseline=other)
    assert causes["preprocessing_mismatch"] >= 0.6


def test_baseline_sample_of_other_rows_is_not_a_mismatch_but_same_rows_processed_otherwise_is(tmp_path):
    x, y = _load("digits")
    x = (x / 16.0).astype(np.float32)
    run = _write(tmp_path / "run", x[:600], y[:600])
    other_rows = _write(tmp_path / "other", x[600:1200], y[600:1200])  # another batch, same pipeline
    cmp, _ = _facts(run, "pipeline_compare", baseline=other_rows)
    c = {f.array: f for f in cmp}["x"]
    assert not c.is_allclose and c.same_labels is False and c.max_mean_shift_std < 0.5
    causes, _ = _causes(run, baseline=other_rows)
    assert causes.get("preprocessing_mismatch", 0) < 0.5
    # the same rows, but the baseline's pipeline rounds through float16: a small processing difference
    rounded = _write(tmp_path / "fp16", x[:600].astype(np.float16).astype(np.float32) + 1e-3, y[:600])
    cmp, _ = _facts(run, "pipeline_compare", baseline=rounded)
    c = {f.array: f for f in cmp}["x"]
    assert c.same_labels is True and not c.is_allclose and c.max_abs_diff < 0.01
    causes, _ = _causes(run, baseline=rounded)
    assert causes["preprocessing_mismatch"] >= 0.6


def test_baseline_with_another_shuffle_is_not_a_mismatch(tmp_path):
    xtr, ytr, xev, yev = _split("iris")
    xtr, xev = _standardise(xtr, xev)
    run = _write(tmp_path / "run", xtr, ytr, xev, yev)
    perm = np.random.default_rng(3).permutation(len(ytr))
    base = _write(tmp_path / "base", xtr[perm], ytr[perm], xev, yev)
    cmp, _ = _facts(run, "pipeline_compare", baseline=base)
    c = {(c.file, c.array): c for c in cmp}[("data/train.npz", "x")]
    assert not c.is_allclose and c.is_same_rows_reordered is True


def test_bad_sample_files_become_inputs_and_the_diagnosis_goes_on(tmp_path):
    root = _clean(tmp_path, "iris")
    np.save(root / "data" / "x_test.npy", np.array([{"payload": 1}], dtype=object), allow_pickle=True)
    np.save(root / "data" / "y_test.npy", np.array([1]))
    (root / "data" / "valid.csv").write_text("a,b,label\n1,2,0\n3\n")
    np.savez(root / "data" / "dev.npz", x=np.array([["a", "b"]]), y=np.array([0]))
    report = advisor.diagnose(root)
    bad = {i.path: i.why for i in report.inputs if i.status == "unreadable"}
    assert "never unpickled" in bad["data/x_test.npy"]
    assert "ragged CSV" in bad["data/valid.csv"]
    assert "holds text" in bad["data/dev.npz"]
    assert {i.path for i in report.inputs if i.status == "used"} >= {"data/train.npz", "data/eval.npz"}


def test_chunked_statistics_equal_numpy_on_images(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(301, 3, 8, 8)).astype(np.float32)
    x[7, 1, 2, 3] = np.nan
    np.save(tmp_path / "x_train.npy", x)
    (s,) = find_samples(RunFolder.scan(tmp_path)).sets
    import advisor.extract.data_features as ds

    old = ds.CHUNK_BYTES
    ds.CHUNK_BYTES = 64 * 8 * 3 * 10  # about 10 rows per chunk
    try:
        st = feature_stats(s.features)
    finally:
        ds.CHUNK_BYTES = old
    per_channel = np.moveaxis(x, 1, 0).reshape(3, -1).astype(np.float64)
    assert np.allclose(st.mean, np.nanmean(per_channel, axis=1), rtol=1e-12)
    assert np.allclose(st.std, np.nanstd(per_channel, axis=1), rtol=1e-12)
    assert list(st.nan) == [0, 1, 0] and st.is_integer


def test_knn_estimate_on_separable_clusters():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 1, (100, 2)), rng.normal(10, 1, (100, 2))])
    y = np.repeat([0, 1], 100)
    y[[3, 150]] = [1, 0]
    disagree, est, suspects = knn_label_noise(x, y)
    assert est == pytest.approx(0.01) and set(suspects.tolist()) == {3, 150}


def test_knn_estimate_is_not_inflated_by_a_minority_class_among_the_majority():
    # 95/5 classes that overlap completely: the minority's own average vote is near its 5% prior, so a single
    # minority neighbour reaches it; labels that still win their neighbours' vote are not suspects
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (2000, 8))
    y = (rng.random(2000) < 0.05).astype(np.int64)
    disagree, est, suspects = knn_label_noise(x, y)
    assert disagree == pytest.approx((y == 1).mean(), abs=0.01)  # the minority loses every vote
    assert est < 0.06 and set(y[suspects].tolist()) <= {1}
    # the same imbalance with 30% of the labels of two separable clusters flipped is still found
    x = np.concatenate([rng.normal(0, 1, (1900, 2)), rng.normal(8, 1, (100, 2))])
    clean = np.repeat([0, 1], [1900, 100])
    flip = rng.random(2000) < 0.3
    _, est, suspects = knn_label_noise(x, np.where(flip, 1 - clean, clean))
    assert 0.2 < est <= flip.mean() and np.mean(flip[suspects]) >= 0.85


def test_compare_arrays_reports_shape_difference():
    a = np.zeros((4, 3))
    b = np.zeros((4, 2))
    mk = lambda arr: ArraySource("data/train.npz", "x", arr.shape, arr.dtype, None, arr)  # noqa: E731
    c = compare_pipeline_arrays(mk(a), mk(b))
    assert not c.same_shape and not c.is_allclose and c.baseline_shape == "(4, 2)"
