"""A dedog model file read in numpy, for the studies here: its description, its tensors, and what `Model.decide` makes of
the ImageNet heads (the same arithmetic, independently written)."""
import json, struct
import numpy as np


def read_model(path):
    """(description, tensor(name) -> float32 array) of a model file."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    description = json.loads(header["__metadata__"]["dedog.model"])
    data = raw[8 + n:]

    def tensor(name):
        e = header[name]
        a, b = e["data_offsets"]
        dtype = {"F32": np.float32, "F16": np.float16}[e["dtype"]]
        return np.frombuffer(data[a:b], dtype=dtype).astype(np.float32).reshape(e["shape"])
    return description, tensor


def log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def read_features(features, backbones):
    """(paths, features [photos × backbones × 1280]) of `DedogBench features` output."""
    paths = [line.split("\t")[0] for line in open(features.with_suffix(".tsv"))]
    return paths, np.fromfile(features.with_suffix(".f32"), dtype=np.float32).reshape(len(paths), backbones, -1)


def breed_heads(description, tensor):
    """Each backbone's breed head as the 8-bit pass ranks with it: (weight, bias, unit prototypes, temperature) in
    float64, and the temperature of the backbones' combination."""
    heads = []
    for bb in description["backbones"]:
        t = (bb.get("int8") or {}).get("breedTemperature") or bb["breedHead"].get("temperature") or 1
        heads.append((tensor(bb["breedHead"]["weight"]).astype(np.float64), tensor(bb["breedHead"]["bias"]).astype(np.float64),
                      tensor(bb["prototypes"]).astype(np.float64), t))
    return heads, description.get("int8CombinedTemperature") or description.get("combinedTemperature") or 1


def imagenet(description, tensor, x):
    """The ImageNet heads' probabilities, averaged over the backbones as classify averages them, and the labels."""
    p = 0
    for b, bb in enumerate(description["backbones"]):
        head = bb["imagenetHead"]
        t = head.get("temperature") or 1
        p = p + np.exp(log_softmax((x[:, b] @ tensor(head["weight"]).T + tensor(head["bias"])) / t)) / len(description["backbones"])
    return p, description["backbones"][0]["imagenetHead"]["labels"]


def no_dog_today(description, p, labels):
    """The "no dog" of the ImageNet heads alone (`DecisionThresholds.showsNoDog`): dog mass under the threshold and,
    unless under half of it, a class that is not a dog at 3 % or more."""
    dogs = np.array([l["isDog"] for l in labels])
    dog, top_other = p[:, dogs].sum(1), p[:, ~dogs].max(1)
    threshold = description["decision"]["noDogBelow"]
    return (dog < threshold) & ((dog < threshold * 0.5) | (top_other >= 0.03))
