"""Rewrites a dedog model file with its convolution and classifier weights stored as F16 (half the size; dedog
widens them exactly at load), as `scripts/convert-weights --half` stores them; every other tensor, the metadata
and the tensor names are kept. Rounding is to nearest, ties to even (IEEE 754, as torch's .to(float16)).
    python3 scripts/half_precision.py models/efficientnet-lite0-imagenet.safetensors out.safetensors
Standard library only."""
import array, json, struct, sys

source, target = sys.argv[1], sys.argv[2]
data = open(source, "rb").read()
length = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + length])
body = data[8 + length:]
big = ("_conv.weight", "_conv_stem.weight", "_conv_head.weight", "_fc.weight")
out_header, chunks, offset = {}, [], 0
for name in sorted(k for k in header if k != "__metadata__"):
    entry = dict(header[name])
    begin, end = entry["data_offsets"]
    raw = body[begin:end]
    if entry["dtype"] == "F32" and name.endswith(big):
        floats = array.array("f")
        floats.frombytes(raw)
        raw = b"".join(struct.pack("<e", x) for x in floats)
        entry["dtype"] = "F16"
    entry["data_offsets"] = [offset, offset + len(raw)]
    offset += len(raw)
    out_header[name] = entry
    chunks.append(raw)
if "__metadata__" in header:
    out_header["__metadata__"] = header["__metadata__"]
encoded = json.dumps(out_header, separators=(",", ":")).encode()
encoded += b" " * (-len(encoded) % 8)
with open(target, "wb") as f:
    f.write(struct.pack("<Q", len(encoded)) + encoded + b"".join(chunks))
