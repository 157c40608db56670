"""The compiled (numba) kernel: the same metrics as the float64 formulas and as the numpy path."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from advisor.compare.metrics import Accumulator, accumulate, compare_arrays, ranges

numba = pytest.importorskip("numba")
from advisor.compare import kernel  # noqa: E402  (needs numba)

from test_compare_metrics import reference  # noqa: E402


def _cases():
    rng = np.random.default_rng(7)
    n = 3 * kernel.BLOCK + 123  # not a multiple of the block
    b = (rng.standard_normal(n) * 3 + 100).astype(np.float32)  # large mean: std must not cancel
    yield "float32-noise", (b + rng.standard_normal(n).astype(np.float32) * np.float32(0.05)).astype(np.float32), b
    b64 = rng.standard_normal(n) * 2
    yield "float64-large-diff", b64 + rng.standard_normal(n), b64
    yield "mixed-dtypes", b64.astype(np.float32), b64
    half = b.copy()
    half[n // 2:] += np.float32(1e-3)
    yield "identical-first-half", half, b
    wide = (rng.standard_normal(n) * 40).astype(np.float32)  # softmax maxima far apart: exact rescaling
    yield "wide-logits", wide, (wide + np.float32(60) * (np.arange(n) == n - 1)).astype(np.float32)
    yield "float16-vs-float32", b64.astype(np.float16), b64.astype(np.float32)  # mixed precision's usual pair
    yield "float16-both", (b64 * 1e-3).astype(np.float16), (b64 * 1e-3 + 1e-6).astype(np.float16)  # subnormals
    yield "tiny-values", (b * np.float32(1e-30)).astype(np.float32), (b * np.float32(1.0001e-30)).astype(np.float32)


CASES = list(_cases())


@pytest.mark.slow  # numba compiles the kernel for each dtype pair
@pytest.mark.parametrize("name,r,b", CASES, ids=[c[0] for c in CASES])
def test_compiled_metrics_match_the_float64_formulas(name, r, b):
    m = compare_arrays(r, b, compiled=True)
    ref = reference(r, b)
    for key, value in ref.items():
        if key == "softmax_kl":  # float64 exponentials (polynomial, rel. error < 1e-11): tighter than numpy's float32
            assert m.softmax_kl == pytest.approx(value, rel=1e-7, abs=1e-13), key
            continue
        assert getattr(m, key) == pytest.approx(value, rel=1e-9, abs=1e-300), key
    assert m.compared == m.elements == r.size


@pytest.mark.slow  # numba compiles the kernel for each dtype pair
@pytest.mark.parametrize("name,r,b", CASES, ids=[c[0] for c in CASES])
def test_compiled_and_numpy_paths_agree(name, r, b):
    a = compare_arrays(r, b, compiled=False).as_dict()
    k = compare_arrays(r, b, compiled=True).as_dict()
    for key, value in a.items():
        if key.startswith("integer_ratio"):  # numpy samples every 8th element; the kernel counts all
            continue
        if isinstance(value, float):
            tol = 2e-6 if key == "softmax_kl" else 1e-9  # numpy's float32 exponentials
            assert k[key] == pytest.approx(value, rel=tol, abs=1e-7 if key == "softmax_kl" else 1e-300), key
        else:
            assert k[key] == value, key


def test_metrics_are_plain_python_numbers():
    import json

    name, r, b = CASES[0]
    for compiled in (False, True):
        d = compare_arrays(r, b, compiled=compiled).as_dict()
        assert all(v is None or type(v) in (int, float, bool) for v in d.values()), d
        json.dumps(d)


def test_identical_pairs_have_kl_exactly_zero_and_no_error():
    x = np.random.default_rng(3).standard_normal(2 * kernel.BLOCK + 5).astype(np.float32)
    m = compare_arrays(x, x.copy(), compiled=True)
    assert m.identical and m.softmax_kl == 0.0 and m.max_abs_err == 0.0 and m.cosine == pytest.approx(1.0)
    assert m.min_baseline == m.min_run == float(x.min()) and m.max_baseline == float(x.max())


def test_nan_inf_blocks_go_through_the_numpy_path_and_are_counted():
    rng = np.random.default_rng(4)
    b = rng.standard_normal(5 * kernel.BLOCK).astype(np.float32)
    r = b + np.float32(1e-3)
    r[10], r[3 * kernel.BLOCK + 7], b[3 * kernel.BLOCK + 9] = np.nan, np.inf, -np.inf
    m = compare_arrays(r, b, compiled=True)
    assert (m.nan_run, m.inf_run, m.nan_baseline, m.inf_baseline) == (1, 1, 0, 1)
    assert m.compared == r.size - 3 and m.elements == r.size
    keep = np.isfinite(r) & np.isfinite(b)
    ref = reference(r[keep], b[keep])
    for key in ("cosine", "max_abs_err", "mean_abs_err", "std_diff", "mean_rel_err", "rel_err_over_1e3_ratio"):
        assert getattr(m, key) == pytest.approx(ref[key], rel=1e-9), key
    assert m.softmax_kl == pytest.approx(ref["softmax_kl"], rel=1e-5)  # the masked blocks' exponentials are float32
    nan = np.full(kernel.BLOCK * 2, np.nan, dtype=np.float32)
    all_nan = compare_arrays(nan, nan, compiled=True)
    assert all_nan.compared == 0 and all_nan.nan_run == nan.size and all_nan.cosine is None


def test_float64_squares_that_overflow_take_the_numpy_path():
    big = np.full(kernel.BLOCK + 1, 1e200)
    m = compare_arrays(big, big, compiled=True)
    assert m.elements == big.size  # counted, not lost, and no hang


def test_integer_share_is_counted_on_every_element():
    x = np.arange(1, 2 * kernel.BLOCK + 1, dtype=np.float32)
    x[::16] += np.float32(0.5)
    m = compare_arrays(x, x + np.float32(1), compiled=True)
    assert m.integer_ratio_run == 0.9375 and m.integer_ratio_baseline == 0.9375
    x[::4] += np.float32(0.25)  # the run's share below WHOLE_SHARE: the baseline's is not counted
    m = compare_arrays(x, np.floor(x), compiled=True)
    assert m.integer_ratio_run == 0.75 and m.integer_ratio_baseline is None


def test_ranges_merge_like_one_pass():
    name, r, b = CASES[0]
    whole = accumulate(r, b, compiled=True).result()
    acc = Accumulator()
    for start, stop in ranges(r.size, 3, chunk=kernel.BLOCK):
        acc.merge(accumulate(r, b, start, stop, compiled=True))
    merged = acc.result()
    for key, value in whole.as_dict().items():
        if isinstance(value, float):  # the KL is a difference of log-sums: a few more ulps
            assert getattr(merged, key) == pytest.approx(value, rel=1e-9 if key == "softmax_kl" else 1e-11, abs=1e-300), key
        else:
            assert getattr(merged, key) == value, key


def test_exponential_polynomial_against_math_exp():
    v = np.concatenate([-np.geomspace(1e-12, 708, 20_000), np.linspace(-5, 0, 20_001)])
    got = np.array([kernel.exp_nonpositive(float(x)) for x in v])
    want = np.exp(v)
    assert np.max(np.abs(got / want - 1)) < 1e-11
    assert kernel.exp_nonpositive(-1e6) < 1e-300  # clamped: no wrap-around of the exponent bits


def _as_f64_all(bits: np.ndarray) -> np.ndarray:
    """The kernel's element conversion applied to every element (uint16: float16, int16: bfloat16 patterns)."""

    @numba.njit
    def convert(b, out):
        for i in range(b.size):
            out[i] = kernel.as_f64(b[i])

    out = np.empty(bits.size)
    convert(bits, out)
    return out


def test_every_float16_bit_pattern_converts_exactly():
    halves = np.arange(1 << 16, dtype=np.uint16)
    got = _as_f64_all(halves)
    want = halves.view(np.float16).astype(np.float64)
    assert np.array_equal(got, want, equal_nan=True)
    finite = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite]))  # -0.0 and negative subnormals


def test_float16_nan_inf_blocks_are_counted():
    b = np.linspace(-3, 3, 3 * kernel.BLOCK).astype(np.float16)
    r = b.copy()
    r[7], r[kernel.BLOCK + 1] = np.nan, -np.inf
    m = compare_arrays(r, b, compiled=True)
    assert (m.nan_run, m.inf_run, m.compared) == (1, 1, b.size - 2) and m.max_abs_err == 0.0


def test_unsupported_dtypes_fall_back_to_numpy():
    x = np.linspace(-2, 2, 1000).astype(">f4")  # big-endian
    assert not kernel.supports(x, x)
    assert compare_arrays(x, x, compiled=True).identical


@pytest.mark.slow
def test_engine_option_and_cli_flag(tmp_path):
    from advisor.compare.engine import compare_dumps
    from advisor.read.dumps import read_dump

    rng = np.random.default_rng(5)
    for side in ("run", "base"):
        (tmp_path / side).mkdir()
    for i in range(3):
        b = rng.standard_normal((300, 700)).astype(np.float32)
        r = b + (np.float32(1e-2) * rng.standard_normal(b.shape).astype(np.float32) if i == 2 else 0)
        np.save(tmp_path / "run" / f"op{i}.output.0.npy", r)
        np.save(tmp_path / "base" / f"op{i}.output.0.npy", b)
    run, base = read_dump(tmp_path / "run"), read_dump(tmp_path / "base")
    fast = compare_dumps(run, base, {"compare.kernel": "compiled"}, workers=2)
    slow = compare_dumps(run, base, {"compare.kernel": "numpy"}, workers=2)
    assert (fast.kernel, slow.kernel) == ("compiled", "numpy")
    assert compare_dumps(run, base, workers=2).kernel == "numpy"  # auto: small comparisons stay on numpy
    for f, s in zip(fast.rows, slow.rows):
        assert f.verdict == s.verdict and f.metrics.cosine == pytest.approx(s.metrics.cosine, rel=1e-12)
        assert f.metrics.softmax_kl == pytest.approx(s.metrics.softmax_kl, rel=1e-5, abs=1e-9)
    with pytest.raises(ValueError, match="auto, compiled, numpy"):
        compare_dumps(run, base, {"compare.kernel": "gpu"})
    cli = [sys.executable, "-m", "advisor", "compare", str(tmp_path / "run"), str(tmp_path / "base")]
    ok = subprocess.run(cli + ["--kernel", "compiled"], capture_output=True, text=True)
    assert ok.returncode == 1 and "source operator: op2" in ok.stdout, ok.stderr
    bad = subprocess.run(cli + ["--kernel", "gpu"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'gpu'" in bad.stderr
    out = tmp_path / "table.json"  # plain Python numbers in the table (numpy's bool is not JSON)
    wrote = subprocess.run(cli + ["--kernel", "compiled", "-o", str(out)], capture_output=True, text=True)
    assert wrote.returncode == 1, wrote.stderr
    import json
    assert json.loads(out.read_text())["source"] == "op2"
    nowhere = subprocess.run(cli + ["-o", str(tmp_path / "missing" / "t.csv")], capture_output=True, text=True)
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr and "Traceback" not in nowhere.stderr


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_one_side_statistics_match_the_numpy_scan(dtype):
    from advisor.compare.metrics import side_stats

    rng = np.random.default_rng(6)
    x = (rng.standard_normal(4 * kernel.BLOCK + 77) * 5 + 20).astype(dtype)
    x[kernel.BLOCK + 3], x[2 * kernel.BLOCK], x[-1] = np.nan, np.inf, -np.inf
    a, k = side_stats(x), side_stats(x, compiled=True)
    assert (k.n, k.nan, k.inf) == (a.n, a.nan, a.inf) == (x.size - 3, 1, 2)
    fin = x[np.isfinite(x)].astype(np.float64)
    assert (k.min, k.max) == (fin.min(), fin.max())
    assert k.mean == pytest.approx(fin.mean(), rel=1e-12) and k.m2 / k.n == pytest.approx(fin.var(), rel=1e-9)
    assert k.sumsq == pytest.approx(float(fin @ fin), rel=1e-12)
    ints = np.round(rng.standard_normal(3 * kernel.BLOCK) * 50).astype(dtype)
    whole = side_stats(ints, compiled=True)
    assert whole.integer_ratio == 1.0 and whole.nonzero == np.count_nonzero(ints)


def test_scan_dump_compiled_equals_numpy(tmp_path):
    from advisor.compare.engine import scan_dump
    from advisor.read.dumps import read_dump

    rng = np.random.default_rng(8)
    a = rng.standard_normal((200, 300)).astype(np.float32)
    a[5, 5] = np.inf
    np.save(tmp_path / "00_fc.output.0.npy", a)
    np.save(tmp_path / "01_div.output.0.npy", np.floor(rng.standard_normal(70_000) * 9).astype(np.float32))
    dump = read_dump(tmp_path)
    fast = scan_dump(dump, workers=2, options={"compare.kernel": "compiled"})
    slow = scan_dump(dump, workers=2, options={"compare.kernel": "numpy"})
    for f, s in zip(fast, slow):
        assert (f.run_side.nan, f.run_side.inf, f.run_side.min, f.run_side.max) == \
            (s.run_side.nan, s.run_side.inf, s.run_side.min, s.run_side.max)
    assert fast[0].run_side.inf == 1 and fast[1].run_side.integer_ratio == 1.0


def test_auto_uses_the_kernel_for_big_comparisons_or_once_loaded(monkeypatch):
    from advisor.compare import engine, kernel_loader

    assert kernel_loader.compiled_kernel() is kernel
    assert engine.use_compiled("auto", engine.KERNEL_LOADED_MIN_BYTES)  # loaded: its start-up is paid
    assert not engine.use_compiled("auto", engine.KERNEL_LOADED_MIN_BYTES - 1)
    monkeypatch.setattr(kernel_loader, "_KERNEL", None)  # a fresh process: numba's start-up still to pay
    assert not engine.use_compiled("auto", engine.KERNEL_MIN_BYTES - 1)
    assert engine.use_compiled("auto", engine.KERNEL_MIN_BYTES)
    assert not engine.use_compiled("numpy", 1 << 40) and engine.use_compiled("compiled", 1)
    monkeypatch.setattr(kernel_loader, "_KERNEL", False)  # numba missing or unusable
    assert not engine.use_compiled("auto", 1 << 40)
    with pytest.raises(ValueError, match=r"accuracy-advisor\[fast\]"):
        engine.use_compiled("compiled", 1)


@pytest.mark.slow
def test_bfloat16_bits_convert_exactly_and_compare_like_float32():
    torch = pytest.importorskip("torch")
    from advisor.read.dumps import BFloat16Bits, float_chunk

    bits = np.arange(-(1 << 15), 1 << 15).astype(np.int16)  # every bfloat16 bit pattern
    got = _as_f64_all(bits)
    want = torch.from_numpy(bits.copy()).view(torch.bfloat16).double().numpy()
    assert np.array_equal(got, want, equal_nan=True)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        assert np.array_equal(float_chunk(BFloat16Bits(bits)).astype(np.float64), want, equal_nan=True)
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(3 * kernel.BLOCK + 11, generator=g) * 4).bfloat16()
    base = x.float() * (1 + 1e-3 * torch.randn(x.shape, generator=g))
    run = BFloat16Bits(x.view(torch.int16).numpy())
    want = compare_arrays(x.float().numpy(), base.numpy())
    for compiled in (False, True):
        got = compare_arrays(run, base.numpy(), compiled=compiled)
        for key in ("cosine", "max_abs_err", "mean_rel_err", "std_run", "min_run", "max_run", "rel_err_over_1e3_ratio"):
            assert getattr(got, key) == pytest.approx(getattr(want, key), rel=1e-12), (compiled, key)
        assert got.softmax_kl == pytest.approx(want.softmax_kl, abs=1e-7)  # the numpy path: float32 exponentials
