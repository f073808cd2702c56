"""Writes every kind of image DedogImage must read, plus the pixels it must produce.

For each fixture NAME.{jpg,png} there is NAME.rgb (raw 8-bit RGB rows) and an entry in manifest.json with its
size and the allowed per-channel difference (0 for PNG, 1 for JPEG, whose decoders may round IDCT
output differently). Bad inputs are listed with the error they must raise.
"""
import io, json, struct, sys, zlib
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


def save_expected(name, rgb, tolerance):
    rgb = np.ascontiguousarray(rgb.astype(np.uint8))
    (out / f"{name}.rgb").write_bytes(rgb.tobytes())
    manifest["images"].append({"file": name, "width": int(rgb.shape[1]), "height": int(rgb.shape[0]),
                               "tolerance": tolerance})


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

(out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
print(f"wrote {len(manifest['images'])} images and {len(manifest['bad'])} bad inputs to {out}")
