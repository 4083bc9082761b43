#!/usr/bin/env python3
"""Makes the image-decoding test fixtures and their expected pixels.

1. Tiny images written by this script (public domain, generated from formulas) into
   Tests/YOLOTests/Fixtures/Image/: PNGs of every colour type and bit depth (some interlaced,
   one with a gAMA chunk), JPEGs with each EXIF orientation (both TIFF byte orders), gray,
   progressive, CMYK (Adobe), and a truncated JPEG.
2. Expected decodes, from OpenCV (independent of our code): cv2.imread(path, IMREAD_COLOR),
   which applies EXIF orientation, converted BGR -> RGB. For each file: width, height, sha256 of
   the RGB bytes (row-major, R G B interleaved), and 4x4-block means (for tolerant comparison
   where JPEG decoders may legitimately differ); small PNGs also every pixel and their alpha.
   Files OpenCV cannot read are marked "error".
   Written to fixtures.json (tiny fixtures) and edge.json (every file of /work/shared/data/edge).

Run with the reference venv (opencv-python-headless 4.14.0.94, numpy 2.4.6) plus Pillow:
    python scripts/make-image-fixtures.py [--edge /work/shared/data/edge]
"""
import argparse, hashlib, io, json, os, struct, zlib

import cv2
import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "YOLOTests", "Fixtures", "Image")


# MARK: expected values from OpenCV

def expected(path):
    """OpenCV's decode of `path` (upright), summarised."""
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    if bgr is None:
        return {"error": True}
    rgb = np.ascontiguousarray(bgr[..., ::-1])
    h, w = rgb.shape[:2]
    blocks = []
    for by in range(4):
        for bx in range(4):
            y0, y1 = by * h // 4, max((by + 1) * h // 4, by * h // 4 + 1)
            x0, x1 = bx * w // 4, max((bx + 1) * w // 4, bx * w // 4 + 1)
            blocks += [round(float(v), 3) for v in rgb[y0:y1, x0:x1].reshape(-1, 3).mean(axis=0)]
    out = {"width": w, "height": h, "sha256": hashlib.sha256(rgb.tobytes()).hexdigest(),
           "blockMeans": blocks}
    if path.endswith(".png") and w * h <= 1024:
        # Small PNGs also keep every pixel, and the alpha in 16-bit units when there is one, so
        # tests can bound per-pixel differences where exactness is not possible (16-bit + alpha).
        out["rgb"] = [int(v) for v in rgb.reshape(-1)]
        raw = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if raw.ndim == 3 and raw.shape[2] == 4:
            a = raw[..., 3].astype(np.uint32)
            out["alpha16"] = [int(v) for v in (a if raw.dtype == np.uint16 else a * 257).reshape(-1)]
    return out


# MARK: a small PNG writer (any colour type, 8/16 bit, optional Adam7, optional gAMA)

def png_bytes(samples, color_type, bit_depth, interlace=False, palette=None, trns=None, gamma=None):
    """samples: uint array HxWxC (C = channels of color_type), or HxW indices for palette."""
    h, w = samples.shape[:2]
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    def rows(sub):
        out = b""
        for row in sub:
            flat = row.reshape(-1)
            raw = flat.astype(">u2").tobytes() if bit_depth == 16 else flat.astype(np.uint8).tobytes()
            out += b"\x00" + raw
        return out
    if interlace:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        data = b"".join(rows(samples[y0::dy, x0::dx]) for x0, y0, dx, dy in passes
                        if samples[y0::dy, x0::dx].size)
    else:
        data = rows(samples)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, int(interlace)))
    if gamma is not None:
        out += chunk(b"gAMA", struct.pack(">I", gamma))
    if palette is not None:
        out += chunk(b"PLTE", bytes(np.asarray(palette, np.uint8).reshape(-1)))
    if trns is not None:
        out += chunk(b"tRNS", bytes(trns))
    return out + chunk(b"IDAT", zlib.compress(data)) + chunk(b"IEND", b"")


def pattern(h, w, c, maximum, seed):
    """A deterministic pattern touching the whole value range, including both ends."""
    y, x, ch = np.meshgrid(np.arange(h), np.arange(w), np.arange(c), indexing="ij")
    v = (x * 7919 + y * 104729 + ch * 15485863 + seed * 31) * 2654435761 % (maximum + 1)
    v[0, 0, :] = 0
    v[-1, -1, :] = maximum
    return v.astype(np.uint32)


def make_pngs():
    files = {}
    h, w = 5, 7
    # 1-bit gray is bit-packed: let Pillow write it.
    buf = io.BytesIO()
    Image.fromarray((pattern(h, w, 1, 1, 1)[..., 0] * 255).astype(np.uint8)).convert("1").save(buf, "PNG")
    files["png_gray1.png"] = buf.getvalue()
    files["png_gray8.png"] = png_bytes(pattern(h, w, 1, 255, 2), 0, 8)
    files["png_gray16.png"] = png_bytes(pattern(h, w, 1, 65535, 3), 0, 16)
    files["png_gray_alpha8.png"] = png_bytes(pattern(h, w, 2, 255, 4), 4, 8)
    files["png_gray_alpha16.png"] = png_bytes(pattern(h, w, 2, 65535, 5), 4, 16)
    files["png_rgb8.png"] = png_bytes(pattern(h, w, 3, 255, 6), 2, 8)
    files["png_rgb8_gamma.png"] = png_bytes(pattern(h, w, 3, 255, 7), 2, 8, gamma=100000)
    files["png_rgb8_interlaced.png"] = png_bytes(pattern(h, w, 3, 255, 8), 2, 8, interlace=True)
    files["png_rgb16.png"] = png_bytes(pattern(h, w, 3, 65535, 9), 2, 16)
    files["png_rgba8.png"] = png_bytes(pattern(h, w, 4, 255, 10), 6, 8)
    files["png_rgba16.png"] = png_bytes(pattern(h, w, 4, 65535, 11), 6, 16)
    files["png_rgba16_gamma_interlaced.png"] = png_bytes(pattern(h, w, 4, 65535, 12), 6, 16,
                                                         interlace=True, gamma=45455)
    palette = pattern(1, 16, 3, 255, 13)[0]
    files["png_palette8_trns.png"] = png_bytes(pattern(h, w, 1, 15, 14)[..., 0], 3, 8, palette=palette,
                                               trns=[0, 128, 255, 7])
    return files


# MARK: JPEGs

def exif_orientation(value, big_endian):
    """A minimal EXIF block (without the 'Exif\\0\\0' prefix Pillow adds) with IFD0 Orientation."""
    e = ">" if big_endian else "<"
    head = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8)
    ifd = struct.pack(e + "H", 1) + struct.pack(e + "HHI", 0x0112, 3, 1) + struct.pack(e + "HH", value, 0)
    return head + ifd + struct.pack(e + "I", 0)


def stored_grid(upright, orientation):
    """The grid to store so that applying `orientation` gives `upright` back (numpy, independent
    of the Swift code)."""
    u = upright
    return {1: u, 2: u[:, ::-1], 3: u[::-1, ::-1], 4: u[::-1, :], 5: u.transpose(1, 0, 2),
            6: np.rot90(u, 1), 7: np.rot90(u, 2).transpose(1, 0, 2), 8: np.rot90(u, -1)}[orientation]


def make_jpegs():
    files = {}
    h, w = 24, 32
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), ((x // 8 + y // 8) % 2) * 200 + 30], -1).astype(np.uint8)
    for o in range(1, 9):
        buf = io.BytesIO()
        grid = np.ascontiguousarray(stored_grid(base, o))
        Image.fromarray(grid).save(buf, "JPEG", quality=95, subsampling=0,
                                   exif=b"Exif\x00\x00" + exif_orientation(o, big_endian=o % 2 == 1))
        files[f"jpeg_orientation_{o}.jpg"] = buf.getvalue()
    buf = io.BytesIO(); Image.fromarray(base).convert("L").save(buf, "JPEG", quality=90)
    files["jpeg_gray.jpg"] = buf.getvalue()
    buf = io.BytesIO(); Image.fromarray(base).save(buf, "JPEG", quality=90, progressive=True)
    files["jpeg_progressive.jpg"] = buf.getvalue()
    buf = io.BytesIO(); Image.fromarray(base).convert("CMYK").save(buf, "JPEG", quality=95)
    files["jpeg_cmyk_adobe.jpg"] = buf.getvalue()
    big = np.kron(base, np.ones((4, 4, 1), np.uint8))  # 128x96, enough entropy data to cut
    buf = io.BytesIO(); Image.fromarray(big).save(buf, "JPEG", quality=90)
    data = buf.getvalue()
    files["jpeg_truncated.jpg"] = data[: len(data) * 6 // 10]
    files["jpeg_128x96.jpg"] = data
    return files


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edge", default="/work/shared/data/edge")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    files = {**make_pngs(), **make_jpegs()}
    table = {}
    for name, data in sorted(files.items()):
        path = os.path.join(OUT, name)
        with open(path, "wb") as f:
            f.write(data)
        table[name] = expected(path)
    with open(os.path.join(OUT, "fixtures.json"), "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
    if os.path.isdir(args.edge):
        edge = {}
        for sub in ("derived", "real"):
            for name in sorted(os.listdir(os.path.join(args.edge, sub))):
                if name.endswith((".jpg", ".png")):
                    edge[f"{sub}/{name}"] = expected(os.path.join(args.edge, sub, name))
        with open(os.path.join(OUT, "edge.json"), "w") as f:
            json.dump(edge, f, indent=1, sort_keys=True)
    print(f"wrote {len(files)} fixtures to {OUT}")


if __name__ == "__main__":
    main()
