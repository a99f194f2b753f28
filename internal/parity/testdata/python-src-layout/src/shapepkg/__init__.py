"""A src-layout package: importable only with src on the path (or installed)."""


def clamp(x, lo, hi):
    return max(lo, min(hi, x))
