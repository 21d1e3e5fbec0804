"""python -m normfuse.onnx model.onnx [-o model.mlir] [--shape name=d0,d1,...]

Writes the ONNX model as MLIR (to stdout, or to -o's file, written whole
or not at all), for nf-run, nf-opt and nf-translate."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from . import OnnxImportError, import_graph


def _shape(text: str):
    name, sep, dims = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected name=d0,d1,..., not {text!r}")
    try:
        return name, tuple(int(d) for d in dims.split(",") if d != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes must be integers in {text!r}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m normfuse.onnx",
                                     description="Writes an ONNX model as MLIR (TOSA and nf ops).")
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", help="the .mlir file to write (default: stdout)")
    parser.add_argument("--shape", action="append", type=_shape, default=[],
                        metavar="NAME=D0,D1,...",
                        help="the size of an input with dynamic dimensions (repeatable)")
    parser.add_argument("--entry", default="main", help="the function's name (default: main)")
    args = parser.parse_args(argv)
    try:
        imported = import_graph(args.model, dict(args.shape), args.entry)
    except OnnxImportError as e:
        print(f"error: {args.model}: {e}", file=sys.stderr)
        return 1
    header = "// " + os.path.basename(args.model) + ": inputs " + ", ".join(
        f"{p.name}" for p in imported.inputs) + "; outputs " + ", ".join(
        p.name for p in imported.outputs) + "\n"
    text = header + imported.text
    if not args.output:
        sys.stdout.write(text)
        return 0
    directory = os.path.dirname(os.path.abspath(args.output))
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, suffix=".tmp") as f:
        f.write(text)
    os.replace(f.name, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
