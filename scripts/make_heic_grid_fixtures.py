"""HEICs as phones write them (a grid of HEVC tiles, a thumbnail beside it), for the tests of dedog's own HEVC tile
decoder and of which picture classify reads. Writes into Tests/DedogImageTests/Fixtures:

- heic-grid.heic: a smooth 232x150 picture as 4x3 tiles of 64 (the last row and column cut by the grid's output
  size), with heic-grid.rgb its pixels before coding;
- heic-grid-rot90-mirror.heic: the same picture stored turned and mirrored, with irot and imir that show it upright;
- heic-grid-bt709.heic: heic-grid with an nclx colour box saying BT.709 video range (heif-enc writes none, and
  the decoders then assume BT.601 full range): decoded as that box says, so not the picture's own colours;
- phone-beagle.jpg, phone-beagle-grid.heic, phone-beagle-grid-thumbnail.heic: the bundled beagle as a 768x768
  photo, as a JPEG (quality 90), as a grid of 256-pixel tiles, and the same grid with a 320x320 thumbnail;
- phone-thumbnail-differs.heic: a 1024x768 photo of an empty field in lawn colours whose 320x240 thumbnail shows the
  bundled beagle at the left: whatever is decided from the thumbnail sees a dog, and a closer look that reads the
  photo itself finds none.

Run by scripts/make-heic-grid-fixtures (needs heif-enc from Debian's libheif-examples, Pillow and numpy).
"""
import struct
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
from heif_grid import _box, grid_heic  # noqa: E402

out = Path(sys.argv[1])
root = Path(__file__).resolve().parent.parent

# A smooth picture: gradients and a few soft discs, so lossy coding keeps it close.
h, w = 150, 232
yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
picture = np.stack([xx / w * 200 + 30, yy / h * 180 + 40, (xx + yy) / (w + h) * 120 + 80], axis=-1)
for cx, cy, r, colour in ((60, 50, 30, (230, 60, 50)), (170, 100, 35, (40, 90, 220)), (120, 30, 20, (250, 240, 60))):
    disc = np.clip(1.5 - np.hypot(xx - cx, yy - cy) / r, 0, 1)[..., None]
    picture = picture * (1 - disc) + np.array(colour, np.float32) * disc
picture = picture.clip(0, 255).astype(np.uint8)
(out / "heic-grid.rgb").write_bytes(picture.tobytes())
(out / "heic-grid.heic").write_bytes(grid_heic(picture, tile=64, quality=90))

# Stored as a camera would hold it, turned a quarter clockwise and mirrored; imir (left-right) then irot (a quarter
# anticlockwise) show it upright, as in make_image_fixtures.py's rot90-mirror.
stored = np.ascontiguousarray(np.rot90(picture, -1)[:, ::-1])
transforms = [_box(b"imir", bytes([1])), _box(b"irot", bytes([1]))]
(out / "heic-grid-rot90-mirror.heic").write_bytes(grid_heic(stored, tile=64, quality=90, transforms=transforms))
# nclx: primaries 1, transfer 13, matrix 1 (BT.709), full range 0.
nclx = _box(b"colr", b"nclx" + struct.pack(">HHHB", 1, 13, 1, 0))
(out / "heic-grid-bt709.heic").write_bytes(grid_heic(picture, tile=64, quality=90, colr=nclx))

beagle = Image.open(root / "datasets/samples/beagle.jpg").convert("RGB")
photo = beagle.resize((768, 768), Image.BICUBIC)
photo.save(out / "phone-beagle.jpg", quality=90)
pixels = np.asarray(photo)
(out / "phone-beagle-grid.heic").write_bytes(grid_heic(pixels, tile=256, quality=60))
small = np.asarray(photo.resize((320, 320), Image.BICUBIC))
(out / "phone-beagle-grid-thumbnail.heic").write_bytes(grid_heic(pixels, tile=256, quality=60, thumbnail=small))

# The field: lawn colours in a gentle gradient; the thumbnail has the beagle (110x110) at its left.
fy, fx = np.mgrid[0:768, 0:1024].astype(np.float32)
field = np.stack([80 + fx / 1024 * 30, 110 + fy / 768 * 40, 60 + fx / 1024 * 20], axis=-1).astype(np.uint8)
thumbnail = np.asarray(Image.fromarray(field).resize((320, 240), Image.BICUBIC)).copy()
thumbnail[70:180, 20:130] = np.asarray(beagle.resize((110, 110), Image.BICUBIC))
(out / "phone-thumbnail-differs.heic").write_bytes(grid_heic(field, tile=256, quality=60, thumbnail=thumbnail))
