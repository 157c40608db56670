"""Regenerate the MindSpore ResNet recipe runs (real MindSpore, CPU).

    python tests/recipes/make/mindspore_resnet.py OUTDIR

writes OUTDIR/mindspore_resnet_recipe/ and OUTDIR/mindspore_resnet_lr_unscaled/,
each holding what the run itself has: resnet18_cifar10_config.yaml (the
model-zoo style config the training script reads) and train.log (its
stdout+stderr: the config it read, LossMonitor / TimeMonitor lines, and the
`model.eval` result).

Recipe: MindSpore model zoo, official/cv/ResNet, config/resnet18_cifar10_config.yaml
(https://github.com/mindspore-ai/models/blob/master/official/cv/ResNet/config/resnet18_cifar10_config.yaml):
Momentum 0.9, weight_decay 1e-4, loss_scale 1024, epoch_size 90, warmup_epochs 5,
lr_decay_mode poly, lr_init 0.01, lr_max 0.1, lr_end 1e-5, batch_size 32 per
device; the README's CIFAR-10 result is 8 devices ("steps per epoch=195,
batch_size = 32", "8pcs"), i.e. a global batch of 256 at lr_max 0.1, and
train.py does not rescale lr by device count.

- mindspore_resnet_recipe: device_num 1, batch 32, the zoo's rates scaled
  linearly by 1/8 (lr_init 0.00125, lr_max 0.0125, lr_end 1.25e-6).
- mindspore_resnet_lr_unscaled: device_num 1, batch 32, the zoo's rates times
  32 (lr_max 3.2, lr_init 0.32: the zoo's 0.1 multiplied by the per-device
  batch, i.e. 256x the linearly scaled recipe).  On this data the zoo's 0.1
  left unchanged (8x the scaled recipe) and 0.8 (x8) both still train to
  ~100% eval accuracy, so the rate was raised until the run visibly fails:
  the loss falls, climbs back during warm-up, and LossMonitor stops the run
  with "loss is NAN or INF" in epoch 5 (no eval result).

Deviations from the zoo, forced by CPU and no data: a small ResNet (stride-2
stem + max-pool, then 3 stages of one BasicBlock, 16/32/64 channels) defined
here instead of ResNet-18; 32x32 synthetic images (a jittered block, +1.0 over
N(0,1) noise, in one of 10 grid cells) instead of CIFAR-10 resized to 224;
256 train / 128 eval images (8 steps an epoch); fp32 on CPU.
The learning-rate schedule is the zoo's poly schedule (linear warmup from
lr_init to lr_max, then lr_max * (1 - progress)^2).

Each run is a child process whose stdout/stderr go to train.log, as
`python train.py --config_path ... > train.log 2>&1` would.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SEED = 1
N_TRAIN, N_EVAL = 256, 128
BLOCK = float(os.environ.get("MS_BLOCK", 1.0))  # brightness of the class block over N(0,1) noise

# model-zoo values (resnet18_cifar10_config.yaml + README 8-device result)
ZOO = dict(batch_size=32, device_num=8, lr_init=0.01, lr_max=0.1, lr_end=0.00001)

RUNS = {
    # name: factor applied to the zoo's (8-device) learning rates at device_num 1
    "mindspore_resnet_recipe": 1 / 8,
    "mindspore_resnet_lr_unscaled": 32,
}

CONFIG = """\
# Builtin Configurations(DO NOT CHANGE THESE CONFIGURATIONS unless you know exactly what you are doing)
enable_modelarts: False
data_url: ""
train_url: ""
checkpoint_url: ""
run_distribute: False
enable_profiling: False
data_path: "./synthetic"
output_path: "./train"
load_path: "/cache/checkpoint_path/"
device_target: "CPU"
checkpoint_path: "./checkpoint/"
checkpoint_file_path: ""

# ==============================================================================
# Training options
optimizer: "Momentum"
infer_label: ""
class_num: 10
batch_size: 32
loss_scale: 1024
momentum: 0.9
weight_decay: 0.0001
epoch_size: 90
pretrain_epoch_size: 0
save_checkpoint: False
save_checkpoint_epochs: 5
keep_checkpoint_max: 10
warmup_epochs: 5
lr_decay_mode: "poly"
lr_init: {lr_init}
lr_end: {lr_end}
lr_max: {lr_max}
lars_epsilon: 0.0
lars_coefficient: 0.001

net_name: "resnet18"
dataset: "cifar10"
device_num: 1
pre_trained: ""
run_eval: False
eval_dataset_path: ""
parameter_server: False
filter_weight: False
save_best_ckpt: True
eval_start_epoch: 40
eval_interval: 1
enable_cache: False
cache_session_id: ""
mode_name: "GRAPH"
boost_mode: "O0"
conv_init: "XavierUniform"
dense_init: "TruncatedNormal"
train_image_size: 32
eval_image_size: 32
"""


def fmt(v):
    return repr(float(f"{v:.6g}"))


# ----------------------------------------------------------------------------
# the training script (child process)

def make_data(n, rng):
    """N(0,1) noise images, NCHW; class = which cell of a 2x5 grid holds a faint block (jittered)."""
    import numpy as np
    x = rng.normal(0.0, 1.0, size=(n, 3, 32, 32)).astype("float32")
    y = rng.integers(0, 10, size=n)
    for i, c in enumerate(y):
        r, col = divmod(int(c), 5)
        dy, dx = rng.integers(-2, 3, size=2)
        y0, x0 = r * 16 + 3 + dy, col * 6 + 1 + dx // 2
        x[i, :, max(y0, 0):y0 + 10, max(x0, 0):x0 + 5] += BLOCK
    return x, y.astype("int32")


def poly_lr(lr_init, lr_max, warmup_epochs, total_epochs, steps_per_epoch):
    import numpy as np
    total, warm = total_epochs * steps_per_epoch, warmup_epochs * steps_per_epoch
    out = []
    for i in range(total):
        if i < warm:
            out.append(lr_init + (lr_max - lr_init) * i / warm)
        else:
            out.append(max(0.0, lr_max * (1.0 - (i - warm) / (total - warm)) ** 2))
    return np.array(out, dtype=np.float32)


def train_main(config_path):
    from pprint import pformat
    import numpy as np
    import yaml
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn
    from mindspore.common.initializer import TruncatedNormal, XavierUniform
    from mindspore.train import LossMonitor, Model, TimeMonitor

    with open(config_path) as f:
        config = yaml.safe_load(f)
    print(pformat(config), flush=True)
    print("Please check the above information for the configurations", flush=True)

    ms.set_seed(SEED)
    ds.config.set_seed(SEED)
    ds.config.set_num_parallel_workers(1)
    ms.set_context(mode=ms.GRAPH_MODE if config["mode_name"] == "GRAPH" else ms.PYNATIVE_MODE,
                   device_target=config["device_target"])
    try:
        ms.runtime.dispatch_threads_num(2)
    except Exception:  # noqa: BLE001 - optional knob
        pass

    def conv3x3(cin, cout, stride=1):
        return nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1,
                         has_bias=False, weight_init=XavierUniform())

    class ResidualBlockBase(nn.Cell):
        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = conv3x3(cin, cout, stride)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = conv3x3(cout, cout)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.SequentialCell([
                    nn.Conv2d(cin, cout, 1, stride=stride, has_bias=False, weight_init=XavierUniform()),
                    nn.BatchNorm2d(cout)])

        def construct(self, x):
            identity = x if self.down is None else self.down(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet(nn.Cell):
        def __init__(self, class_num, widths=(16, 32, 64)):
            super().__init__()
            self.conv1 = conv3x3(3, widths[0], stride=2)
            self.bn1 = nn.BatchNorm2d(widths[0])
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(kernel_size=2, stride=2)
            layers, cin = [], widths[0]
            for i, w in enumerate(widths):
                layers.append(ResidualBlockBase(cin, w, 1 if i == 0 else 2))
                cin = w
            self.layers = nn.SequentialCell(layers)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.flatten = nn.Flatten()
            self.end_point = nn.Dense(cin, class_num, weight_init=TruncatedNormal(0.01))

        def construct(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layers(x)
            return self.end_point(self.flatten(self.pool(x)))

    rng = np.random.default_rng(SEED)
    x_train, y_train = make_data(N_TRAIN, rng)
    x_eval, y_eval = make_data(N_EVAL, rng)
    bs = config["batch_size"]

    class Source:
        """Random-access source; yields ndarrays (0-d label) for GeneratorDataset."""

        def __init__(self, x, y):
            self.x, self.y = x, y

        def __getitem__(self, i):
            return self.x[i], np.array(self.y[i])

        def __len__(self):
            return len(self.y)

    train_ds = ds.GeneratorDataset(Source(x_train, y_train), ["image", "label"], shuffle=True,
                                   num_parallel_workers=1).batch(bs, drop_remainder=True)
    eval_ds = ds.GeneratorDataset(Source(x_eval, y_eval), ["image", "label"], shuffle=False,
                                  num_parallel_workers=1).batch(bs)
    step_size = train_ds.get_dataset_size()

    net = ResNet(config["class_num"])
    lr = ms.Tensor(poly_lr(config["lr_init"], config["lr_max"], config["warmup_epochs"],
                           config["epoch_size"], step_size))
    decayed = [p for p in net.trainable_params()
               if "beta" not in p.name and "gamma" not in p.name and "bias" not in p.name]
    names = {p.name for p in decayed}
    no_decay = [p for p in net.trainable_params() if p.name not in names]
    group_params = [{"params": decayed, "weight_decay": config["weight_decay"]},
                    {"params": no_decay, "weight_decay": 0.0},
                    {"order_params": net.trainable_params()}]
    opt = nn.Momentum(group_params, lr, config["momentum"], loss_scale=config["loss_scale"])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    loss_scale = ms.FixedLossScaleManager(config["loss_scale"], drop_overflow_update=False)
    model = Model(net, loss_fn=loss, optimizer=opt, loss_scale_manager=loss_scale, metrics={"acc"})

    model.train(config["epoch_size"], train_ds,
                callbacks=[LossMonitor(4), TimeMonitor(data_size=step_size)],
                dataset_sink_mode=False)
    acc = model.eval(eval_ds, dataset_sink_mode=False)
    print("result:", acc, flush=True)


# ----------------------------------------------------------------------------
# the generator

def generate(name, outdir):
    k = RUNS[name]
    out = os.path.join(outdir, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cfg = os.path.join(out, "resnet18_cifar10_config.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(lr_init=fmt(ZOO["lr_init"] * k), lr_max=fmt(ZOO["lr_max"] * k),
                              lr_end=fmt(ZOO["lr_end"] * k)))
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="2")
    # run in a scratch folder: MindSpore may write rank_0/ etc. into the cwd
    work = tempfile.mkdtemp(prefix="advisor_ms_")
    with open(os.path.join(out, "train.log"), "wb") as log:
        rc = subprocess.call(["nice", "-n", "10", sys.executable, os.path.abspath(__file__),
                              "--train", "--config_path", cfg],
                             cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: exit {rc}", file=sys.stderr)


def main():
    if "--train" in sys.argv:
        train_main(sys.argv[sys.argv.index("--config_path") + 1])
        return
    outdir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "tests/recipes/runs")
    for name in sys.argv[2:] or list(RUNS):
        generate(name, outdir)


if __name__ == "__main__":
    main()
