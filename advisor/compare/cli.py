"""``advisor compare RUN_DUMP BASELINE_DUMP [-o out.csv|out.json|out.html] [--scheduler ADDRESS|local]``.

Each argument is a dump folder (a folder of .npy files, or the folder holding
an msprobe dump.json), a folder above exactly one, or a tree of steps and
ranks (``step0/rank3``, ``rank_3/.../iteration``, ``step_000002``; see
``tree.py``): every paired step and rank is compared and the step x rank table
says which rank and step first diverged. Without ``-o`` a short text summary
(the source operator first) goes to stdout. A progress bar goes to stderr when
it is a terminal. ``--scheduler`` sends the work to a Dask cluster
(``dask_runner.py``). Exit status: 0 when no tensor is judged error, 1 when
some are, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from advisor.cli_common import cluster_runner, print_notes
from advisor.errors import EXIT_FOUND, EXIT_OK, EXIT_USAGE, UsageError
from advisor.read.safe import shown


def add_compare_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare",
        help="compare two per-operator dumps tensor by tensor; name the operator where the error is born",
        description="Compare every tensor of RUN_DUMP with BASELINE_DUMP (plain .npy layout or msprobe dump.json) "
        "and point at the first operator whose output deviates while its inputs match.",
    )
    p.add_argument(
        "run_dump", metavar="RUN_DUMP", help="the run's dump folder, a folder above it, or a tree of steps and ranks"
    )
    p.add_argument("baseline_dump", metavar="BASELINE_DUMP", help="the benchmark's dump folder or tree")
    p.add_argument("--output", "-o", metavar="FILE", help="write the table to FILE: .csv, .json or .html")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="threads (default: the number of cores, at most 4); with --scheduler local, worker processes",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run the comparisons on a Dask cluster: a scheduler address (tcp://host:8786, tls://host:8786), or "
        "'local' for a LocalCluster of --workers processes (pip install \"accuracy-advisor[dask]\"); a cluster runs "
        "code and returns pickles: name only one you control (docs/cluster.md)",
    )
    p.add_argument(
        "--trust-scheduler",
        action="store_true",
        help="allow a --scheduler off this machine without TLS (tcp://): you control that cluster and its network",
    )
    p.add_argument(
        "--tolerance",
        action="append",
        metavar="DTYPE.NAME=VALUE",
        default=[],
        help="override a tolerance, e.g. float32.rel_dist_error=1e-3 (repeatable)",
    )
    p.add_argument(
        "--no-kl",
        action="store_true",
        help="skip the KL divergence (a quarter of the compiled pass, up to half of the numpy pass)",
    )
    p.add_argument(
        "--kernel",
        choices=("auto", "compiled", "numpy"),
        default="auto",
        help="the metrics pass: 'compiled' (numba, 3-4x faster; pip install \"accuracy-advisor[fast]\"), "
        "'numpy', or 'auto' (default: compiled for comparisons of 1 GiB and more when numba is installed)",
    )
    p.add_argument("--limit", type=int, default=30, help="rows in the text summary (default 30)")
    p.set_defaults(func=run_compare)
    return p


def _dump_folder(arg: str) -> Path:
    """The dump (or tree) the argument names: a folder above exactly one dump is that dump."""
    from advisor.compare.tree import TreeError, find_leaves

    path = Path(arg)
    if not path.is_dir():
        raise UsageError(f"'{arg}' is not a folder")
    try:
        leaves = find_leaves(path)
    except TreeError as exc:
        raise UsageError(f"'{arg}': {exc}") from None
    if not leaves:
        raise UsageError(f"'{arg}' holds no dump (a folder of .npy files or an msprobe dump.json)")
    _one_folder_per_rank(arg, leaves)
    if len(leaves) == 1:
        return path / leaves[0].rel
    if all(leaf.step is None and leaf.rank is None for leaf in leaves):
        found = ", ".join(leaf.rel for leaf in leaves[:5])
        raise UsageError(
            f"'{arg}' holds {len(leaves)} dumps whose folders name no step or rank ({found}): give one of them, "
            "or lay them out as step*/rank*"
        )
    return path


def _one_folder_per_rank(arg: str, leaves: list) -> None:
    """A tree names each step and rank once: ``rank1``, ``rank_1``, ``RANK-1`` and ``rank001`` beside one another
    are one rank in four folders, which advisor will not choose between."""
    seen: dict[tuple, list[str]] = {}
    for leaf in leaves:
        if leaf.rank is not None:
            seen.setdefault((leaf.step, leaf.rank, leaf.rest), []).append(leaf.rel)
    for (step, rank, _), rels in seen.items():
        if len(rels) > 1:
            where = f"step {step}, rank {rank}" if step is not None else f"rank {rank}"
            names = ", ".join(rels[:4]) + (f" and {len(rels) - 4} more" if len(rels) > 4 else "")
            raise UsageError(f"'{arg}' names {where} in {len(rels)} folders ({names}): keep one of them")


def _overrides(values: list[str]) -> dict[str, float]:
    out = {}
    for v in values:
        key, sep, raw = v.partition("=")
        try:
            out[f"compare.{key}"] = float(raw)
        except ValueError:
            raise UsageError(f"--tolerance needs DTYPE.NAME=NUMBER, got '{v}'") from None
        if not sep:
            raise UsageError(f"--tolerance needs DTYPE.NAME=NUMBER, got '{v}'")
    return out


class _Progress:
    """A one-line progress bar on stderr (only on a terminal)."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()
        self.last = 0.0
        self.start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.on or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        frac = done / total if total else 1.0
        rate = done / max(now - self.start, 1e-9) / 1e6
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\rcomparing [{bar:<30}] {frac:6.1%} {done / 1e6:,.0f} MB {rate:,.0f} MB/s")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _kernel_hint(comp, option: str) -> None:
    """On stderr: a big comparison ran on the numpy pass because numba is missing."""
    from advisor.compare.engine import KERNEL_MIN_BYTES
    from advisor.compare.kernel_loader import compiled_kernel

    nbytes = sum(r.nbytes for r in comp.rows if r.mode == "tensor")
    if option == "auto" and comp.kernel == "numpy" and nbytes >= KERNEL_MIN_BYTES and compiled_kernel() is None:
        print(
            'advisor: hint: pip install "accuracy-advisor[fast]" (numba) makes comparisons of this size 3-4x faster',
            file=sys.stderr,
        )


def run_compare(args: argparse.Namespace) -> int:
    from advisor.atomic import target_problem
    from advisor.inventory import output_problem

    try:
        run_dir, base_dir = _dump_folder(args.run_dump), _dump_folder(args.baseline_dump)
        if run_dir.resolve() == base_dir.resolve():
            raise UsageError("RUN_DUMP and BASELINE_DUMP are the same dump: give the benchmark's dump as the second")
        options: dict = _overrides(args.tolerance)
        from advisor.compare.tolerances import option_problems

        for tolerance_problem in option_problems(options):
            raise UsageError(f"--tolerance {tolerance_problem.replace('compare.', '', 1)}")
        if args.no_kl:
            options["compare.kl"] = False
        options["compare.kernel"] = args.kernel
        from advisor.compare.engine import use_compiled

        try:
            use_compiled(args.kernel, 0)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.output and Path(args.output).suffix.lower() not in (".csv", ".json", ".html", ".htm"):
            raise UsageError(f"--output must end in .csv, .json or .html, got '{args.output}'")
        problem = (
            target_problem(args.output)
            or output_problem(
                args.output,
                [
                    (run_dir, "run's dump"),
                    (base_dir, "baseline's dump"),
                    (args.run_dump, "run"),
                    (args.baseline_dump, "baseline"),
                ],
            )
            if args.output
            else None
        )
        if problem:
            raise UsageError(f"--output '{args.output}': {problem}")
    except UsageError as exc:
        print(
            shown(
                f"advisor: error: {exc} (usage: advisor compare RUN_DUMP BASELINE_DUMP [-o out.csv|out.json|out.html])"
            ),
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        args.workers = _workers(args.workers, args.scheduler)
        runner = cluster_runner(args.scheduler, args.workers, args.trust_scheduler)
    except UsageError as exc:
        print(shown(f"advisor: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    try:
        return _compare(args, run_dir, base_dir, options, runner)
    finally:
        if runner is not None:
            print_notes(runner)
            runner.close()


def _workers(requested: int | None, scheduler: str | None) -> int | None:
    """--workers checked: at least 1; threads here and a LocalCluster's processes at most this machine's cores
    (a note says so), a remote cluster's split of big tensors at most ``MAX_PARALLELISM``."""
    from advisor.compare.dask_runner import LOCAL, MAX_PARALLELISM, worker_count

    if requested is None:
        return None
    if requested < 1:
        raise UsageError(f"--workers must be 1 or more, got {requested}")
    if scheduler and scheduler != LOCAL:
        return min(requested, MAX_PARALLELISM)
    n, note = worker_count(requested)
    if note:
        print(shown(f"advisor: note: {note}"), file=sys.stderr)
    return n


def _compare(args: argparse.Namespace, run_dir: Path, base_dir: Path, options: dict, runner) -> int:
    from advisor.compare.engine import compare_dumps
    from advisor.compare.localise import localise
    from advisor.compare.table import build_table, summary_text, write
    from advisor.compare.tree import find_leaves
    from advisor.read.dumps import DumpReadError, read_dump

    leaves = find_leaves(run_dir), find_leaves(base_dir)
    if len(leaves[0]) > 1 or len(leaves[1]) > 1:
        return _compare_tree(args, run_dir, base_dir, options, runner, leaves)
    try:
        run, base = read_dump(run_dir), read_dump(base_dir)
    except DumpReadError as exc:
        print(shown(f"advisor: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    comp = compare_dumps(run, base, options, workers=args.workers, progress=_Progress(), runner=runner)
    _kernel_hint(comp, args.kernel)
    loc = localise(comp.rows)
    table = build_table(comp, loc, str(run_dir), str(base_dir))
    if args.output:
        if not _written(lambda: write(table, args.output), args.output):
            return EXIT_USAGE
        print(shown(f"wrote {args.output} ({len(table.rows)} rows); source operator: {table.source or 'none'}"))
    else:
        sys.stdout.write(shown(summary_text(table, args.limit)))
    return EXIT_FOUND if table.counts["error"] else EXIT_OK


def _written(write_it, output: str) -> bool:
    try:  # a full disk or a folder that turned unwritable: one line, exit 2
        write_it()
        return True
    except OSError as exc:
        print(shown(f"advisor: error: --output '{output}': cannot write ({exc.strerror or exc})"), file=sys.stderr)
        return False


def _compare_tree(args: argparse.Namespace, run_dir: Path, base_dir: Path, options: dict, runner, leaves) -> int:
    from advisor.compare.tree_compare import compare_tree
    from advisor.compare.tree_table import tree_text, write_tree

    tree = compare_tree(
        run_dir, base_dir, options, workers=args.workers, runner=runner, progress=_Progress(), leaves=leaves
    )
    if not tree.pairing.pairs:
        print(
            shown(
                f"advisor: error: no step or rank of '{run_dir}' pairs with one of '{base_dir}' "
                f"({len(tree.pairing.unpaired_run)} run dumps, {len(tree.pairing.unpaired_baseline)} baseline dumps)"
            ),
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.output:
        if not _written(lambda: write_tree(tree, args.output), args.output):
            return EXIT_USAGE
        sentence = tree.divergence.sentence if tree.divergence else ""
        print(shown(f"wrote {args.output} ({len(tree.cells)} step x rank pairs); {sentence}"))
    else:
        sys.stdout.write(shown(tree_text(tree, args.limit)))
    return EXIT_FOUND if any(c.errors for c in tree.cells) else EXIT_OK
