"""Regenerate the Ultralytics YOLOv8 recipe runs (real Ultralytics, CPU).

    python tests/recipes/make/yolo.py OUTDIR

writes OUTDIR/yolo_scratch_few_epochs/ and OUTDIR/yolo_scratch_recipe/, each
holding what the run itself wrote: train.log (the `yolo detect train ...`
console output, stdout+stderr, non-TTY), and from the Ultralytics run folder
(runs/detect/train/) args.yaml and results.csv.  No weights, no plots.

Recipe: YOLOv8 detection models are trained from scratch (yolov8n.yaml, no
pretrained weights) for 500 epochs on COCO (Ultralytics docs,
https://docs.ultralytics.com/models/yolov8/ ; YOLOv5: 300 epochs,
https://github.com/ultralytics/yolov5 README, data/hyps/hyp.scratch-low.yaml).

- yolo_scratch_few_epochs: from scratch, epochs=3 -- finishes, far too short.
- yolo_scratch_recipe: from scratch, epochs=300 configured (the recipe's
  count, written to args.yaml) and killed (SIGTERM) once 3 epochs are in
  results.csv: a run in progress at the recipe.

Data: a tiny synthetic YOLO data set made here (128x128 images, coloured
rectangles, 3 classes), nothing is downloaded: YOLO_OFFLINE=1, pretrained=False,
plots=False, and a system DejaVu font is put where Ultralytics looks for
Arial.ttf so that check_font does not try the network.

torchvision: Ultralytics needs `import torchvision` for validation and uses
torchvision.ops.nms.  Where the installed torchvision cannot load against the
installed torch (e.g. a CUDA torchvision wheel with a CPU torch), the child
process installs a minimal stand-in module whose ops.nms is Ultralytics' own
TorchNMS.nms ("matches torchvision behavior exactly"); everything else is the
real Ultralytics code path.  The log says nothing about it.
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SEED = 0
IMGSZ = 128
BATCH = 8
N_TRAIN, N_VAL = 48, 16
NAMES = ["red", "green", "blue"]
COLOURS = [(40, 40, 220), (40, 200, 40), (220, 60, 40)]  # BGR for cv2
STOP_AFTER = 3  # epochs in results.csv before the 300-epoch run is killed

RUNS = {
    # name: (epochs configured, kill after STOP_AFTER epochs?)
    "yolo_scratch_few_epochs": (3, False),
    "yolo_scratch_recipe": (300, True),
}

# Child process: the `yolo` CLI entry point, with the torchvision stand-in
# only where the real one cannot be imported.
CHILD = r'''
import subprocess, sys, types
ok = subprocess.run([sys.executable, "-c", "import torchvision"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
if not ok:
    import importlib.metadata
    from ultralytics.utils.nms import TorchNMS
    tv = types.ModuleType("torchvision")
    tv.__version__ = importlib.metadata.version("torchvision")
    tv.ops = types.ModuleType("torchvision.ops")
    tv.ops.nms = TorchNMS.nms
    sys.modules["torchvision"] = tv
    sys.modules["torchvision.ops"] = tv.ops
import torch
torch.set_num_threads(2)
from ultralytics.cfg import entrypoint
sys.argv = ["yolo"] + sys.argv[1:]
entrypoint()
'''


def make_dataset(root):
    """Noise-free grey images with 1-3 filled rectangles; class = colour."""
    import cv2
    import numpy as np
    rng = np.random.default_rng(SEED)
    for split, n in (("train", N_TRAIN), ("val", N_VAL)):
        os.makedirs(f"{root}/images/{split}", exist_ok=True)
        os.makedirs(f"{root}/labels/{split}", exist_ok=True)
        for i in range(n):
            img = np.full((IMGSZ, IMGSZ, 3), 114, np.uint8)
            img += rng.integers(0, 20, size=img.shape, dtype=np.uint8)
            lines = []
            for _ in range(int(rng.integers(1, 4))):
                c = int(rng.integers(0, len(NAMES)))
                w, h = rng.integers(20, 60, size=2)
                x0 = int(rng.integers(0, IMGSZ - w))
                y0 = int(rng.integers(0, IMGSZ - h))
                cv2.rectangle(img, (x0, y0), (x0 + int(w), y0 + int(h)), COLOURS[c], -1)
                lines.append(f"{c} {(x0 + w / 2) / IMGSZ:.6f} {(y0 + h / 2) / IMGSZ:.6f} "
                             f"{w / IMGSZ:.6f} {h / IMGSZ:.6f}")
            cv2.imwrite(f"{root}/images/{split}/{i:03d}.jpg", img)
            with open(f"{root}/labels/{split}/{i:03d}.txt", "w") as f:
                f.write("\n".join(lines) + "\n")
    with open(f"{root}/data.yaml", "w") as f:
        f.write(f"path: {root}\ntrain: images/train\nval: images/val\nnames:\n")
        for i, n in enumerate(NAMES):
            f.write(f"  {i}: {n}\n")


def find_font():
    import matplotlib
    for p in ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
              os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data/fonts/ttf/DejaVuSans.ttf")]:
        if os.path.exists(p):
            return p
    return None


def train(name, work, outdir):
    epochs, kill = RUNS[name]
    rundir = os.path.join(work, name)
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    cfgdir = os.path.join(work, "yolo_config")
    os.makedirs(cfgdir, exist_ok=True)
    font = find_font()
    if font:
        shutil.copy(font, os.path.join(cfgdir, "Arial.ttf"))
    env = dict(os.environ, YOLO_OFFLINE="1", YOLO_CONFIG_DIR=cfgdir, PYTHONUNBUFFERED="1",
               OMP_NUM_THREADS="2", MKL_NUM_THREADS="2", TERM="dumb")
    env.pop("COLUMNS", None)
    args = ["detect", "train", "model=yolov8n.yaml", f"data={work}/data/data.yaml",
            "pretrained=False", f"epochs={epochs}", f"imgsz={IMGSZ}", f"batch={BATCH}",
            "workers=0", "device=cpu", "plots=False", f"seed={SEED}", "deterministic=True",
            f"project={rundir}/runs/detect", "name=train", "exist_ok=False"]
    log = os.path.join(rundir, "train.log")
    with open(log, "wb") as f:
        p = subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", CHILD] + args,
                             cwd=rundir, env=env, stdout=f, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        csv = os.path.join(rundir, "runs/detect/train/results.csv")
        while p.poll() is None:
            time.sleep(0.5)
            if kill and os.path.exists(csv):
                with open(csv) as c:
                    rows = sum(1 for _ in c) - 1
                if rows >= STOP_AFTER:
                    p.send_signal(signal.SIGTERM)
                    p.wait()
        rc = p.returncode
    print(f"{name}: exit {rc}", file=sys.stderr)
    out = os.path.join(outdir, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copy(log, os.path.join(out, "train.log"))
    src = glob.glob(os.path.join(rundir, "runs/detect/train*"))[0]
    for fn in ("args.yaml", "results.csv"):
        shutil.copy(os.path.join(src, fn), os.path.join(out, fn))


def main():
    outdir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "tests/recipes/runs")
    only = sys.argv[2:] or list(RUNS)
    # a fixed work folder keeps the paths in args.yaml the same on every rerun
    work = os.path.join(tempfile.gettempdir(), "advisor_recipes_yolo")
    shutil.rmtree(os.path.join(work, "data"), ignore_errors=True)
    make_dataset(os.path.join(work, "data"))
    for name in only:
        train(name, work, outdir)


if __name__ == "__main__":
    main()
