"""A small PNG reader (Python's zlib only): enough to look at a screenshot.

Reads 8-bit greyscale, RGB, grey+alpha and RGBA images without interlacing,
which is what headless Chromium writes, undoing the five row filters of the
PNG specification. Anything else raises ValueError rather than guessing.
"""
import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read(path):
    """(width, height, channels, rows): rows is a list of bytes, one per line."""
    data = open(path, "rb").read()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, head = len(SIGNATURE), [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if head is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = head
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"{path}: depth {depth}, colour type {colour}, interlace "
                         f"{interlace}: not read here")
    ch = CHANNELS[colour]
    raw = zlib.decompress(b"".join(idat))
    stride = width * ch
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 255
            elif ftype != 0:
                raise ValueError(f"{path}: row {y} has filter type {ftype}")
        rows.append(bytes(line))
        prev = line
    return width, height, ch, rows


def grey_levels(path):
    """Every pixel's grey level (0-255), row by row, as one flat list."""
    width, height, ch, rows = read(path)
    out = []
    for line in rows:
        for x in range(width):
            px = line[x * ch:(x + 1) * ch]
            out.append(px[0] if ch < 3 else (px[0] * 299 + px[1] * 587 + px[2] * 114) // 1000)
    return out
