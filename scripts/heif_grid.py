"""HEIC files as phones write them: the photo as a grid of HEVC tiles, with a thumbnail beside it.

libheif 1.15's encoder (Debian's heif-enc) writes one coded picture per image and no grids, so each tile and the
thumbnail are coded by heif-enc on its own, and the file around them is written here, box by box (ISO/IEC
23008-12): a `grid` item (the primary, its tiles hidden `hvc1` items named by a `dimg` reference, row by row), the
thumbnail an `hvc1` item with a `thmb` reference to the grid, the grid's rows, columns and output size in `idat`.
Each coded item keeps heif-enc's own `hvcC`, `ispe` and `colr` properties; the grid gets `ispe`, `colr` and any
`irot`/`imir` given.

    from heif_grid import grid_heic
    data = grid_heic(pixels, tile=512, quality=50, thumbnail=small_pixels)   # numpy uint8 H×W×3 arrays

Used by scripts/make_image_fixtures.py (test fixtures) and scripts/bench-heic (phone-size photos).
"""
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image


def _boxes(data, start, end):
    """(type, start, size) of each box in data[start:end]."""
    at = start
    while at < end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
        yield kind, at, size
        at += size


def _box(kind, body):
    return struct.pack(">I4s", 8 + len(body), kind) + body


def _full_box(kind, version, flags, body):
    return _box(kind, bytes([version]) + flags.to_bytes(3, "big") + body)


def _coded(pixels, quality, work, name):
    """heif-enc's coding of `pixels`: (properties hvcC, ispe, colr as whole boxes, the item's coded data)."""
    png, heic = work / f"{name}.png", work / f"{name}.heic"
    Image.fromarray(pixels).save(png)
    subprocess.run(["heif-enc", "-q", str(quality), "-o", str(heic), str(png)], check=True, capture_output=True)
    data = heic.read_bytes()
    top = {k: (a, n) for k, a, n in _boxes(data, 0, len(data))}
    meta_at, meta_size = top[b"meta"]
    children = {k: (a, n) for k, a, n in _boxes(data, meta_at + 12, meta_at + meta_size)}
    iprp_at, iprp_size = children[b"iprp"]
    parts = {k: (a, n) for k, a, n in _boxes(data, iprp_at + 8, iprp_at + iprp_size)}
    ipco_at, ipco_size = parts[b"ipco"]
    properties = {k: data[a:a + n] for k, a, n in _boxes(data, ipco_at + 8, ipco_at + ipco_size)}
    # The one item's extents (heif-enc 1.15: iloc version 0 or 1, one item, one extent, offsets in the file).
    iloc_at, _ = children[b"iloc"]
    version = data[iloc_at + 8]
    sizes = data[iloc_at + 12:iloc_at + 14]
    offset_size, length_size, base_size = sizes[0] >> 4, sizes[0] & 15, sizes[1] >> 4
    at = iloc_at + 14
    count = struct.unpack(">H", data[at:at + 2])[0]
    assert count == 1, f"{heic}: {count} items"
    at += 2 + 2 + (2 if version in (1, 2) else 0) + 2
    base = int.from_bytes(data[at:at + base_size], "big") if base_size else 0
    at += base_size
    extents = struct.unpack(">H", data[at:at + 2])[0]
    at += 2
    coded = b""
    for _ in range(extents):
        offset = int.from_bytes(data[at:at + offset_size], "big")
        length = int.from_bytes(data[at + offset_size:at + offset_size + length_size], "big")
        coded += data[base + offset:base + offset + length]
        at += offset_size + length_size
    return [properties[b"hvcC"], properties[b"ispe"], properties.get(b"colr")], coded


def _ispe(width, height):
    return _full_box(b"ispe", 0, 0, struct.pack(">II", width, height))


def grid_heic(pixels, tile=512, quality=50, thumbnail=None, transforms=(), thumbnail_transforms=None, colr=None):
    """The bytes of a HEIC whose primary image is `pixels` (H×W×3 uint8) as a grid of `tile`×`tile` tiles (the
    last row and column padded with their edge pixels, as encoders do, and cropped by the grid's output size), with
    `thumbnail` (another H×W×3 array, any picture) as its thumbnail when given. `transforms`: irot/imir boxes
    (whole boxes) for the grid, in order; the thumbnail gets `thumbnail_transforms` (the same by default). `colr`: a
    colour box (a whole `colr` box) for the grid and every coded item, instead of heif-enc's (1.15 writes none for
    8-bit input; the colour matrix is then the decoder's assumption)."""
    height, width = pixels.shape[:2]
    # heif-enc codes an odd-sized picture as an even one and a cropping 'iden' item, which a thumbnail cannot be here.
    assert tile % 2 == 0 and (thumbnail is None or all(side % 2 == 0 for side in thumbnail.shape[:2])), \
        "tiles and thumbnails need even sides"
    rows, columns = -(-height // tile), -(-width // tile)
    assert rows <= 256 and columns <= 256
    padded = np.pad(pixels, ((0, rows * tile - height), (0, columns * tile - width), (0, 0)), mode="edge")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        tiles = [_coded(np.ascontiguousarray(padded[r * tile:(r + 1) * tile, c * tile:(c + 1) * tile]), quality,
                        work, f"tile{r}-{c}") for r in range(rows) for c in range(columns)]
        small = _coded(np.ascontiguousarray(thumbnail), quality, work, "thumbnail") if thumbnail is not None else None
    if colr is not None:
        tiles = [([props[0], props[1], colr], data) for props, data in tiles]
        small = ([small[0][0], small[0][1], colr], small[1]) if small is not None else None

    # Properties: the tiles share the first tile's hvcC/ispe/colr (heif-enc codes equal tiles with equal
    # parameter sets; checked), then the grid's, then the thumbnail's.
    ipco = []

    def add(prop):
        ipco.append(prop)
        return len(ipco)  # 1-based index

    tile_props = [add(p) for p in tiles[0][0] if p is not None]
    for props, _ in tiles[1:]:
        assert props[:2] == tiles[0][0][:2], "tiles coded with different parameter sets"
    grid_props = [add(_ispe(width, height))]
    if tiles[0][0][2] is not None:
        grid_props.append(tile_props[2])
    grid_props += [add(t) for t in transforms]
    thumb_props = []
    if small is not None:
        thumb_props = [add(p) for p in small[0] if p is not None]
        thumb_props += [add(t) for t in (transforms if thumbnail_transforms is None else thumbnail_transforms)]

    grid_id = 1
    tile_ids = list(range(2, 2 + len(tiles)))
    thumb_id = tile_ids[-1] + 1 if small is not None else None

    hdlr = _full_box(b"hdlr", 0, 0, b"\0\0\0\0pict" + b"\0" * 12 + b"\0")
    pitm = _full_box(b"pitm", 0, 0, struct.pack(">H", grid_id))
    entries = [_full_box(b"infe", 2, 0, struct.pack(">HH", grid_id, 0) + b"grid" + b"\0")]
    entries += [_full_box(b"infe", 2, 1, struct.pack(">HH", i, 0) + b"hvc1" + b"\0") for i in tile_ids]  # hidden
    if thumb_id is not None:
        entries.append(_full_box(b"infe", 2, 0, struct.pack(">HH", thumb_id, 0) + b"hvc1" + b"\0"))
    iinf = _full_box(b"iinf", 0, 0, struct.pack(">H", len(entries)) + b"".join(entries))
    references = _box(b"dimg", struct.pack(">HH", grid_id, len(tile_ids)) + b"".join(struct.pack(">H", i) for i in tile_ids))
    if thumb_id is not None:
        references += _box(b"thmb", struct.pack(">HHH", thumb_id, 1, grid_id))
    iref = _full_box(b"iref", 0, 0, references)

    def association(item, indices):
        # hvcC and the transforms are essential; ispe and colr are not.
        marks = [(0x80 if ipco[i - 1][4:8] in (b"hvcC", b"irot", b"imir") else 0) | i for i in indices]
        return struct.pack(">HB", item, len(marks)) + bytes(marks)

    associations = [association(grid_id, grid_props)] + [association(i, tile_props) for i in tile_ids]
    if thumb_id is not None:
        associations.append(association(thumb_id, thumb_props))
    ipma = _full_box(b"ipma", 0, 0, struct.pack(">I", len(associations)) + b"".join(associations))
    iprp = _box(b"iprp", _box(b"ipco", b"".join(ipco)) + ipma)
    # ImageGrid: version 0, flags 1 (32-bit output size), rows - 1, columns - 1, output width and height.
    idat = _box(b"idat", struct.pack(">BBBBII", 0, 1, rows - 1, columns - 1, width, height))

    coded = [c for _, c in tiles] + ([small[1]] if small is not None else [])
    coded_ids = tile_ids + ([thumb_id] if thumb_id is not None else [])

    def iloc(mdat_start):
        # Version 1 (construction methods), 4-byte offsets and lengths, no base offset.
        body = struct.pack(">BB", 0x44, 0x00) + struct.pack(">H", 1 + len(coded))
        body += struct.pack(">HHHHII", grid_id, 1, 0, 1, 0, 12)  # method 1: in idat
        at = mdat_start
        for item, data in zip(coded_ids, coded):
            body += struct.pack(">HHHHII", item, 0, 0, 1, at, len(data))
            at += len(data)
        return _full_box(b"iloc", 1, 0, body)

    ftyp = _box(b"ftyp", b"heic" + struct.pack(">I", 0) + b"mif1heicmiaf")

    def meta(mdat_start):
        return _full_box(b"meta", 0, 0, hdlr + pitm + iinf + iref + iprp + idat + iloc(mdat_start))

    head = len(ftyp) + len(meta(0)) + 8  # the mdat header follows meta; meta's size does not depend on offsets
    mdat = _box(b"mdat", b"".join(coded))
    return ftyp + meta(head) + mdat
