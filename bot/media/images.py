"""A photo made small enough for the model: its longest side at most `max_side` pixels.

Pure and synchronous: `MediaReader` runs it in a child process. The size in the file's header
is checked before anything is decoded, so a decompression bomb is refused, not unpacked.
"""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING

from bot.i18n.catalogue import media as texts
from bot.media.model import PreparedImage, UnreadableFile

if TYPE_CHECKING:
    from PIL import Image

JPEG_QUALITY = 85


def downscale_image(data: bytes, max_side: int, max_pixels: int) -> PreparedImage:
    """`data` as a JPEG (PNG when it has transparency) no larger than `max_side` on its
    longest side; raises `UnreadableFile` for a damaged, unknown or oversized image."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = max_pixels  # Pillow's own check, for formats read lazily
    try:
        with warnings.catch_warnings():  # Pillow warns of what the next lines refuse anyway
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
        with image:
            width, height = image.size
            if width * height > max_pixels:
                raise UnreadableFile(texts.image_too_large(width, height, max_pixels))
            image.draft("RGB", (max_side, max_side))  # JPEG: decode at a fraction of the size
            image.seek(0)
            picture = ImageOps.exif_transpose(image)
            picture.thumbnail((max_side, max_side))
            return _encoded(picture)
    except UnreadableFile:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as exc:
        raise UnreadableFile(texts.image_unreadable(type(exc).__name__)) from exc


def _encoded(picture: Image.Image) -> PreparedImage:
    out = io.BytesIO()
    if picture.mode in ("RGBA", "LA") or "transparency" in picture.info:
        picture.save(out, format="PNG", optimize=True)
        mime = "image/png"
    else:
        picture.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY)
        mime = "image/jpeg"
    return PreparedImage(out.getvalue(), mime, picture.width, picture.height)
