#!/usr/bin/env python3
"""Writes and checks .npy files for the nf-run tests without NumPy.

  npy_tool.py gauss PATH DESCR SHAPE SEED [MEAN STD]   random N(mean, std)
  npy_tool.py const PATH DESCR SHAPE VALUE             every element VALUE
  npy_tool.py fortran PATH                             a Fortran-order f32 array
  npy_tool.py ints PATH DESCR SHAPE V,V,...            these integer values
  npy_tool.py dump PATH                                descr, shape, 4 values
  npy_tool.py values PATH                              descr, shape, every value
  npy_tool.py check-layer-norm X Y MEAN TOL            y and mean of a LayerNorm
                                                       over the last axis (no
                                                       scale or bias)

DESCR is <f2, <f4, <f8 or <V2 (bf16 as ml_dtypes stores it), |b1 (bool),
or an integer's (|i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8); SHAPE is
comma-separated, e.g. 4,13.
"""
import math
import random
import struct
import sys

FORMATS = {"<f2": "e", "<f4": "f", "<f8": "d", "|b1": "?", "|i1": "b",
           "<i2": "h", "<i4": "i", "<i8": "q", "|u1": "B", "<u2": "H",
           "<u4": "I", "<u8": "Q"}


def bf16_bits(v):
    x = struct.unpack("<I", struct.pack("<f", v))[0]
    return (x + 0x7FFF + ((x >> 16) & 1)) >> 16


def write(path, descr, shape, values, fortran=False):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    if descr == "<V2":
        payload = struct.pack("<%dH" % len(values), *[bf16_bits(v) for v in values])
    else:
        payload = struct.pack("<%d%s" % (len(values), FORMATS[descr]), *values)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                header.encode() + payload)


def read(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    n = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + n].decode()
    descr = header.split("'descr': '")[1].split("'")[0]
    dims = header.split("'shape': (")[1].split(")")[0]
    shape = [int(d) for d in dims.split(",") if d.strip()]
    count = 1
    for d in shape:
        count *= d
    payload = data[10 + n:]
    if descr == "<V2":
        bits = struct.unpack("<%dH" % count, payload)
        values = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
    else:
        values = list(struct.unpack("<%d%s" % (count, FORMATS[descr]), payload))
    return descr, shape, values


def main(argv):
    cmd = argv[1]
    if cmd in ("gauss", "const"):
        path, descr = argv[2], argv[3]
        shape = [int(d) for d in argv[4].split(",")]
        count = 1
        for d in shape:
            count *= d
        if cmd == "const":
            values = [float(argv[5])] * count
        else:
            rng = random.Random(int(argv[5]))
            mean = float(argv[6]) if len(argv) > 6 else 0.0
            std = float(argv[7]) if len(argv) > 7 else 1.0
            values = [rng.gauss(mean, std) for _ in range(count)]
        write(path, descr, shape, values)
    elif cmd == "ints":
        shape = [int(d) for d in argv[4].split(",")]
        write(argv[2], argv[3], shape, [int(v) for v in argv[5].split(",")])
    elif cmd == "raw":
        # raw PATH HEADER PAYLOAD_BYTES: a v1 .npy file with this header
        # text (a dict literal) and that many zero bytes of data.
        header = argv[3]
        header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        with open(argv[2], "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                    header.encode() + b"\0" * int(argv[4]))
    elif cmd == "fortran":
        write(argv[2], "<f4", [2, 3], [0.0] * 6, fortran=True)
    elif cmd == "dump":
        descr, shape, values = read(argv[2])
        print(descr, shape, " ".join("%.4f" % v for v in values[:4]))
    elif cmd == "values":
        descr, shape, values = read(argv[2])
        print(descr, shape, " ".join(str(v) for v in values))
    elif cmd == "check-layer-norm":
        _, shape, x = read(argv[2])
        _, _, y = read(argv[3])
        _, _, mean = read(argv[4])
        tol = float(argv[5])
        cols = shape[-1]
        worst = 0.0
        for r in range(len(x) // cols):
            row = x[r * cols:(r + 1) * cols]
            m = sum(row) / cols
            var = sum((v - m) ** 2 for v in row) / cols
            rstd = 1.0 / math.sqrt(var + 1e-5)
            worst = max(worst, abs(mean[r] - m))
            for j, v in enumerate(row):
                worst = max(worst, abs(y[r * cols + j] - (v - m) * rstd))
        print("max abs error %.3g: %s" % (worst, "ok" if worst <= tol else "TOO LARGE"))
        return 0 if worst <= tol else 1
    elif cmd == "close":
        _, shape_a, a = read(argv[2])
        _, shape_b, b = read(argv[3])
        tol = float(argv[4])
        if shape_a != shape_b:
            print("shapes differ: %s %s" % (shape_a, shape_b))
            return 1
        worst = max((abs(u - v) for u, v in zip(a, b)), default=0.0)
        print("max abs difference %.3g: %s" % (worst, "ok" if worst <= tol else "TOO LARGE"))
        return 0 if worst <= tol else 1
    else:
        print("unknown command " + cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
