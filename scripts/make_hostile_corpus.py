"""Writes the hostile-input corpus: files a stranger could hand to dedog, each with what dedog must do with it.

Every entry in manifest.json names an input, its kind (photo, model, catalogue, dataset), why it is there, the
typed error the library must throw ("api": the error case, or "ok"), the CLI's exit status and a fragment of the
message. Tests/DedogCLITests/HostileCorpusTests.swift runs each through the public API and the `dedog` binary.

Inputs that cannot live in git are described instead of stored and are made by the test in a temporary folder:
  "make": named pipes, folders, link loops, dangling links, unreadable files, sparse multi-gigabyte files;
  "recipe": a small edit of the bundled 19 MB model (a NaN weight, a wrong dtype, …) — storing a copy per
            case would add hundreds of MB;
  "dataset": small ImageFolder trees with hostile entries.
Pure standard library, deterministic: running it again rewrites the same bytes.
"""
import json, random, struct, sys, zlib
from pathlib import Path

root = Path(__file__).resolve().parent.parent
out = root / "Tests" / "HostileCorpus"
fixtures = root / "Tests" / "DedogImageTests" / "Fixtures"
for sub in ("photos", "models", "catalogues"):
    (out / sub).mkdir(parents=True, exist_ok=True)
    for old in (out / sub).iterdir():
        old.unlink()
entries = []


def add(kind, name, why, api, exit, message, data=None, **extra):
    """`data` is written to kind/name; otherwise the entry is made at test time (extra says how)."""
    folder = {"photo": "photos", "model": "models", "catalogue": "catalogues", "dataset": "datasets"}[kind]
    if data is not None:
        (out / folder / name).write_bytes(data)
    entry = {"kind": kind, "file": f"{folder}/{name}", "why": why, "api": api if isinstance(api, list) else [api],
             "exit": exit, "message": message}
    entry.update(extra)
    entries.append(entry)


# ---------------------------------------------------------------- photos
jpeg = (fixtures / "jpeg-800x600.jpg").read_bytes()
small_jpeg = (fixtures / "jpeg-baseline.jpg").read_bytes()
png = (fixtures / "png-rgb8.png").read_bytes()


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_file(width, height, depth, colour, idat=b""):
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))
    if idat:
        data += chunk(b"IDAT", idat)
    return data + chunk(b"IEND", b"")


add("photo", "zero-byte.jpg", "zero-byte file", "empty", 1, "empty", b"")
for cut in (2, 3, 4, 20, 160, 600, 2000, len(jpeg) // 2, len(jpeg) - 2):
    add("photo", f"jpeg-cut-at-{cut}.jpg", f"JPEG truncated after {cut} of {len(jpeg)} bytes",
        ["truncated", "corrupt", "unsupportedFormat"], 1, "", jpeg[:cut])
for cut in (8, 12, 30, 40, 100, len(png) - 30):
    add("photo", f"png-cut-at-{cut}.png", f"PNG truncated after {cut} of {len(png)} bytes",
        ["truncated", "corrupt"], 1, "", png[:cut])

add("photo", "png-without-iend.png", "PNG without its final IEND chunk: the picture itself is whole", "ok", 0, "",
    png[:-12])
add("photo", "png-without-iend-checksum.png", "PNG cut inside the final IEND chunk: the picture itself is whole",
    "ok", 0, "", png[:-4])

# Wrong extensions: found and decoded by content.
add("photo", "png-named.jpg", "a PNG named .jpg", "ok", 0, "", png)
add("photo", "jpeg-named.png", "a JPEG named .png", "ok", 0, "", small_jpeg)
add("photo", "jpeg-named.txt", "a JPEG named .txt", "ok", 0, "", small_jpeg)
add("photo", "text-named.jpg", "text named .jpg", "unsupportedFormat", 1, "it looks like text",
    b"This is not a photo of a dog.\n")


# Decompression bombs: huge declared sizes, refused from the header before any allocation.
def with_sof_size(data, width, height):
    b = bytearray(data)
    i = 2
    while i < len(b):
        marker, length = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            b[i + 5:i + 9] = struct.pack(">HH", height, width)
            return bytes(b)
        i += 2 + length
    raise SystemExit("no SOF marker")


add("photo", "jpeg-bomb-65500x65500.jpg", "JPEG header declares 65500×65500 (4.3 gigapixels)", "tooLarge", 1,
    "over the limit", with_sof_size(small_jpeg, 65500, 65500))
add("photo", "jpeg-zero-width.jpg", "JPEG header declares a width of 0", ["corrupt", "truncated"], 1, "",
    with_sof_size(small_jpeg, 0, 9))
add("photo", "png-bomb-header-100000x100000.png", "PNG header declares 10^10 pixels, with 18 bytes of data",
    "tooLarge", 1, "over the limit", png_file(100_000, 100_000, 8, 2, zlib.compress(bytes(10))))
rows = 20000
bomb = zlib.compress(b"".join(b"\x00" + bytes(20000 // 8) for _ in range(rows)), 9)
add("photo", "png-zlib-bomb-20000x20000.png",
    f"a real {len(bomb) // 1024} kB PNG that inflates to 400 megapixels", "tooLarge", 1, "over the limit",
    png_file(20000, 20000, 1, 0, bomb))
add("photo", "png-zero-size.png", "PNG header declares 0×0", "corrupt", 1, "", png_file(0, 0, 8, 2))
add("photo", "png-width-2pow31.png", "PNG width of 2^31 (beyond the format's limit)", ["corrupt", "tooLarge"], 1,
    "", png_file(2 ** 31, 1, 8, 2))
add("photo", "png-bad-crc.png", "PNG with a damaged chunk checksum", "corrupt", 1, "damaged",
    (fixtures / "bad-crc.png").read_bytes())


# Absurd EXIF: the picture is fine, the orientation tag is not; dedog decodes it and ignores the tag.
def with_exif(tiff):
    app1 = b"Exif\x00\x00" + tiff
    return small_jpeg[:2] + b"\xFF\xE1" + struct.pack(">H", len(app1) + 2) + app1 + small_jpeg[2:]


def ifd(entries, next_offset=0, count=None):
    body = struct.pack("<H", len(entries) if count is None else count)
    for tag, kind, n, value in entries:
        body += struct.pack("<HHII", tag, kind, n, value)
    return body + struct.pack("<I", next_offset)


exif_cases = {
    "orientation-9": b"II*\x00" + struct.pack("<I", 8) + ifd([(0x0112, 3, 1, 9)]),
    "orientation-65535": b"II*\x00" + struct.pack("<I", 8) + ifd([(0x0112, 3, 1, 0xFFFF)]),
    "orientation-as-long-array": b"II*\x00" + struct.pack("<I", 8) + ifd([(0x0112, 4, 0x40000000, 0xFFFFFF00)]),
    "ifd-offset-past-end": b"II*\x00" + struct.pack("<I", 0xFFFFFFF0),
    "ifd-entry-count-65535": b"II*\x00" + struct.pack("<I", 8) + ifd([(0x0112, 3, 1, 6)], count=0xFFFF),
    "ifd-loops-to-itself": b"II*\x00" + struct.pack("<I", 8) + ifd([(0x0100, 3, 1, 1)], next_offset=8),
    "bad-byte-order": b"XY*\x00" + struct.pack("<I", 8) + ifd([(0x0112, 3, 1, 6)]),
    "truncated-tiff-header": b"II",
}
for name, tiff in exif_cases.items():
    add("photo", f"exif-{name}.jpg", f"EXIF: {name.replace('-', ' ')}", "ok", 0, "", with_exif(tiff))

# Not images at all, recognised and named in the message.
rng = random.Random(20261122)
not_images = {
    "movie.mp4": (b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + bytes(64), "video"),
    "sound.wav": (b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(64), "RIFF"),
    "animation.gif": (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "GIF"),
    "scan.tif": (b"II*\x00\x08\x00\x00\x00" + bytes(32), "TIFF"),
    "picture.bmp": (b"BM" + bytes(60), "BMP"),
    "document.pdf": (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "PDF"),
    "archive.jpg": (b"PK\x03\x04" + bytes(40), "ZIP"),
    "program.jpg": (b"\x7fELF\x02\x01\x01\x00" + bytes(56), "program"),
    "page.png": (b"<!doctype html><title>dog</title>\n", "text"),
    "noise.jpg": (bytes(rng.randrange(256) for _ in range(1024)), "not a JPEG, PNG, HEIC, AVIF or WebP"),
    "almost-jpeg.jpg": (b"\xFF\xD8" + bytes(30), "not a JPEG, PNG, HEIC, AVIF or WebP"),
}
for name, (data, message) in not_images.items():
    add("photo", name, f"not an image: {message}", "unsupportedFormat", 1, message, data)

# HEIC, AVIF and WebP: the same traps as JPEG and PNG. Cuts at every structure boundary of the fixture files, headers
# that promise gigapixels, boxes whose sizes lie. libheif and libwebp must refuse each with a typed error.
heic = (fixtures / "heic-lossy.heic").read_bytes()
avif = (fixtures / "avif-lossy.avif").read_bytes()
webp = (fixtures / "webp-lossy.webp").read_bytes()
webp_alpha = (fixtures / "webp-alpha.webp").read_bytes()
for label, data in (("heic", heic), ("avif", avif)):
    for cut in (12, 24, 40, 100, 300, len(data) // 2, len(data) - 1):
        add("photo", f"{label}-cut-at-{cut}.{label}", f"{label.upper()} truncated after {cut} of {len(data)} bytes",
            ["truncated", "corrupt", "unsupportedFormat"], 1, "", data[:cut])
for label, data in (("webp", webp), ("webp-alpha", webp_alpha)):
    for cut in (12, 16, 30, len(data) // 2, len(data) - 1):
        add("photo", f"{label}-cut-at-{cut}.webp", f"WebP truncated after {cut} of {len(data)} bytes",
            ["truncated", "corrupt", "unsupportedFormat"], 1, "", data[:cut])


def with_ispe(data, width, height):
    b = bytearray(data)
    at = data.find(b"ispe")
    while at >= 0:
        b[at + 8:at + 16] = struct.pack(">II", width, height)
        at = data.find(b"ispe", at + 4)
    return bytes(b)


add("photo", "heic-bomb-30000x30000.heic", "HEIC whose image size box declares 30000×30000", "tooLarge", 1,
    "over the limit", (fixtures / "bad-bomb.heic").read_bytes())  # made by scripts/make-image-fixtures
add("photo", "avif-bomb-65535x65535.avif", "AVIF whose image size box declares 65535×65535 (over libheif's limit)",
    "corrupt", 1, "safety limits", with_ispe(avif, 65535, 65535))
add("photo", "heic-ispe-zero.heic", "HEIC whose image size box declares 0×0", ["corrupt", "truncated"], 1, "",
    with_ispe(heic, 0, 0))
add("photo", "webp-bomb-16384x16384.webp", "WebP whose header declares 16384×16384", "tooLarge", 1,
    "over the limit", (fixtures / "bad-bomb.webp").read_bytes())
meta = heic.index(b"meta") - 4
add("photo", "heic-meta-size-huge.heic", "HEIC whose meta box claims 4 GB", "truncated", 1, "",
    heic[:meta] + b"\xff\xff\xff\xf0" + heic[meta + 4:])
add("photo", "heic-meta-size-tiny.heic", "HEIC whose meta box claims 9 bytes", ["corrupt", "truncated"], 1, "",
    heic[:meta] + struct.pack(">I", 9) + heic[meta + 4:])
add("photo", "webp-riff-size-huge.webp", "WebP whose RIFF header claims 4 GB", "truncated", 1, "",
    webp[:4] + b"\xf0\xff\xff\xff" + webp[8:])
# Found by the image fuzzer: a 1 kB HEIC whose image handle says 64×48 but whose grid item declares 26482×26980;
# libheif allocated the grid (2 GB) before decoding a tile. dedog reads the grid sizes from the boxes first.
add("photo", "heic-grid-bomb.heic", "HEIC whose grid declares 26482×26980 behind a 64×48 image size box", "tooLarge",
    1, "over the limit", (root / "Fuzz" / "regressions" / "image" / "heic-grid-bomb.heic").read_bytes())
# Also from the fuzzer: a grid whose tile is the grid itself. libheif 1.15 recursed, starting decoding threads at
# every level, until thread creation threw and ended the process (or, without threads, the stack overflowed).
add("photo", "heic-grid-loop.heic", "HEIC whose grid lists itself as its tile", "corrupt", 1, "in a loop",
    (root / "Fuzz" / "regressions" / "image" / "heic-grid-loop.heic").read_bytes())
add("photo", "heic-only-ftyp.heic", "a HEIC file type box and nothing else", ["corrupt", "truncated"], 1, "",
    b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
add("photo", "webp-only-riff.webp", "a WebP RIFF header and nothing else", ["corrupt", "truncated"], 1, "",
    b"RIFF\x24\x00\x00\x00WEBPVP8 ")

# Made by the test: the file system's own traps.
add("photo", "named-pipe.jpg", "a named pipe (reading it would block forever)", "unreadable", 1, "named pipe",
    make="fifo")
add("photo", "folder.jpg", "a folder named like a photo (the CLI searches it, finds nothing)", "unreadable", 1,
    "folder", make="folder", cliMessage="no JPEG, PNG, HEIC, AVIF or WebP images found")
add("photo", "link-loop.jpg", "a symbolic link to itself", "unreadable", 1, "loop of symbolic links",
    make="self-link")
add("photo", "dangling.jpg", "a symbolic link to nothing", "unreadable", 1, "no such file", make="dangling")
add("photo", "locked.jpg", "a photo without read permission", "unreadable", 1, "permission denied",
    make="unreadable")
add("photo", "huge-sparse.jpg", "a 600 MB file that starts like a JPEG", "unreadable", 1, "over the limit",
    make="sparse", size=600 << 20, head=small_jpeg[:64].hex())
add("photo", "dev-zero", "an endless device", "unreadable", 1, "not a regular file", make="system", path="/dev/zero")

# ---------------------------------------------------------------- model files
def safetensors(header, data=b"", length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


tensor = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
add("model", "zero-byte.safetensors", "zero-byte model file", "malformedHeader", 2, "not a valid safetensors", b"")
add("model", "seven-bytes.safetensors", "shorter than the length field", "malformedHeader", 2, "too short",
    b"\x07" * 7)
add("model", "header-length-2pow63.safetensors", "header length 2^63", "malformedHeader", 2, "absurd",
    safetensors({}, length=2 ** 63))
add("model", "header-length-past-end.safetensors", "header longer than the file", "malformedHeader", 2,
    "does not fit", safetensors({"a": tensor}, length=4096))
add("model", "header-not-json.safetensors", "header is not JSON", "malformedHeader", 2, "not JSON",
    safetensors(b"{this is not json}   "))
add("model", "header-not-utf8.safetensors", "header is not UTF-8", "malformedHeader", 2, "not JSON",
    safetensors(b"{\"\xff\xfe\": 1}"))
add("model", "header-array.safetensors", "header is a JSON array", "malformedHeader", 2, "not a JSON object",
    safetensors([1, 2, 3]))
add("model", "offsets-past-end.safetensors", "tensor data beyond the end of the file", "malformedHeader", 2, "",
    safetensors({"a": {"dtype": "F32", "shape": [250], "data_offsets": [0, 1000]}}, bytes(8)))
add("model", "offsets-overlap.safetensors", "two tensors share bytes", "malformedHeader", 2, "",
    safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, bytes(12)))
add("model", "offsets-reversed.safetensors", "end offset before start offset", "malformedHeader", 2, "",
    safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, bytes(8)))
add("model", "shape-disagrees-with-bytes.safetensors", "shape says 3 floats, offsets say 2", "malformedHeader", 2,
    "", safetensors({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)))
add("model", "shape-negative.safetensors", "negative dimension", "malformedHeader", 2, "",
    safetensors({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, bytes(8)))
add("model", "shape-overflow.safetensors", "dimensions whose product overflows 64 bits", "malformedHeader", 2, "",
    safetensors({"a": {"dtype": "F32", "shape": [2 ** 62, 2 ** 62, 16], "data_offsets": [0, 8]}}, bytes(8)))
add("model", "dtype-unknown.safetensors", "dtype X99", "wrongDType", 2, "X99",
    safetensors({"a": {"dtype": "X99", "shape": [2], "data_offsets": [0, 8]}}, bytes(8)))
add("model", "metadata-not-strings.safetensors", "__metadata__ maps to numbers", "malformedHeader", 2, "",
    safetensors({"__metadata__": {"dedog.model": 1}}))
add("model", "no-description.safetensors", "a valid safetensors file that is not a dedog model",
    "invalidMetadata", 2, "model description", safetensors({"a": tensor}, bytes(8)))
add("model", "named-pipe.safetensors", "a named pipe", "unreadable", 2, "named pipe", make="fifo")
add("model", "folder.safetensors", "a folder", "unreadable", 2, "folder", make="folder")
add("model", "huge-sparse.safetensors", "a 2 GB file", "unreadable", 2, "over the limit", make="sparse",
    size=2 << 30, head="")
add("model", "dev-zero", "an endless device", "unreadable", 2, "not a regular file", make="system", path="/dev/zero")

# Edits of the bundled model, made by the test (see HostileCorpus.swift for what each key does).
base = "models/efficientnet-lite0-imagenet.safetensors"
recipes = [
    ("nan-weight", "a NaN in the head's weights", {"tensor": "_conv_head.weight", "value": "nan"},
     "nonFiniteValues", "_conv_head.weight"),
    ("inf-bias", "an infinity in the classifier's bias", {"tensor": "_fc.bias", "value": "inf"},
     "nonFiniteValues", "_fc.bias"),
    ("wrong-dtype", "a tensor stored as I32", {"tensor": "_conv_stem.weight", "dtype": "I32"},
     "wrongDType", "I32"),
    ("wrong-shape", "a 5×5 kernel stored flat", {"tensor": "_blocks.3._depthwise_conv.weight",
                                                  "shape": [144, 1, 25]}, "wrongShape", "_blocks.3"),
    ("missing-tensor", "a BN variance left out", {"tensor": "_blocks.7._bn1.running_var", "drop": True},
     "missingTensor", "_blocks.7._bn1.running_var"),
    ("label-count-mismatch", "999 labels for a 1000-way head", {"metadata": "drop-last-imagenet-label"},
     "labelCountMismatch", "999"),
    ("future-version", "format version 99", {"metadata": "format-version-99"}, "unsupportedVersion", "99"),
    ("other-architecture", "architecture resnet50", {"metadata": "architecture-resnet50"},
     "unsupportedArchitecture", "resnet50"),
]
# Model descriptions whose tensors are fine but whose numbers the engine cannot use: each is refused at load,
# naming the field. `set` puts the JSON value `json` at the dotted path (numbers index arrays); the base is
# format 4 (one backbone, with the activation ranges of 8-bit inference), so its fields are under backbones.0.
description_edits = [
    ("crop-1", "a 1-pixel crop", "backbones.0.preprocessing.cropSize", "1", "invalidValue", "backbones.0.preprocessing.cropSize is 1"),
    ("crop-4", "a 4-pixel crop", "backbones.0.preprocessing.cropSize", "4", "invalidValue", "backbones.0.preprocessing.cropSize is 4"),
    ("crop-huge", "a crop of a million pixels a side", "backbones.0.preprocessing.cropSize", "1000000", "invalidValue",
     "backbones.0.preprocessing.cropSize is 1000000"),
    ("resize-0", "resize to 0", "backbones.0.preprocessing.resizeShorterSide", "0", "invalidValue",
     "backbones.0.preprocessing.resizeShorterSide is 0"),
    ("resize-below-crop", "resize below the crop", "backbones.0.preprocessing.resizeShorterSide", "200", "invalidValue",
     "backbones.0.preprocessing.resizeShorterSide is 200"),
    ("std-0", "a zero standard deviation", "backbones.0.preprocessing.std", "[128, 0, 128]", "invalidValue",
     "backbones.0.preprocessing.std is [128.0, 0.0, 128.0]"),
    ("two-means", "two means for three channels", "backbones.0.preprocessing.mean", "[127, 127]", "invalidValue",
     "backbones.0.preprocessing.mean is [127.0, 127.0]"),
    ("string-means", "means given as strings", "backbones.0.preprocessing.mean", '["127", "127", "127"]', "invalidMetadata",
     "backbones.0.preprocessing.mean"),
    ("temperature-0", "a temperature of 0", "backbones.0.imagenetHead.temperature", "0", "invalidValue",
     "backbones.0.imagenetHead.temperature is 0.0"),
    ("temperature-negative", "a negative temperature", "backbones.0.imagenetHead.temperature", "-1.5", "invalidValue",
     "backbones.0.imagenetHead.temperature is -1.5"),
    ("threshold-string", "a threshold given as a string", "decision.noDogBelow", '"0.5"', "invalidMetadata",
     "decision.noDogBelow"),
    ("threshold-above-1", "a threshold of 2", "decision.unsureBelow", "2", "invalidValue",
     "decision.unsureBelow is 2.0"),
    ("duplicate-labels", "two labels with the same key", "backbones.0.imagenetHead.labels.1.key", '"n01440764"', "invalidValue",
     "backbones.0.imagenetHead.labels[1].key"),
    ("epsilon-0", "a BatchNorm epsilon of 0", "backbones.0.batchNormEpsilon", "0", "invalidValue", "batchNormEpsilon is 0.0"),
    ("vote-above-1", "the ImageNet head's vote agreeing from a share of 2", "decision.breedVote",
     '{"agreesFrom": 2, "disagreesBelow": 0.05, "elsewhereFrom": 0.5}', "invalidValue",
     "decision.breedVote.agreesFrom is 2.0"),
    ("vote-incomplete", "the ImageNet head's vote without its elsewhere share", "decision.breedVote",
     '{"agreesFrom": 0.1, "disagreesBelow": 0.05}', "invalidMetadata", "decision.breedVote"),
    ("imagenet-keys-numbers", "a label's ImageNet keys given as numbers", "backbones.0.imagenetHead.labels.0.imagenetKeys", "[1, 2]",
     "invalidMetadata", "backbones.0.imagenetHead.labels[0].imagenetKeys"),
]
# The messages name the field as the loader does: backbones[0].preprocessing.cropSize.
description_edits = [(n, w, p, v, e, m.replace("backbones.0.", "backbones[0].", 1)) for n, w, p, v, e, m in description_edits]
for name, why, path, value, error, message in description_edits:
    recipes.append((name, why, {"metadata": "set", "path": path, "json": value}, error, message))
for name, why, recipe, error, message in recipes:
    add("model", f"{name}.safetensors", why, error, 2, message, recipe=dict(recipe, base=base))
# The same kind of edits of the default model, which combines two backbones (format 2).
combined = "models/dedog-breeds.safetensors"
combined_edits = [
    ("combined-crop-1", "a 1-pixel crop for the second backbone", {"metadata": "set", "path": "backbones.1.preprocessing.cropSize",
     "json": "1"}, "invalidValue", "backbones[1].preprocessing.cropSize is 1"),
    ("combined-same-prefix", "two backbones under one tensor prefix", {"metadata": "set", "path": "backbones.1.tensorPrefix",
     "json": '"lite1."'}, "invalidValue", "backbones[1].tensorPrefix"),
    ("combined-labels-differ", "backbones whose breed heads name different classes",
     {"metadata": "set", "path": "backbones.1.breedHead.labels.0.key", "json": '"n00000000-wolf"'}, "invalidValue",
     "backbones[1].breedHead"),
    ("combined-temperature-0", "a combined temperature of 0", {"metadata": "set", "path": "combinedTemperature", "json": "0"},
     "invalidValue", "combinedTemperature is 0.0"),
    ("combined-no-backbones", "an empty list of backbones", {"metadata": "set", "path": "backbones", "json": "[]"},
     "invalidValue", "backbones is 0 backbones"),
    ("combined-missing-tensor", "a BN variance of the second backbone left out",
     {"tensor": "lite2._blocks.7._bn1.running_var", "drop": True}, "missingTensor", "lite2._blocks.7._bn1.running_var"),
]
for name, why, recipe, error, message in combined_edits:
    add("model", f"{name}.safetensors", why, error, 2, message, recipe=dict(recipe, base=combined))

# ---------------------------------------------------------------- catalogues
add("catalogue", "zero-byte.json", "zero-byte catalogue", "notJSON", 1, "not valid JSON", b"")
add("catalogue", "not-json.json", "not JSON", "notJSON", 1, "not valid JSON", b"breeds: [beagle]\n")
add("catalogue", "not-utf8.json", "bytes that are not UTF-8", "notJSON", 1, "not valid JSON", b'{"\xff": 1}')
add("catalogue", "array.json", "a JSON array instead of an object", ["invalid", "notJSON"], 1, "", b"[1, 2, 3]")
add("catalogue", "deep-nesting.json", "arrays nested 100,000 deep", "notJSON", 1, "not valid JSON",
    b"[" * 100000 + b"]" * 100000)
add("catalogue", "breed-missing-key.json", "a breed without its key", "invalid", 1, "missing",
    json.dumps({"formatVersion": 1, "sources": [], "breeds": [{"names": {"en": "Dog"}}]}).encode())
add("catalogue", "wrong-type.json", "formatVersion is a string", "invalid", 1, "expected",
    json.dumps({"formatVersion": "one", "sources": [], "breeds": []}).encode())
add("catalogue", "named-pipe.json", "a named pipe", "unreadable", 1, "named pipe", make="fifo")
add("catalogue", "huge-sparse.json", "a 100 MB file", "unreadable", 1, "over the limit", make="sparse",
    size=100 << 20, head="")

# ---------------------------------------------------------------- datasets (ImageFolder trees, made by the test)
add("dataset", "empty", "an empty folder", "datasetTooSmall", 1, "found 0 class folder(s)", dataset="empty")
add("dataset", "one-class", "a single class", "datasetTooSmall", 1, "found 1 class folder(s)",
    dataset="one-class")
add("dataset", "no-images", "class folders holding only text, pipes, loops and locked files", "datasetTooSmall",
    1, "found 0 class folder(s)", dataset="no-images")
add("dataset", "not-a-folder", "a file where the dataset folder should be", "datasetUnreadable", 1,
    "no such folder", dataset="file")
add("dataset", "traps-beside-photos", "two good classes with a pipe, a link loop, a self-link, an empty and a "
    "locked file, and a folder named .jpg", "ok", 0, "", dataset="traps")

(out / "manifest.json").write_text(json.dumps({"entries": entries}, indent=1, ensure_ascii=False) + "\n")
print(f"{len(entries)} entries, {sum(1 for e in entries if (out / e['file']).is_file())} stored files")
