"""Writes every kind of image DedogImage must read, plus the pixels it must produce.

For each fixture NAME.{jpg,png,webp,heic,avif} there is NAME.rgb (raw 8-bit RGB rows) and an entry in
manifest.json with its size, the allowed per-channel difference (0 for PNG and lossless WebP/HEIC/AVIF, 1 for JPEG,
whose decoders may round IDCT output differently) and, for lossy formats, the allowed mean difference: their
expected pixels are the encoder's input, so the bound says the decoder's output is that picture, not just a picture.
Bad inputs are listed with the error they must raise.

WebP, HEIC and AVIF files come from Debian's encoders (cwebp, webpmux and img2webp from `webp`; heif-enc from
`libheif-examples`), which the script asks for by name. HEIF rotation and mirroring (irot/imir) are written here,
box by box, since heif-enc writes none.
"""
import io, json, shutil, struct, subprocess, sys, tempfile, zlib
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
for old in out.iterdir():
    old.unlink()
manifest = {"images": [], "bad": []}
rng = np.random.default_rng(20261122)
W, H = 13, 9  # odd sizes catch stride and padding mistakes


def save_expected(name, rgb, tolerance, mean=None):
    rgb = np.ascontiguousarray(rgb.astype(np.uint8))
    (out / f"{name}.rgb").write_bytes(rgb.tobytes())
    entry = {"file": name, "width": int(rgb.shape[1]), "height": int(rgb.shape[0]), "tolerance": tolerance}
    if mean is not None:
        entry["meanTolerance"] = mean
    manifest["images"].append(entry)


# ---------- PNG, written by hand so every colour type and bit depth is exact ----------
def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_bytes(width, height, depth, colour_type, rows, palette=None, trns=None):
    raw = b"".join(b"\x00" + r for r in rows)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0))
    if palette is not None:
        data += chunk(b"PLTE", bytes(palette.flatten().tolist()))
    if trns is not None:
        data += chunk(b"tRNS", trns)
    return data + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def pack_bits(values, depth):
    """Packs a row of small integers MSB first, as PNG does for depths below 8."""
    per = 8 // depth
    out_row = bytearray()
    for i in range(0, len(values), per):
        byte = 0
        group = list(values[i:i + per]) + [0] * (per - len(values[i:i + per]))
        for v in group:
            byte = (byte << depth) | int(v)
        out_row.append(byte)
    return bytes(out_row)


def to8(v, depth):
    """A sample of `depth` bits as 8 bits, as libpng scales it (rounded)."""
    return np.floor(v.astype(np.float64) * 255 / (2 ** depth - 1) + 0.5)


def composite(rgb8, a8, bg=255):
    return np.floor((rgb8 * a8 + bg * (255 - a8) + 127) / 255)


def write_png(name, data, expected):
    (out / f"{name}.png").write_bytes(data)
    save_expected(name, expected, 0)  # lossless, and 16 → 8 bits rounds exactly like libpng


for depth in (1, 2, 4, 8, 16):
    g = rng.integers(0, 2 ** depth, size=(H, W))
    if depth < 8:
        rows = [pack_bits(r, depth) for r in g]
    elif depth == 8:
        rows = [bytes(r.astype(np.uint8)) for r in g]
    else:
        rows = [r.astype(">u2").tobytes() for r in g]
    e = to8(g, depth)
    write_png(f"png-grey{depth}", png_bytes(W, H, depth, 0, rows), np.stack([e] * 3, -1))

for depth in (8, 16):
    dt = np.uint8 if depth == 8 else ">u2"
    g = rng.integers(0, 2 ** depth, size=(H, W))
    a = rng.integers(0, 2 ** depth, size=(H, W))
    a[0, :] = 2 ** depth - 1
    a[1, :] = 0
    rows = [np.stack([gr, ar], -1).astype(dt).tobytes() for gr, ar in zip(g, a)]
    e = composite(to8(g, depth), to8(a, depth))
    write_png(f"png-greyalpha{depth}", png_bytes(W, H, depth, 4, rows), np.stack([e] * 3, -1))

    rgb = rng.integers(0, 2 ** depth, size=(H, W, 3))
    rows = [r.astype(dt).tobytes() for r in rgb]
    write_png(f"png-rgb{depth}", png_bytes(W, H, depth, 2, rows), to8(rgb, depth))

    a = rng.integers(0, 2 ** depth, size=(H, W, 1))
    a[0] = 2 ** depth - 1
    a[1] = 0
    rows = [r.astype(dt).tobytes() for r in np.concatenate([rgb, a], -1)]
    write_png(f"png-rgba{depth}", png_bytes(W, H, depth, 6, rows), composite(to8(rgb, depth), to8(a, depth)))

for depth in (1, 2, 4, 8):
    n = 2 ** depth
    palette = rng.integers(0, 256, size=(n, 3))
    idx = rng.integers(0, n, size=(H, W))
    rows = [pack_bits(r, depth) if depth < 8 else bytes(r.astype(np.uint8)) for r in idx]
    write_png(f"png-palette{depth}", png_bytes(W, H, depth, 3, rows, palette=palette), palette[idx])

n = 16
palette = rng.integers(0, 256, size=(n, 3))
alpha = rng.integers(0, 256, size=n)
idx = rng.integers(0, n, size=(H, W))
rows = [pack_bits(r, 4) for r in idx]
write_png("png-palette4-trns", png_bytes(W, H, 4, 3, rows, palette=palette, trns=bytes(alpha.tolist())),
          composite(palette[idx], alpha[idx][..., None]))

# ---------- JPEG, through Pillow (libjpeg-turbo, islow IDCT, fancy upsampling: the decoder we use) ----------
yy, xx = np.mgrid[0:48, 0:64]
smooth = np.stack([xx * 4, yy * 5, 255 - xx * 2 - yy * 2], -1).clip(0, 255).astype(np.uint8)


def write_jpeg(name, img, **kw):
    buf = io.BytesIO()
    img.save(buf, "JPEG", **kw)
    (out / f"{name}.jpg").write_bytes(buf.getvalue())
    decoded = Image.open(io.BytesIO(buf.getvalue()))
    decoded = ImageOps.exif_transpose(decoded).convert("RGB") if decoded.mode != "CMYK" else decoded
    return decoded


def expect_jpeg(name, decoded):
    save_expected(name, np.asarray(decoded.convert("RGB")), 1)


base = Image.fromarray(smooth)
expect_jpeg("jpeg-baseline", write_jpeg("jpeg-baseline", base, quality=90))
expect_jpeg("jpeg-progressive", write_jpeg("jpeg-progressive", base, quality=90, progressive=True))
expect_jpeg("jpeg-grey", write_jpeg("jpeg-grey", base.convert("L"), quality=90))
# Adobe CMYK (Pillow writes inverted values with an APP14 marker, as Photoshop does). Expected: the CMYK that
# Pillow decodes, turned to RGB as R = (255 - C)(255 - K) / 255.
cmyk = write_jpeg("jpeg-cmyk", base.convert("CMYK"), quality=95)
c = np.asarray(cmyk).astype(np.float64)
save_expected("jpeg-cmyk", np.floor((255 - c[..., :3]) * (255 - c[..., 3:]) / 255 + 0.5), 1)

# EXIF orientation: an asymmetric picture (a bright corner top-left, a bar along the top) stored as a camera
# would store it for each orientation. Decoded and turned upright, every one must equal `upright`.
upright = np.zeros((24, 32, 3), np.uint8)
upright[:, :] = (40, 80, 160)
upright[:4, :] = (250, 250, 0)
upright[:8, :8] = (255, 0, 0)
up = Image.fromarray(upright)
stored_for = {1: lambda im: im, 2: ImageOps.mirror, 3: lambda im: im.rotate(180),
              4: ImageOps.flip, 5: lambda im: im.transpose(Image.Transpose.TRANSPOSE),
              6: lambda im: im.rotate(90, expand=True), 7: lambda im: im.transpose(Image.Transpose.TRANSVERSE),
              8: lambda im: im.rotate(270, expand=True)}
for o, make in stored_for.items():
    exif = Image.Exif()
    exif[0x0112] = o
    decoded = write_jpeg(f"jpeg-exif{o}", make(up), quality=95, exif=exif.tobytes())
    assert decoded.size == up.size, (o, decoded.size)
    expect_jpeg(f"jpeg-exif{o}", decoded)

# A larger JPEG for DCT scaling: 800x600, asked for a shorter side of at least 100 -> 1/4 scale, 200x150.
yy, xx = np.mgrid[0:600, 0:800]
big = np.stack([xx * 255 // 800, yy * 255 // 600, (xx + yy) * 255 // 1400], -1).astype(np.uint8)
Image.fromarray(big).save(out / "jpeg-800x600.jpg", quality=80)


# JPEG warnings that libjpeg-turbo, Pillow and browsers show through: jpeg-baseline with one oddity each, which must
# decode to the same pixels. Modelled on decoder test-suite files (extraneous bytes before a marker are what some
# cameras and editors write).
baseline = (out / "jpeg-baseline.jpg").read_bytes()
baseline_pixels = np.frombuffer((out / "jpeg-baseline.rgb").read_bytes(), np.uint8).reshape(48, 64, 3)


def harmless(name, data):
    (out / f"{name}.jpg").write_bytes(data)
    save_expected(name, baseline_pixels, 1)


def before(marker, data, extra):
    at = data.index(marker) if marker != b"\xff\xd9" else data.rindex(marker)
    return data[:at] + extra + data[at:]


harmless("warn-bytes-before-dqt", before(b"\xff\xdb", baseline, b"\x00\x00\x00"))
harmless("warn-bytes-before-sos", before(b"\xff\xda", baseline, b"\x20" * 7))
harmless("warn-bytes-before-eoi", before(b"\xff\xd9", baseline, b"\x00" * 16))
jfif = bytearray(baseline)
at = baseline.index(b"JFIF\x00")
jfif[at + 5] = 2  # JFIF 2.01: a revision libjpeg does not know
harmless("warn-jfif-revision", bytes(jfif))
sos = bytearray(baseline)
at = baseline.index(b"\xff\xda")
components = sos[at + 4]
sos[at + 5 + 2 * components + 1] = 0x3E  # Se of a sequential scan must be 63; libjpeg warns and uses 63
harmless("warn-sos-parameters", bytes(sos))

# ---------- WebP, HEIC, AVIF through Debian's encoders ----------
for tool in ("cwebp", "webpmux", "img2webp", "heif-enc"):
    if shutil.which(tool) is None:
        raise SystemExit(f"{tool} is missing: apt-get install webp libheif-examples")
work = Path(tempfile.mkdtemp())


def run(*args):
    subprocess.run([str(a) for a in args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def png_of(name, array):
    path = work / f"{name}.png"
    Image.fromarray(array).save(path)
    return path


noise = rng.integers(0, 256, size=(H, W, 3)).astype(np.uint8)
noise_alpha = rng.integers(0, 256, size=(H, W, 1)).astype(np.uint8)
noise_alpha[0] = 255
noise_alpha[1] = 0
noise_rgba = np.concatenate([noise, noise_alpha], -1)
with_alpha = composite(noise.astype(np.float64), noise_alpha.astype(np.float64))

# WebP: lossless is exact (-exact keeps the colour of fully transparent pixels); lossy is bounded.
run("cwebp", "-quiet", "-lossless", "-exact", png_of("noise", noise), "-o", out / "webp-lossless.webp")
save_expected("webp-lossless", noise, 0)
run("cwebp", "-quiet", "-lossless", "-exact", png_of("noise-rgba", noise_rgba), "-o", out / "webp-alpha.webp")
save_expected("webp-alpha", with_alpha, 0)
run("cwebp", "-quiet", "-q", "90", png_of("smooth", smooth), "-o", out / "webp-lossy.webp")
save_expected("webp-lossy", smooth, 24, mean=2.0)
# An animation: the first frame is what dedog classifies.
second = 255 - noise
run("img2webp", "-lossless", png_of("frame1", noise), png_of("frame2", second),
    "-o", out / "webp-animated.webp")
save_expected("webp-animated", noise, 0)


def tiff_orientation(o):
    return b"II*\x00" + struct.pack("<IHHHII", 8, 1, 0x0112, 3, 1, o) + struct.pack("<I", 0)


# EXIF orientation in WebP's EXIF chunk: the same stored pictures as the JPEG fixtures, lossless.
for o, make in stored_for.items():
    plain = work / f"exif{o}.webp"
    run("cwebp", "-quiet", "-lossless", "-exact", png_of(f"exif{o}", np.asarray(make(up))), "-o", plain)
    (work / f"exif{o}.tiff").write_bytes(tiff_orientation(o))
    run("webpmux", "-set", "exif", work / f"exif{o}.tiff", plain, "-o", out / f"webp-exif{o}.webp")
    save_expected(f"webp-exif{o}", upright, 0)


# HEIF: "lossless" with identity matrix coefficients and no chroma subsampling (RGB coded as GBR) comes within 1 of
# the input (the round trip through heif-enc and heif-convert shows the same 1).
def heif(name, array, *options):
    run("heif-enc", *options, "-o", out / name, png_of(name, array))


lossless = ("-L", "-p", "chroma=444", "--matrix_coefficients", "0")
for ext in ("heic", "avif"):
    heif(f"{ext}-lossless.{ext}", noise, *lossless)
    save_expected(f"{ext}-lossless", noise, 1)
    heif(f"{ext}-lossy.{ext}", smooth, "-q", "90")
    save_expected(f"{ext}-lossy", smooth, 24, mean=2.0)
    heif(f"{ext}-alpha.{ext}", noise_rgba, *lossless)
    save_expected(f"{ext}-alpha", with_alpha, 1)


def boxes(data, start, end):
    """(type, start, size, header size) of each box in data[start:end]."""
    at = start
    while at < end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        yield kind, at, size
        at += size


def box(kind, body):
    return struct.pack(">I4s", 8 + len(body), kind) + body


def with_transforms(data, properties):
    """The HEIF file `data` with `properties` (irot/imir boxes, in order) added to its primary item.

    Rewrites ipco (new properties at its end), ipma (associations, marked essential) and iloc (extent offsets
    move by the bytes meta grew, as mdat follows it)."""
    top = {k: (a, n) for k, a, n in boxes(data, 0, len(data))}
    meta_at, meta_size = top[b"meta"]
    assert top[b"mdat"][0] > meta_at
    children = {k: (a, n) for k, a, n in boxes(data, meta_at + 12, meta_at + meta_size)}
    primary = struct.unpack(">H", data[children[b"pitm"][0] + 12:children[b"pitm"][0] + 14])[0]

    iprp_at, iprp_size = children[b"iprp"]
    parts = {k: (a, n) for k, a, n in boxes(data, iprp_at + 8, iprp_at + iprp_size)}
    ipco_at, ipco_size = parts[b"ipco"]
    existing = len(list(boxes(data, ipco_at + 8, ipco_at + ipco_size)))
    ipco = box(b"ipco", data[ipco_at + 8:ipco_at + ipco_size] + b"".join(properties))
    ipma_at, ipma_size = parts[b"ipma"]
    version, flags = data[ipma_at + 8], int.from_bytes(data[ipma_at + 9:ipma_at + 12], "big")
    assert version == 0 and flags & 1 == 0
    body = bytearray(data[ipma_at + 12:ipma_at + ipma_size])
    count = struct.unpack(">I", body[:4])[0]
    at, rebuilt = 4, bytearray(body[:4])
    for _ in range(count):
        item, n = struct.unpack(">HB", body[at:at + 3])
        associations = body[at + 3:at + 3 + n]
        if item == primary:
            associations += bytes(0x80 | (existing + 1 + i) for i in range(len(properties)))
        rebuilt += struct.pack(">HB", item, len(associations)) + associations
        at += 3 + n
    ipma = box(b"ipma", bytes([version]) + flags.to_bytes(3, "big") + bytes(rebuilt))
    iprp = box(b"iprp", ipco + ipma)
    grown = len(iprp) - iprp_size

    iloc_at, iloc_size = children[b"iloc"]
    iloc = bytearray(data[iloc_at:iloc_at + iloc_size])
    version = iloc[8]
    offset_size, length_size, base_size = iloc[12] >> 4, iloc[12] & 15, iloc[13] >> 4
    index_size = iloc[13] & 15 if version in (1, 2) else 0
    at = 14
    items = struct.unpack(">H", iloc[at:at + 2])[0]
    at += 2
    for _ in range(items):
        at += 2  # item id
        method = 0
        if version in (1, 2):
            method = struct.unpack(">H", iloc[at:at + 2])[0] & 15
            at += 2
        at += 2  # data reference index
        base = int.from_bytes(iloc[at:at + base_size], "big") if base_size else 0
        if method == 0 and base:  # offsets are base + extent offset: move the base only
            iloc[at:at + base_size] = (base + grown).to_bytes(base_size, "big")
        at += base_size
        extents = struct.unpack(">H", iloc[at:at + 2])[0]
        at += 2
        for _ in range(extents):
            at += index_size
            if method == 0 and not base and offset_size:
                offset = int.from_bytes(iloc[at:at + offset_size], "big")
                iloc[at:at + offset_size] = (offset + grown).to_bytes(offset_size, "big")
            at += offset_size + length_size

    meta_body = b""
    for kind, a, n in boxes(data, meta_at + 12, meta_at + meta_size):
        meta_body += iprp if kind == b"iprp" else bytes(iloc) if kind == b"iloc" else data[a:a + n]
    meta = box(b"meta", data[meta_at + 8:meta_at + 12] + meta_body)
    return data[:meta_at] + meta + data[meta_at + meta_size:]


# irot turns anticlockwise by 90° steps. imir's bit is read as HEIF's Amendment 2 reads it (as iPhones write it and
# libheif and libavif decode it): 0 exchanges top and bottom, 1 exchanges left and right. The 2017 text's "vertical
# (0) axis" was read the other way round by some; see MPEGGroup/FileFormat issue 22 and libavif pull request 665.
# Each file stores `upright` as a camera would and carries the transforms that show it upright again.
irot = lambda k: box(b"irot", bytes([k]))
imir = lambda axis: box(b"imir", bytes([axis]))
heif_transforms = {
    "rot90": (lambda a: np.rot90(a, -1), [irot(1)]),
    "rot180": (lambda a: np.rot90(a, 2), [irot(2)]),
    "rot270": (lambda a: np.rot90(a, 1), [irot(3)]),
    "mirror": (lambda a: a[:, ::-1], [imir(1)]),
    "flip": (lambda a: a[::-1], [imir(0)]),
    "rot90-mirror": (lambda a: np.rot90(a, -1)[:, ::-1], [imir(1), irot(1)]),
}
for name, (stored, properties) in heif_transforms.items():
    heif(f"heic-{name}.heic", np.ascontiguousarray(stored(upright)), *lossless)
    path = out / f"heic-{name}.heic"
    path.write_bytes(with_transforms(path.read_bytes(), properties))
    save_expected(f"heic-{name}", upright, 1)
shutil.rmtree(work)

# ---------- bad inputs: file, error case ----------
good_jpeg = (out / "jpeg-baseline.jpg").read_bytes()
good_png = (out / "png-rgb8.png").read_bytes()


def bad(name, data, error):
    (out / name).write_bytes(data)
    manifest["bad"].append({"file": name, "error": error})


bad("bad-empty.jpg", b"", "empty")
bad("bad-text.jpg", b"This is not a photo of a dog.\n", "unsupportedFormat")
sos = good_jpeg.index(b"\xff\xda")
bad("bad-truncated.jpg", good_jpeg[: sos + (len(good_jpeg) - sos) // 2], "truncated")
bad("bad-truncated.png", good_png[: len(good_png) // 2], "truncated")
# Damage inside the entropy-coded data: stuffed 0xFF bytes are all one bits, which no Huffman code is.
scan = good_jpeg.index(b"\xff\xda")
middle = scan + (len(good_jpeg) - scan) // 2
bad("bad-huffman.jpg", good_jpeg[:middle] + b"\xff\x00" * 6 + good_jpeg[middle + 12:], "corrupt")
bad("bad-header.jpg", good_jpeg[:2] + b"\xff\xc0\x00\x05garbage" + b"\x00" * 40 + b"\xff\xd9", "corrupt")
broken_crc = bytearray(good_png)
broken_crc[29] ^= 0xFF  # inside IHDR's CRC
bad("bad-crc.png", bytes(broken_crc), "corrupt")
# Decompression bombs: valid headers declaring 60000 x 60000 pixels, with almost no data behind them.
sof = good_jpeg.index(b"\xff\xc0")
bomb = bytearray(good_jpeg)
bomb[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
bad("bad-bomb.jpg", bytes(bomb), "tooLarge")
bad("bad-bomb.png", b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0))
    + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""), "tooLarge")

# WebP, HEIC, AVIF: cut short, declaring gigapixels, damaged inside.
for name in ("webp-lossy.webp", "heic-lossy.heic", "avif-lossy.avif"):
    data = (out / name).read_bytes()
    stem, ext = name.split(".")
    bad(f"bad-truncated-{stem}.{ext}", data[: len(data) * 2 // 3], "truncated")
# A lossless bitstream whose header declares the format's largest picture, 16384 × 16384 (14 bits each, minus 1).
webp = bytearray((out / "webp-lossless.webp").read_bytes())
assert webp[12:16] == b"VP8L" and webp[20] == 0x2F
fields = int.from_bytes(webp[21:25], "little")
fields = (fields & ~((1 << 28) - 1)) | (16383 << 14) | 16383
webp[21:25] = fields.to_bytes(4, "little")
bad("bad-bomb.webp", bytes(webp), "tooLarge")
heic = (out / "heic-lossy.heic").read_bytes()
bomb = bytearray(heic)
at = heic.find(b"ispe")
while at >= 0:  # the picture's and the alpha's or thumbnail's sizes alike
    bomb[at + 8:at + 16] = struct.pack(">II", 30000, 30000)
    at = heic.find(b"ispe", at + 4)
bad("bad-bomb.heic", bytes(bomb), "tooLarge")
# The first coded picture's headers scrambled (libde265 shrugs off damage further in, as browsers do).
broken = bytearray(heic)
mdat = heic.index(b"mdat")
for i in range(mdat + 10, mdat + 48):
    broken[i] ^= 0xFF
bad("bad-damaged.heic", bytes(broken), "corrupt")

(out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
print(f"wrote {len(manifest['images'])} images and {len(manifest['bad'])} bad inputs to {out}")
