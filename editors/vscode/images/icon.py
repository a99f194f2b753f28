#!/usr/bin/env python3
"""Draws images/icon.png (128x128): a ring (the loop) closing on a check
mark (the verified fixpoint). Standard library only; run from editors/vscode."""
import math
import struct
import zlib

N, SS = 128, 4  # size, supersampling


def dist_seg(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def color(x, y):
    # rounded square background
    r, m = 22, 4
    cx, cy = min(max(x, m + r), N - m - r), min(max(y, m + r), N - m - r)
    if math.hypot(x - cx, y - cy) > r:
        return None
    bg = (24, 44, 76)
    d = math.hypot(x - 64, y - 64)
    ang = math.degrees(math.atan2(y - 64, x - 64)) % 360
    # the ring, open at the top right where the arrow head sits
    if 36 <= d <= 46 and not (292 <= ang <= 338):
        return (79, 195, 247)
    # arrow head at the gap
    ax, ay = 64 + 41 * math.cos(math.radians(292)), 64 + 41 * math.sin(math.radians(292))
    if dist_seg(x, y, ax, ay, ax + 14, ay - 2) < 5 or dist_seg(x, y, ax, ay, ax + 3, ay + 13) < 5:
        return (79, 195, 247)
    # check mark
    if dist_seg(x, y, 48, 66, 60, 78) < 6 or dist_seg(x, y, 60, 78, 82, 52) < 6:
        return (255, 255, 255)
    return bg


rows = []
for j in range(N):
    row = bytearray([0])
    for i in range(N):
        acc = [0, 0, 0, 0]
        for sj in range(SS):
            for si in range(SS):
                c = color(i + (si + 0.5) / SS, j + (sj + 0.5) / SS)
                if c:
                    acc[0] += c[0]; acc[1] += c[1]; acc[2] += c[2]; acc[3] += 255
        n = SS * SS
        a = acc[3] // n
        if a:
            k = acc[3] // 255
            row += bytes([acc[0] // k, acc[1] // k, acc[2] // k, a])
        else:
            row += bytes(4)
    rows.append(bytes(row))


def chunk(tag, data):
    return struct.pack('>I', len(data)) + tag + data + struct.pack('>I', zlib.crc32(tag + data) & 0xFFFFFFFF)


png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', N, N, 8, 6, 0, 0, 0))
png += chunk(b'IDAT', zlib.compress(b''.join(rows), 9)) + chunk(b'IEND', b'')
with open('images/icon.png', 'wb') as f:
    f.write(png)
