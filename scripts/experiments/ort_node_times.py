"""ONNX Runtime's own per-node times (its profiler) for a model at batch 1, to set beside `DedogBench layers`
(issue 69: which of dedog's layers lose to ORT's).

  ort_node_times.py MODEL.onnx [THREADS] [--nodes]

MODEL.onnx: e.g. the lite0-int8.onnx `scripts/bench-engine` leaves in its /tmp/dedog-bench-* folder (input "input",
1×3×224×224). Prints the median time of each operator type over 200 passes (after 30 warm-up), and with --nodes each
node's; QLinearConv nodes named .../dw/... are the depthwise layers, /stem/ the stem, the rest 1×1 layers and the
head. Run with scripts/.work/venv-bench/bin/python."""
import json, os, sys, collections, tempfile, numpy as np, onnxruntime as ort
path = sys.argv[1]
o = ort.SessionOptions(); o.intra_op_num_threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1; o.inter_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
o.enable_profiling = True
o.profile_file_prefix = os.path.join(tempfile.mkdtemp(prefix="ort-profile-"), "profile")  # not in the working folder
s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
for _ in range(230): s.run(None, {"input": x})
profile = s.end_profiling()
prof = json.load(open(profile))
os.remove(profile)
nodes = collections.defaultdict(list)
for e in prof:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        nodes[(e["name"][:-12], e["args"].get("op_name"))].append(e["dur"])
by_op = collections.Counter(); total = 0
rows = []
for (name, op), d in nodes.items():
    med = float(np.median(d[30:])) / 1000
    by_op[op] += med; total += med
    rows.append((name, op, med))
print(f"total of node medians: {total:.3f} ms")
for op, t in by_op.most_common(): print(f"{op:28s} {t:7.3f} ms {100*t/total:5.1f} %")
if "--nodes" in sys.argv:
    for name, op, med in rows: print(f"{name:60s} {op:20s} {med:.3f}")
