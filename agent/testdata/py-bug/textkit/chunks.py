"""Split sequences into fixed-size chunks."""


def chunk(seq, size):
    """Return seq split into lists of `size` items; the last may be shorter."""
    if size <= 0:
        raise ValueError("size must be positive")
    out = []
    for i in range(0, len(seq) - size + 1, size):
        out.append(list(seq[i:i + size]))
    return out
