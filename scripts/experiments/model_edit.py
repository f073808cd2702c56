#!/usr/bin/env python3
"""Copies of a model file edited for studies (issue 70), on the safetensors bytes themselves:
  model_edit.py MODEL OUT --without KEY...   breed labels KEY no longer named: their breed-head biases set to -10000
                                             (F32 or F16), as ModelFileEdit.withoutBreeds does for the tests, so their
                                             photos are those of breeds outside the model
  model_edit.py MODEL OUT --rule-shift D     the unknown-breed rule's threshold (`decision.unknownBreed.below`) moved by D
Both may be given together."""
import argparse, json, struct

p = argparse.ArgumentParser()
p.add_argument("model"); p.add_argument("out")
p.add_argument("--without", nargs="*", default=[])
p.add_argument("--rule-shift", type=float, default=0.0)
a = p.parse_args()
data = bytearray(open(a.model, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
desc = json.loads(header["__metadata__"]["dedog.model"])
for backbone in desc["backbones"]:
    head = backbone["breedHead"]
    keys = [label["key"] for label in head["labels"]]
    tensor = header[head["bias"]]
    start = 8 + n + tensor["data_offsets"][0]
    for key in a.without:
        row = keys.index(key)
        if tensor["dtype"] == "F16":
            data[start + 2 * row:start + 2 * row + 2] = bytes([0xE2, 0xF0])
        else:
            data[start + 4 * row:start + 4 * row + 4] = struct.pack("<f", -10000.0)
if a.rule_shift:
    desc["decision"]["unknownBreed"]["below"] += a.rule_shift
    header["__metadata__"]["dedog.model"] = json.dumps(desc, sort_keys=True)
    text = json.dumps(header, sort_keys=True).encode()
    text += b" " * (-len(text) % 8)  # the tensors stay aligned to 8 bytes
    data = bytearray(struct.pack("<Q", len(text))) + text + data[8 + n:]
open(a.out, "wb").write(data)
