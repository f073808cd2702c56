"""Side-by-side benchmark of dedog's engine and ONNX Runtime on the same EfficientNet-Lite0 weights, in FP32 and INT8.

The ONNX model is built here from dedog's own model file (so the weights are identical): TF-SAME padding is an
explicit zero-valued Pad in front of the stride-2 convolutions (ORT fuses it into the Conv), BatchNorm is
folded by the exporter. Its logits are checked against dedog's before anything is timed.

The INT8 peer is that ONNX model quantized by ORT's own tools: QDQ, weights per channel (int8), activations
uint8, min-max ranges from the same 100 calibration photos dedog calibrates on (100 lines of splits/train.txt,
evenly spaced, preprocessed as Lite0's input). Its top-1 agreement with the FP32 model is printed, not asserted.
dedog runs at the precision each row names (`--precision int8|fp32`; int8 is dedog's default).
Lite1 and Lite2 (the default model's backbones) get int8 rows too, against ORT INT8 of the same networks made the
same way (at 240 and 260 pixels, calibrated on the same photos at those sizes).
"""
import argparse, inspect, json, os, re, statistics, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quant_pre_process, quantize_static)
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lite0_torch import Lite0, LiteNet, load  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--bin", type=Path, required=True)
parser.add_argument("--root", type=Path, required=True)
parser.add_argument("--runs", type=int, default=200)
parser.add_argument("--installed-bin", type=Path, help="the folder of the dedog scripts/install builds (static runtime)")
parser.add_argument("--rounds", type=int, default=1,
                    help="time each batch-1 cell as this many rounds of dedog then ORT, the runs shared among them, and "
                         "read the ratio as the median of the rounds' ratios (their range beside it): on a shared "
                         "machine one long run of each drifts apart")
parser.add_argument("--latency-only", action="store_true",
                    help="only the latency rows (no whole processes, folders or per-step tables): a quicker run")
args = parser.parse_args()
model_file = args.root / "models/efficientnet-lite0-imagenet.safetensors"
photo = args.root / "datasets/samples/beagle.jpg"
dataset = args.root / "../shared/datasets/stanford-dogs-224"
work = Path(tempfile.mkdtemp(prefix="dedog-bench-"))
nan = float("nan")
notes = set()  # printed above the table

net = load(Lite0(), model_file)
onnx_path = work / "lite0.onnx"
torch.onnx.export(net, torch.zeros(1, 3, 224, 224), str(onnx_path), opset_version=17, input_names=["input"],
                  output_names=["logits"], dynamic_axes={"input": {0: "n"}, "logits": {0: "n"}}, dynamo=False)


def session(threads, path=onnx_path):
    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), o, providers=["CPUExecutionProvider"])


rng = np.random.default_rng(42)
x1 = rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
# Sanity: ORT on our weights agrees with PyTorch, so both engines compute the same network.
with torch.no_grad():
    diff = np.abs(session(1).run(None, {"input": x1})[0] - net(torch.from_numpy(x1)).numpy()).max()
assert diff < 1e-3, f"ONNX export differs from PyTorch by {diff}"


def preprocess(path, shorter=256, crop=224):
    """Lite0's input, as dedog makes it: shorter side to 256 (bilinear), centre 224 crop, (x - 127) / 128, NCHW
    (other sizes for Lite1 and Lite2). Also the ORT classify scripts' (its source is copied into them)."""
    img = Image.open(path).convert("RGB")
    w, h = img.size
    size = (shorter, shorter * h // w) if w <= h else (shorter * w // h, shorter)
    img = img.resize(size, Image.BILINEAR)
    l, t = round((size[0] - crop) / 2), round((size[1] - crop) / 2)
    return ((np.asarray(img.crop((l, t, l + crop, t + crop)), np.float32) - 127) / 128).transpose(2, 0, 1)[None]


def calibration_photos(count=100):
    """The photos dedog calibrates on: `count` lines of splits/train.txt, evenly spaced (ActivationCalibration.spread)."""
    lines = [l.split("\t")[0] for l in (dataset / "splits/train.txt").read_text().splitlines() if l.strip()]
    return [dataset / lines[i * len(lines) // count] for i in range(count)] if len(lines) > count else [dataset / l for l in lines]


class Photos(CalibrationDataReader):
    def __init__(self, x):
        self.rows = iter(x)

    def get_next(self):
        x = next(self.rows, None)
        return None if x is None else {"input": x[None]}


def quantize(x, onnx_path=onnx_path, name="lite0"):
    """ORT's INT8 model of the export (QDQ, per-channel, min-max on `x`); a note on how it went."""
    source, note = work / f"{name}-pre.onnx", "quant_pre_process ok"
    try:
        quant_pre_process(str(onnx_path), str(source))
    except Exception as e:  # the pre-processing is an optimisation only: quantize the plain export instead
        source, note = onnx_path, f"quant_pre_process failed ({type(e).__name__}: {e}), plain export quantized"
    path = work / f"{name}-int8.onnx"
    quantize_static(str(source), str(path), Photos(x), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)
    return path, note


if (dataset / "splits/train.txt").is_file():
    calibration = np.concatenate([preprocess(p) for p in calibration_photos()])
    int8_path, quant_note = quantize(calibration)
    # Sanity, not asserted: how often ORT INT8 names the same ImageNet class as ORT FP32 on the calibration photos.
    agreement = np.mean(session(2, int8_path).run(None, {"input": calibration})[0].argmax(1)
                        == session(2).run(None, {"input": calibration})[0].argmax(1))
    quant_note += f"; ORT INT8 vs ORT FP32 top-1 agreement on the {len(calibration)} calibration photos = {agreement:.0%}"
else:
    int8_path, quant_note = None, f"no dataset at {dataset.resolve()}: ORT INT8 cells are NaN"
    print(quant_note, file=sys.stderr)


def ort_latency(threads, batch, runs, warmup=20, path=onnx_path, size=224):
    if path is None:
        return nan
    s = session(threads, path)
    x = rng.uniform(-1, 1, (batch, 3, size, size)).astype(np.float32)
    times = []
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        s.run(None, {"input": x})
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def dedog_latency(threads, batch, runs, precision, warmup=20, kernels=None, model=model_file):
    env = dict(os.environ, DEDOG_KERNELS=kernels) if kernels else None
    out = subprocess.run([str(args.bin / "DedogBench"), "latency", "--threads", str(threads), "--batch", str(batch),
                          "--runs", str(runs), "--warmup", str(warmup), "--model", str(model),
                          "--precision", precision], check=True, capture_output=True, text=True, env=env).stdout
    ran = re.search(r"kernels (\S+)", out).group(1)
    if kernels and ran != kernels:  # not forced after all: a figure for another kernel set would mislead
        notes.add(f"DedogBench latency ran {ran} with DEDOG_KERNELS={kernels}: forced rows are NaN")
        return nan
    return float(re.search(r"median_ms (\S+)", out).group(1))


def paired(dedog, peer, runs, rounds):
    """(dedog ms, ORT ms, ratios) from `rounds` rounds taking turns, each of runs / rounds runs: the medians of each
    side's rounds, and every round's dedog / ORT (None for one round)."""
    rounds = max(1, rounds)
    each = max(10, runs // rounds)
    pairs = [(dedog(each), peer(each)) for _ in range(rounds)]
    return (statistics.median(d for d, _ in pairs), statistics.median(o for _, o in pairs),
            [d / o for d, o in pairs] if rounds > 1 else None)


def cpu_flags():
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split(":")[1].split()
    except (OSError, StopIteration):
        return "unknown"
    model = next((l.split(":")[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    wanted = [f for f in flags if f in ("sse4_2", "avx", "avx2", "fma", "f16c") or f.startswith("avx512")]
    return f"{model}; {os.cpu_count()} CPUs; " + " ".join(wanted)


def run_process(cmd):
    """Wall time (s) and peak RSS (kB) of one run of `cmd`."""
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    return elapsed, int(r.stderr.strip().splitlines()[-1])


def process_time(cmd, runs=15, peer=None):
    """Median wall time (ms) and peak RSS (MB) of `cmd` over `runs` runs. With `peer` (the Python process it is
    compared with), each run of `cmd` follows one of `peer` and the peer's figures come back too: interleaved, a
    machine that slows down part-way through (these shared ones do) slows both sides of the ratio alike."""
    times, peak, peer_times, peer_peak = [], 0, [], 0
    for _ in range(runs):
        if peer:
            t, kb = run_process(peer)
            peer_times.append(t)
            peer_peak = max(peer_peak, kb)
        t, kb = run_process(cmd)
        times.append(t)
        peak = max(peak, kb)
    mine = (statistics.median(times) * 1000, peak / 1024)
    return mine + ((statistics.median(peer_times) * 1000, peer_peak / 1024) if peer else ())


def ort_script(path, name):
    """A whole Python + ORT classify process on one photo, as a user would write it."""
    script = work / name
    script.write_text(f'''
import sys, numpy as np, onnxruntime as ort
from PIL import Image
{inspect.getsource(preprocess)}
x = preprocess(sys.argv[1])
o = ort.SessionOptions(); o.intra_op_num_threads = 2
logits = ort.InferenceSession("{path}", o, providers=["CPUExecutionProvider"]).run(None, {{"input": x}})[0][0]
p = np.exp(logits - logits.max()); p /= p.sum()
for i in np.argsort(-p)[:3]: print(i, p[i])
''')
    return script


def dedog_classify(model, precision, target, threads=2, runs=15, bin=None, peer=None):
    return process_time([str((bin or args.bin) / "dedog"), "classify", "--threads", str(threads), "--model", str(model),
                         "--precision", precision, str(target)], runs=runs, peer=peer)


rows = []
# dedog at each precision against ORT at the same one.
for precision, path in (("fp32", onnx_path), ("int8", int8_path)):
    for label, threads, batch, runs in [("batch 1, 1 thread (ms)", 1, 1, args.runs), ("batch 1, 2 threads (ms)", 2, 1, args.runs),
                                        ("batch 32, 2 threads (ms/image)", 2, 32, max(10, args.runs // 20))]:
        d, o, ratios = paired(lambda n: dedog_latency(threads, batch, n, precision) / batch,
                              lambda n: ort_latency(threads, batch, n, path=path) / batch, runs,
                              rounds=args.rounds if batch == 1 else 1)
        rows.append((f"{precision} {label}", d, o, ratios))
    # The other kernel builds, forced, against the same ORT figure (ORT picks its own kernels). Portable is slow.
    # AVX2, most users' CPUs (issue 69), on 2 threads too.
    ort_1, ort_2 = rows[-3][2], rows[-2][2]
    for kernels, threads, runs in (("avx-vnni", 1, max(20, args.runs // 4)), ("avx2", 1, max(20, args.runs // 4)),
                                   ("avx2", 2, max(20, args.runs // 4)), ("portable", 1, max(10, args.runs // 10))):
        try:
            d = dedog_latency(threads, 1, runs, precision, kernels=kernels)
        except subprocess.CalledProcessError:
            d = nan
        rows.append((f"{precision} batch 1, {threads} thread{'s' if threads > 1 else ''}, {kernels} forced (ms)", d,
                     ort_1 if threads == 1 else ort_2))

# The backbones of the default model, Lite1 (240) and Lite2 (260), in 8 bits against ORT INT8 of the same
# networks, exported and quantized as the Lite0 peer (LiteNet reads the block table from the model file; it gives
# the committed Tests/Golden logits of both exactly).
for arch, shorter, crop in (("lite1", 274, 240), ("lite2", 297, 260)):
    file = args.root / f"models/efficientnet-{arch}-imagenet.safetensors"
    peer = load(LiteNet(file, crop), file)
    path = work / f"{arch}.onnx"
    torch.onnx.export(peer, torch.zeros(1, 3, crop, crop), str(path), opset_version=17, input_names=["input"],
                      output_names=["logits"], dynamic_axes={"input": {0: "n"}, "logits": {0: "n"}}, dynamo=False)
    if int8_path is None:
        continue
    x = np.concatenate([preprocess(p, shorter, crop) for p in calibration_photos()])
    q_path, _ = quantize(x, path, arch)
    for label, threads, batch, runs in [("batch 1, 1 thread (ms)", 1, 1, args.runs), ("batch 1, 2 threads (ms)", 2, 1, args.runs),
                                        ("batch 32, 2 threads (ms/image)", 2, 32, max(10, args.runs // 20))]:
        d, o, ratios = paired(lambda n: dedog_latency(threads, batch, n, "int8", model=file) / batch,
                              lambda n: ort_latency(threads, batch, n, path=q_path, size=crop) / batch, runs,
                              rounds=args.rounds if batch == 1 else 1)
        rows.append((f"{arch.capitalize()} int8 {label}", d, o, ratios))
        if batch == 1:
            try:
                d = dedog_latency(threads, 1, runs, "int8", model=file, kernels="avx2")
            except subprocess.CalledProcessError:
                d = nan
            rows.append((f"{arch.capitalize()} int8 {label.replace(' (ms)', '')}, avx2 forced (ms)", d, o))


def print_rows():
    width = max(len(row[0]) for row in rows)
    print(f"| {'measure':<{width}} | {'dedog':>9} | {'ORT':>9} | {'dedog/ORT':>9} | {'rounds (min-max)':>17} |")
    print(f"|{'-' * (width + 2)}|{'-' * 11}|{'-' * 11}|{'-' * 11}|{'-' * 19}|")
    for label, d, o, *rest in rows:
        ratios = rest[0] if rest else None
        ratio = statistics.median(ratios) if ratios else d / o
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else ""
        print(f"| {label:<{width}} | {d:9.2f} | {o:9.2f} | {ratio:9.2f} | {spread:>17} |")


if args.latency_only:
    print(f"\nEfficientNet-Lite0 to Lite2, median of {args.runs} runs after warm-up; ONNX Runtime {ort.__version__}")
    print(f"CPU: {cpu_flags()}")
    for note in sorted(notes):
        print(note)
    print_rows()
    sys.exit(0)

# Whole processes, each dedog row timed in turns with the Python + ORT process it is compared with.
ort_process = [sys.executable, str(ort_script(onnx_path, "classify_ort.py")), str(photo)]
for precision in ("fp32", "int8"):
    d_proc, d_peak, o_proc, o_peak = dedog_classify(model_file, precision, photo, peer=ort_process)
    rows.append((f"classify one photo, whole process, {precision} (ms)", d_proc, o_proc))
    rows.append((f"  peak RSS of that process, {precision} (MB)", d_peak, o_peak))
# dedog int8 against a Python + ORT INT8 process.
if int8_path:
    d_proc, d_peak, q_proc, q_peak = dedog_classify(model_file, "int8", photo,
                                                    peer=[sys.executable, str(ort_script(int8_path, "classify_ort_int8.py")), str(photo)])
else:
    d_proc, d_peak, q_proc, q_peak = nan, nan, nan, nan
rows.append(("  same, int8, against Python + ORT INT8 (ms)", d_proc, q_proc))
rows.append(("  peak RSS, int8, against Python + ORT INT8 (MB)", d_peak, q_peak))
# The bundled breed models, whole process, against the same Python + ORT FP32 process running Lite0 alone.
for name in ("default", "fast"):
    for precision in ("int8", "fp32"):
        t, peak, o_proc, o_peak = dedog_classify(name, precision, photo, peer=ort_process)
        rows.append((f"  same, dedog --model {name} --precision {precision} (ms)", t, o_proc))
        rows.append((f"  peak RSS, dedog --model {name} --precision {precision} (MB)", peak, o_peak))
# The same, as `scripts/install` builds dedog: the Swift runtime and Foundation linked in.
if args.installed_bin:
    for name in ("default", "fast"):
        t, _, o_proc, _ = dedog_classify(name, "int8", photo, bin=args.installed_bin, peer=ort_process)
        rows.append((f"  same, installed dedog, --model {name} --precision int8 (ms)", t, o_proc))

# Folder throughput: one process classifying 40 photos (copies of the sample, so decoding is included).
folder = work / "throughput"
folder.mkdir(exist_ok=True)
for i in range(40):
    (folder / f"photo-{i:02d}.jpg").write_bytes(photo.read_bytes())
throughput = {}
for name in ("default", "fast"):
    for precision in ("int8", "fp32"):
        for threads in (1, 2):
            t, _ = dedog_classify(name, precision, folder, threads=threads, runs=3)
            throughput[name, precision, threads] = 40 / (t / 1000)


def layers(precision):
    return subprocess.run([str(args.bin / "DedogBench"), "layers", "--threads", "1", "--runs", str(max(20, args.runs // 4)),
                           "--model", str(model_file), "--precision", precision],
                          check=True, capture_output=True, text=True).stdout


layer_tables = {precision: layers(precision) for precision in ("int8", "fp32")}

print(f"\nEfficientNet-Lite0, 224x224, median of {args.runs} runs after warm-up; ONNX Runtime {ort.__version__}")
print(f"CPU: {cpu_flags()}")
print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}  ORT vs PyTorch max |diff| = {diff:.2e}")
print(f"ORT INT8: QDQ, per-channel int8 weights, uint8 activations, min-max; {quant_note}")
for note in sorted(notes):
    print(note)
print("fp32 rows: dedog --precision fp32 vs ORT FP32; int8 rows: dedog --precision int8 vs ORT INT8 (unless named)\n")
print_rows()

print("\nFolder of 40 photos, one `dedog classify` process (median of 3):\n")
print("| model | precision | threads | photos/s |")
print("|---|---|---|---|")
for (name, precision, threads), rate in throughput.items():
    print(f"| {name} | {precision} | {threads} | {rate:.1f} |")
print()
for name in ("default", "fast"):
    print(f"{name}: int8 / fp32 photos/s on 2 threads = {throughput[name, 'int8', 2] / throughput[name, 'fp32', 2]:.2f}x")

for precision in ("int8", "fp32"):
    print(f"\nPer step of dedog's execution plan, {precision}, one image, one thread, each kernel build this CPU runs:\n")
    print(layer_tables[precision])
