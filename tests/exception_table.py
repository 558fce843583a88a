"""3.11+ exception tables written by hand (hand-assembled test code, the
scaling benchmark's hostile shapes): CPython's encoding
(Objects/exception_handling_notes.txt)."""


def varint(value, first):
    """6-bit groups, most significant first, 64 = more follow; 128 marks an entry's first."""
    groups = []
    while True:
        groups.append(value & 63)
        value >>= 6
        if not value:
            break
    out = [g | 64 for g in reversed(groups)]
    out[-1] &= ~64
    if first:
        out[0] |= 128
    return out


def entry(start, length, target, depth, lasti=False):
    """One entry, in code units: [start, start + length) handled at target."""
    return bytes(varint(start, True) + varint(length, False) + varint(target, False)
                 + varint(depth << 1 | lasti, False))
