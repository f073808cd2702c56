"""A "real photo" made from a data set's stretched square by transforms, for check sets built from training photos
(make_own_breed_sets.py, make_teaching_sets.py): a random frame (aspect 0.6-1.8, 55-100 % of the area), resized so the
longer side is 180-640 px, brightness/contrast/saturation 0.75-1.25, white balance gains 0.92-1.08, blur (radius
0-1.2) in half of them, JPEG quality 35-90."""
import os
from PIL import Image, ImageEnhance, ImageFilter


def transform(source, dest, rng):
    """Writes `dest` (a JPEG) made from the photo at `source`, drawing from `rng` (a random.Random)."""
    im = Image.open(source).convert("RGB")
    w, h = im.size
    aspect = rng.uniform(0.6, 1.8); area = rng.uniform(0.55, 1.0) * w * h
    cw = min(w, int(round((area * aspect) ** 0.5))); ch = min(h, int(round((area / aspect) ** 0.5)))
    x = rng.randint(0, w - cw); y = rng.randint(0, h - ch)
    im = im.crop((x, y, x + cw, y + ch))
    longer = rng.randint(180, 640); s = longer / max(cw, ch)
    im = im.resize((max(1, round(cw * s)), max(1, round(ch * s))), Image.BICUBIC)
    im = ImageEnhance.Brightness(im).enhance(rng.uniform(0.75, 1.25))
    im = ImageEnhance.Contrast(im).enhance(rng.uniform(0.75, 1.25))
    im = ImageEnhance.Color(im).enhance(rng.uniform(0.75, 1.25))
    gains = [rng.uniform(0.92, 1.08) for _ in range(3)]
    im = Image.merge("RGB", [b.point(lambda v, g=g: min(255, int(v * g))) for b, g in zip(im.split(), gains)])
    if rng.random() < 0.5: im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0, 1.2)))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    im.save(dest, "JPEG", quality=rng.randint(35, 90))
