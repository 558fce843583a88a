"""Point a code object at another source file without touching its instructions.

The debug bridge keeps Dynamo's transformed bytecode and only changes where its
instructions say they come from: `co_filename` becomes the dumped
`__transformed_code_*.py` and the line table is rebuilt from the decompiler's
offset -> line map, so a debugger steps through the decompiled lines while the
exact original instructions run.  Each CPython version stores lines differently:
3.8-3.9 `co_lnotab`, 3.10 `co_linetable` (byte pairs), 3.11+ the location table
of `Objects/locations.md`.  Pure Python, no torch: usable on every interpreter.
"""

import sys

__all__ = ["retarget"]


def retarget(code, filename, firstlineno, offset_lines, version=None):
    """Return `code` with `co_filename`, `co_firstlineno` and its line table replaced.

    `offset_lines` is a list of `(offset, line)` sorted by offset: the instruction
    at `offset`, and every one after it up to the next entry, is on `line`.
    Instructions before the first entry are placed on `firstlineno` (the `def`).
    """
    version = version or sys.version_info[:2]
    spans = _spans(offset_lines, len(code.co_code), firstlineno)
    if version >= (3, 11):
        return code.replace(co_filename=filename, co_firstlineno=firstlineno,
                            co_linetable=encode_locations(spans, firstlineno))
    if version == (3, 10):
        return code.replace(co_filename=filename, co_firstlineno=firstlineno,
                            co_linetable=encode_linetable_310(spans, firstlineno))
    return code.replace(co_filename=filename, co_firstlineno=firstlineno,
                        co_lnotab=encode_lnotab(spans, firstlineno))


def _spans(offset_lines, code_len, firstlineno):
    """[(start, end, line)] covering every byte of the bytecode, in order."""
    points = []
    for offset, line in sorted(offset_lines):
        if not 0 <= offset < code_len or line < 1:
            raise ValueError("line map entry (%d, %d) outside the code" % (offset, line))
        if points and points[-1][0] == offset:
            points[-1] = (offset, line)  # the last word on an offset wins
        else:
            points.append((offset, line))
    if not points or points[0][0] != 0:
        points.insert(0, (0, firstlineno))
    spans = []
    for i, (start, line) in enumerate(points):
        end = points[i + 1][0] if i + 1 < len(points) else code_len
        if spans and spans[-1][2] == line:
            spans[-1] = (spans[-1][0], end, line)
        else:
            spans.append((start, end, line))
    return spans


def _varint(value, out):
    while value >= 64:
        out.append(0x40 | (value & 63))
        value >>= 6
    out.append(value)


def _svarint(value, out):
    _varint(((-value) << 1) | 1 if value < 0 else value << 1, out)


def encode_locations(spans, firstlineno):
    """3.11+ location table: one "no column" entry (code 13) per run of <= 8 code units."""
    out = bytearray()
    prev = firstlineno
    for start, end, line in spans:
        units = (end - start) // 2
        delta = line - prev
        while units > 0:
            n = min(units, 8)
            out.append(0x80 | (13 << 3) | (n - 1))
            _svarint(delta, out)
            delta = 0
            units -= n
        prev = line
    return bytes(out)


def encode_linetable_310(spans, firstlineno):
    """3.10 `co_linetable`: (byte delta 0..254, line delta -127..127) pairs per span."""
    out = bytearray()
    prev = firstlineno
    for start, end, line in spans:
        delta = line - prev
        while delta > 127:
            out += bytes((0, 127))
            delta -= 127
        while delta < -127:
            out += bytes((0, 256 - 127))
            delta += 127
        length = end - start
        while length > 254:
            out += bytes((254, delta & 0xFF))
            delta = 0
            length -= 254
        out += bytes((length, delta & 0xFF))
        prev = line
    return bytes(out)


def encode_lnotab(spans, firstlineno):
    """3.8-3.9 `co_lnotab`: (byte increment 0..255, line increment -128..127) pairs."""
    out = bytearray()
    prev_offset, prev_line = 0, firstlineno
    for start, _end, line in spans:
        if start == 0 and line == firstlineno:
            continue
        bdelta, ldelta = start - prev_offset, line - prev_line
        while bdelta > 255:
            out += bytes((255, 0))
            bdelta -= 255
        while ldelta > 127:
            out += bytes((bdelta, 127))
            bdelta, ldelta = 0, ldelta - 127
        while ldelta < -128:
            out += bytes((bdelta, 128))
            bdelta, ldelta = 0, ldelta + 128
        out += bytes((bdelta, ldelta & 0xFF))
        prev_offset, prev_line = start, line
    return bytes(out)
