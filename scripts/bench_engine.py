"""Side-by-side benchmark of dedog's engine and ONNX Runtime on the same EfficientNet-Lite0 weights.

The ONNX model is built here from dedog's own model file (so the weights are identical): TF-SAME padding is an
explicit zero-valued Pad in front of the stride-2 convolutions (ORT fuses it into the Conv), BatchNorm is
folded by the exporter. Its logits are checked against dedog's before anything is timed.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lite0_torch import Lite0, load  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--bin", type=Path, required=True)
parser.add_argument("--root", type=Path, required=True)
parser.add_argument("--runs", type=int, default=200)
args = parser.parse_args()
model_file = args.root / "models/efficientnet-lite0-imagenet.safetensors"
photo = args.root / "datasets/samples/beagle.jpg"
work = Path(tempfile.mkdtemp(prefix="dedog-bench-"))

net = load(Lite0(), model_file)
onnx_path = work / "lite0.onnx"
torch.onnx.export(net, torch.zeros(1, 3, 224, 224), str(onnx_path), opset_version=17, input_names=["input"],
                  output_names=["logits"], dynamic_axes={"input": {0: "n"}, "logits": {0: "n"}}, dynamo=False)


def session(threads):
    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(onnx_path), o, providers=["CPUExecutionProvider"])


rng = np.random.default_rng(42)
x1 = rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
# Sanity: ORT on our weights agrees with PyTorch, so both engines compute the same network.
with torch.no_grad():
    diff = np.abs(session(1).run(None, {"input": x1})[0] - net(torch.from_numpy(x1)).numpy()).max()
assert diff < 1e-3, f"ONNX export differs from PyTorch by {diff}"


def ort_latency(threads, batch, runs, warmup=20):
    s = session(threads)
    x = rng.uniform(-1, 1, (batch, 3, 224, 224)).astype(np.float32)
    times = []
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        s.run(None, {"input": x})
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def dedog_latency(threads, batch, runs, warmup=20, kernels=None):
    env = dict(os.environ, DEDOG_KERNELS=kernels) if kernels else None
    out = subprocess.run([str(args.bin / "DedogBench"), "latency", "--threads", str(threads), "--batch", str(batch),
                          "--runs", str(runs), "--warmup", str(warmup), "--model", str(model_file)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return float(re.search(r"median_ms (\S+)", out).group(1))


def cpu_flags():
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split(":")[1].split()
    except (OSError, StopIteration):
        return "unknown"
    model = next((l.split(":")[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    wanted = [f for f in flags if f in ("sse4_2", "avx", "avx2", "fma", "f16c") or f.startswith("avx512")]
    return f"{model}; {os.cpu_count()} CPUs; " + " ".join(wanted)


def process_time(cmd, runs=15):
    times, peak = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        assert r.returncode == 0, r.stderr
        peak = max(peak, int(r.stderr.strip().splitlines()[-1]))
    return statistics.median(times) * 1000, peak / 1024


ort_script = work / "classify_ort.py"
ort_script.write_text(f'''
import sys, numpy as np, onnxruntime as ort
from PIL import Image
img = Image.open(sys.argv[1]).convert("RGB")
w, h = img.size
size = (256, 256 * h // w) if w <= h else (256 * w // h, 256)
img = img.resize(size, Image.BILINEAR)
l, t = round((size[0] - 224) / 2), round((size[1] - 224) / 2)
x = ((np.asarray(img.crop((l, t, l + 224, t + 224)), np.float32) - 127) / 128).transpose(2, 0, 1)[None]
o = ort.SessionOptions(); o.intra_op_num_threads = 2
logits = ort.InferenceSession("{onnx_path}", o, providers=["CPUExecutionProvider"]).run(None, {{"input": x}})[0][0]
p = np.exp(logits - logits.max()); p /= p.sum()
for i in np.argsort(-p)[:3]: print(i, p[i])
''')

rows = []
for label, threads, batch, runs in [("batch 1, 1 thread (ms)", 1, 1, args.runs), ("batch 1, 2 threads (ms)", 2, 1, args.runs),
                                    ("batch 32, 2 threads (ms/image)", 2, 32, max(10, args.runs // 20))]:
    d = dedog_latency(threads, batch, runs) / batch
    o = ort_latency(threads, batch, runs) / batch
    rows.append((label, d, o))
# The other kernel builds, forced, against the same ORT figure (ORT picks its own kernels).
ort_1 = rows[0][2]
for kernels in ("avx2", "portable"):
    try:
        rows.append((f"batch 1, 1 thread, {kernels} forced (ms)", dedog_latency(1, 1, max(20, args.runs // 4), kernels=kernels), ort_1))
    except subprocess.CalledProcessError:
        rows.append((f"batch 1, 1 thread, {kernels} forced (ms)", float("nan"), ort_1))
d_proc, d_peak = process_time([str(args.bin / "dedog"), "classify", "--threads", "2", "--model", str(model_file), str(photo)])
o_proc, o_peak = process_time([sys.executable, str(ort_script), str(photo)])
rows.append(("classify one photo, whole process (ms)", d_proc, o_proc))
rows.append(("peak RSS of that process (MB)", d_peak, o_peak))
# The bundled breed models, whole process, against the same Python + ORT process running Lite0 alone.
for name in ("default", "fast"):
    t, peak = process_time([str(args.bin / "dedog"), "classify", "--threads", "2", "--model", name, str(photo)])
    rows.append((f"  same, dedog --model {name} (ms)", t, o_proc))
    rows.append((f"  peak RSS, dedog --model {name} (MB)", peak, o_peak))

# Folder throughput: one process classifying 40 photos (copies of the sample, so decoding is included).
folder = work / "throughput"
folder.mkdir(exist_ok=True)
for i in range(40):
    (folder / f"photo-{i:02d}.jpg").write_bytes(photo.read_bytes())
throughput = []
for name in ("default", "fast"):
    for threads in (1, 2):
        t, _ = process_time([str(args.bin / "dedog"), "classify", "--threads", str(threads), "--model", name, str(folder)], runs=3)
        throughput.append((name, threads, 40 / (t / 1000)))

layers = subprocess.run([str(args.bin / "DedogBench"), "layers", "--threads", "1", "--runs", str(max(20, args.runs // 4)),
                         "--model", str(model_file)], check=True, capture_output=True, text=True).stdout

print(f"\nEfficientNet-Lite0, 224x224, median of {args.runs} runs after warm-up; ONNX Runtime {ort.__version__}")
print(f"CPU: {cpu_flags()}")
print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}  ORT vs PyTorch max |diff| = {diff:.2e}\n")
print(f"| {'measure':<40} | {'dedog':>9} | {'ORT':>9} | {'dedog/ORT':>9} |")
print(f"|{'-' * 42}|{'-' * 11}|{'-' * 11}|{'-' * 11}|")
for label, d, o in rows:
    print(f"| {label:<40} | {d:9.2f} | {o:9.2f} | {d / o:9.2f} |")

print("\nFolder of 40 photos, one `dedog classify` process (median of 3):\n")
print("| model | threads | photos/s |")
print("|---|---|---|")
for name, threads, rate in throughput:
    print(f"| {name} | {threads} | {rate:.1f} |")

print("\nPer step of dedog's execution plan, one image, one thread, each kernel build this CPU runs:\n")
print(layers)
