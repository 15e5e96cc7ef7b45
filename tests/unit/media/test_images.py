import io

import pytest
from PIL import Image

from bot.media.images import downscale_image
from bot.media.model import UnreadableFile
from tests.fakes.files import png_image


def test_a_large_photo_is_shrunk_to_the_longest_side_as_jpeg():
    image = downscale_image(png_image(3000, 1500), max_side=1024, max_pixels=50_000_000)
    assert (image.width, image.height, image.mime_type) == (1024, 512, "image/jpeg")
    with Image.open(io.BytesIO(image.data)) as decoded:
        assert decoded.format == "JPEG" and decoded.size == (1024, 512)


def test_a_small_image_keeps_its_size_and_transparency_stays_png():
    out = io.BytesIO()
    Image.new("RGBA", (40, 30), (0, 0, 0, 0)).save(out, format="PNG")
    image = downscale_image(out.getvalue(), max_side=1024, max_pixels=50_000_000)
    assert (image.width, image.height, image.mime_type) == (40, 30, "image/png")


def test_an_image_over_the_pixel_limit_is_refused_naming_the_limit():
    with pytest.raises(UnreadableFile, match=r"media\.imageMaxPixels"):
        downscale_image(png_image(400, 300), max_side=1024, max_pixels=100_000)


def test_bytes_that_are_no_image_are_refused():
    with pytest.raises(UnreadableFile, match="couldn't open this image"):
        downscale_image(b"GIF89a but not really", max_side=1024, max_pixels=50_000_000)
