#!/usr/bin/env python3
"""Writes tiny TrueType fonts for fuzz_font: one valid, the rest crafted.

    tests/fuzz/make_font_seeds.py DIR

A real font is far larger than the fuzzer's inputs should be, so the seeds
are built here: a font of three glyphs (an empty .notdef, a square and a
composite of the square) with the seven tables a TrueType needs, and the
malformed variants that crashed stb_truetype (tests/font_test.cc builds the
same ones): a cmap subtable (or the whole cmap) past the end of the file,
loca entries past it, a
format 4 cmap claiming 32767 segments, and a composite glyph made of itself.
A kern table gives FreeType's kerning path something to read.
"""
import os
import struct
import sys


def table_directory(tables, offsets=None):
    """An sfnt of the tables (tag -> bytes), in tag order, 4-byte aligned;
    offsets (tag -> int) overrides where the directory says a table is."""
    tags = sorted(tables)
    head = struct.pack(">IHHHH", 0x00010000, len(tags), 16, 0, 0)
    at = 12 + 16 * len(tags)
    records, body = b"", b""
    for tag in tags:
        data = tables[tag]
        where = (offsets or {}).get(tag, at + len(body))
        records += struct.pack(">4sIII", tag.encode(), 0, where, len(data))
        body += data + b"\0" * (-len(data) % 4)
    return head + records + body


def square(x0, y0, x1, y1):
    """A simple glyph: one contour of four on-curve points."""
    pts = [(x0, y0), (x0, y1), (x1, y1), (x1, y0)]
    out = struct.pack(">hhhhh", 1, x0, y0, x1, y1) + struct.pack(">HH", 3, 0)
    out += bytes([0x01] * 4)  # on curve, 16-bit deltas
    px = py = 0
    xs, ys = b"", b""
    for x, y in pts:
        xs += struct.pack(">h", x - px)
        ys += struct.pack(">h", y - py)
        px, py = x, y
    return out + xs + ys


def composite(of):
    """A composite glyph of one component, glyph `of`, at (0, 0)."""
    return struct.pack(">hhhhh", -1, 0, 0, 600, 700) + struct.pack(">HHbb", 0x0002, of, 0, 0)


def cmap_format4(seg_count_x2=None, subtable_at=12):
    """Space to '~' to glyph 1 (the square; 'a' and 'e' the composite),
    through glyphIdArray; segCountX2 and the subtable's offset as given when
    crafted."""
    first, last = 0x20, 0x7E
    glyphs = [2 if chr(c) in "ae" else 1 for c in range(first, last + 1)]
    ends, starts, deltas = [last, 0xFFFF], [first, 0xFFFF], [0, 1]
    range_offsets = [4, 0]  # from its own slot to glyphIdArray: two slots on
    seg = len(ends)
    sub = struct.pack(">HHHHHHH", 4, 0, 0, seg_count_x2 or seg * 2, 4, 1, 0)
    sub += struct.pack(">%dH" % seg, *ends) + b"\0\0" + struct.pack(">%dH" % seg, *starts)
    sub += struct.pack(">%dh" % seg, *deltas) + struct.pack(">%dH" % seg, *range_offsets)
    sub += struct.pack(">%dH" % len(glyphs), *glyphs)
    sub = sub[:2] + struct.pack(">H", len(sub)) + sub[4:]
    return struct.pack(">HHHHI", 0, 1, 3, 1, subtable_at) + sub


def font(glyph_list, cmap=None, loca=None, offsets=None, kern=True):
    glyf, locs = b"", [0]
    for g in glyph_list:
        glyf += g + b"\0" * (len(g) % 2)
        locs.append(len(glyf))
    n = len(glyph_list)
    tables = {
        "head": struct.pack(">IIIIHHQQhhhhHHhhh", 0x00010000, 0x00010000, 0, 0x5F0F3CF5, 0,
                            1000, 0, 0, 0, 0, 600, 700, 0, 8, 2, 0, 0),
        "hhea": struct.pack(">IhhhHhhhhhh8xhH", 0x00010000, 800, -200, 0, 700, 0, 0, 600, 1, 0,
                            0, 0, n),
        "maxp": struct.pack(">IHHHHHHHHHHHHHH", 0x00010000, n, 4, 1, 4, 1, 2, 0, 0, 0, 0, 0, 0,
                            1, 1),
        "cmap": cmap if cmap is not None else cmap_format4(),
        "loca": loca if loca is not None else struct.pack(">%dH" % (n + 1),
                                                          *[x // 2 for x in locs]),
        "glyf": glyf,
        "hmtx": struct.pack(">" + "Hh" * n, *sum(([700, 50] for _ in range(n)), [])),
    }
    if kern:  # version 0, one format 0 subtable, one pair: glyph 1 then 1, -50
        tables["kern"] = struct.pack(">HHHHHHHHHHHh", 0, 1, 0, 20, 1, 1, 6, 0, 0, 1, 1, -50)
    return table_directory(tables, offsets)


def fonts():
    base = [b"", square(50, 0, 550, 700), composite(1)]
    yield "valid.ttf", font(base)
    yield "valid-nokern.ttf", font(base, kern=False)
    yield "cmap-past-end.ttf", font(base, cmap=cmap_format4(subtable_at=0x7FFF0000), kern=False)
    yield "cmap-table-past-end.ttf", font(base, offsets={"cmap": 0x7FFF0000}, kern=False)
    yield "loca-past-end.ttf", font(base, loca=struct.pack(">4H", 0, 0x7000, 0xFFF0, 0xFFFF))
    yield "cmap4-segcount.ttf", font(base, cmap=cmap_format4(seg_count_x2=0xFFFE))
    yield "composite-self.ttf", font([b"", square(50, 0, 550, 700), composite(2)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in fonts():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
