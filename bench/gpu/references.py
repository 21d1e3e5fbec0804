"""What the GPU run compares `nf-run --target cuda` against: the CPU's
results of the shipped examples and of the TOSA programs of test/, made here
by make_references.py and carried to the GPU machine in
build/gpu-check/references (read there by check_references.py).

Inputs are not carried: both machines generate them from a seed with integer
arithmetic (splitmix64 in NumPy's wrapping uint64 arithmetic, the same bits on
any machine and NumPy version), and the manifest holds each input's SHA-256 so
the GPU machine knows it ran the same inputs. Outputs of up to FULL_BYTES are
carried whole; a larger output is carried as SAMPLES elements at generated
positions plus the float64 sum and L2 norm of every row (the last axis), which
the elementwise tolerance bounds: |sum(a) - sum(b)| <= n * tol * scale and
|norm(a) - norm(b)| <= sqrt(n) * tol * scale for rows of n elements.

Needs NumPy only (no compiler, no PyTorch, no ml_dtypes).
"""

import hashlib
import json
import math
import os
import struct

import numpy as np

FULL_BYTES = 256 << 10
SAMPLES = 1 << 14
# Largest |cuda - cpu| / max(1, max |cpu|) allowed, by output dtype: a few
# units in the last place of the storage type, more for 16-bit results of
# long matmuls (both sides round their f32 sums, in different orders).
TOLERANCE = {"f64": 1e-9, "f32": 1e-4, "f16": 1e-2, "bf16": 6e-2}


def loosest_float(dtypes):
    """The floating-point type of `dtypes` with the loosest tolerance, or
    None where there is none."""
    floats = [d for d in dtypes if d in TOLERANCE]
    return max(floats, key=TOLERANCE.get) if floats else None

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x):
    """splitmix64's finalizer on a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _stream(count, seed):
    """`count` uint64 words of the stream numbered `seed`."""
    with np.errstate(over="ignore"):
        base = np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
        return _splitmix64(np.arange(count, dtype=np.uint64) + base)


def seed_of(*parts):
    """A 63-bit seed from strings (stable: SHA-256, not Python's hash)."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def uniform(shape, seed, low=-1.0, high=1.0):
    """float64 values in [low, high), 53 random bits each."""
    count = math.prod(shape)
    unit = (_stream(count, seed) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return (low + (high - low) * unit).reshape(shape)


def sample_positions(count, size, seed):
    """`count` positions in [0, size) (with repeats), sorted."""
    return np.sort(_stream(count, seed) % np.uint64(size)).astype(np.int64)


def to_bf16_bits(values):
    """float values rounded to bf16 (nearest even), as uint16 bits."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    return rounded.astype(np.uint16)


def from_bf16_bits(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


# Bool and integer tensors (signless iN as signed, uiN unsigned, as nf-run
# reads and writes them): compared bit for bit.
INTEGERS = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32,
            "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16,
            "ui32": np.uint32, "ui64": np.uint64}
NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64, **INTEGERS}
DESCR = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "bf16": "<V2",
         "i1": "|b1", "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
         "ui8": "|u1", "ui16": "<u2", "ui32": "<u4", "ui64": "<u8"}
_BY_DESCR = {np.dtype(d): name for name, d in DESCR.items() if name != "bf16"}


def storage(values, dtype):
    """The storage array of `values` in `dtype` (bf16: uint16 bits)."""
    if dtype == "bf16":
        return to_bf16_bits(values)
    return np.asarray(values).astype(NUMPY[dtype])


def write_npy(path, array, dtype):
    """Writes a storage array as a v1 .npy file (bf16 as '<V2', the way
    ml_dtypes saves it and nf-run reads it)."""
    shape = tuple(array.shape)
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (DESCR[dtype], dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(np.ascontiguousarray(array).tobytes())


def read_npy(path):
    """(float array (f64 stays f64, the rest as f32), dtype name) of an .npy
    file as nf-run writes it."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, descr = np.lib.format.read_array_header_1_0(f)
        else:
            shape, fortran, descr = np.lib.format.read_array_header_2_0(f)
        payload = f.read()
    if fortran:
        raise ValueError(f"{path}: Fortran order")
    if descr.kind == "V" and descr.itemsize == 2:
        return from_bf16_bits(np.frombuffer(payload, np.uint16)).reshape(shape), "bf16"
    name = _BY_DESCR[descr]
    values = np.frombuffer(payload, descr).reshape(shape)
    if name in INTEGERS:
        return values.copy(), name
    return (values if name == "f64" else values.astype(np.float32)), name


def make_input(shape, dtype, seed, kind):
    """The storage array of one generated input: "uniform" in (-1, 1) or
    "positive" in (0.5, 1.5) (for programs that take a variance); integers
    in [-100, 100] ([0, 200] unsigned) or [1, 100], bools either."""
    if dtype in INTEGERS:
        words = _stream(math.prod(shape), seed)
        if dtype == "i1":
            return (words >> np.uint64(63)).astype(np.bool_).reshape(tuple(shape))
        low, count = ((1, 100) if kind == "positive" else
                      (0, 201) if dtype.startswith("u") else (-100, 201))
        values = (words % np.uint64(count)).astype(np.int64) + low
        return values.astype(NUMPY[dtype]).reshape(tuple(shape))
    low, high = (-1.0, 1.0) if kind == "uniform" else (0.5, 1.5)
    return storage(uniform(tuple(shape), seed, low, high), dtype)


def sha256(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def _rows(values):
    values = np.asarray(values, np.float64)
    if values.ndim == 0:
        return values.reshape(1, 1)
    last = values.shape[-1] if values.shape[-1] else 1
    return values.reshape(-1, last)


def digest_output(values, dtype, seed, folder, stem):
    """The manifest entry of one CPU output (files written into `folder`):
    integers whole up to FULL_BYTES, else by their SHA-256."""
    if dtype in INTEGERS:
        entry = {"shape": list(values.shape), "dtype": dtype, "sha256": sha256(values)}
        if values.nbytes <= FULL_BYTES:
            np.save(os.path.join(folder, stem + ".npy"), np.asarray(values))
            entry["full"] = stem + ".npy"
        return entry
    entry = {"shape": list(values.shape), "dtype": dtype,
             "max_abs": float(np.abs(values).max(initial=0.0)),
             "finite": bool(np.isfinite(values).all())}
    itemsize = 8 if dtype == "f64" else (4 if dtype == "f32" else 2)
    if values.size * itemsize <= FULL_BYTES:
        name = stem + ".npy"
        np.save(os.path.join(folder, name), np.asarray(values))
        entry["full"] = name
        return entry
    flat = np.asarray(values).reshape(-1)
    positions = sample_positions(SAMPLES, flat.size, seed)
    rows = _rows(values)
    for key, array in (("sample", flat[positions].astype(np.float32)),
                       ("row_sums", rows.sum(axis=1)),
                       ("row_norms", np.sqrt((rows * rows).sum(axis=1)))):
        name = f"{stem}.{key}.npy"
        np.save(os.path.join(folder, name), array)
        entry[key] = name
    entry["sample_seed"] = seed
    return entry


def compare_output(got, entry, folder):
    """(error message or None, worst |got - cpu| / max(1, max |cpu|)) of one
    output against its manifest entry."""
    if list(got.shape) != entry["shape"]:
        return f"shape {list(got.shape)}, expected {entry['shape']}", None
    if entry["dtype"] in INTEGERS:
        # Bit for bit: integer and bool results are exact on every target.
        if got.dtype != np.dtype(NUMPY[entry["dtype"]]):
            return f"elements of {got.dtype}, expected {entry['dtype']}", None
        if "full" in entry:
            want = np.load(os.path.join(folder, entry["full"]))
            wrong = int(np.count_nonzero(got != want))
            if wrong:
                return f"{wrong} of {got.size} elements differ (integers are exact)", None
            return None, 0.0
        if sha256(got) != entry["sha256"]:
            return "the elements differ (SHA-256; integers are exact)", None
        return None, 0.0
    tol = TOLERANCE[entry.get("tolerance_dtype", entry["dtype"])]
    scale = max(1.0, entry["max_abs"])
    got = np.asarray(got, np.float64)
    finite = np.isfinite(got)
    if entry["finite"] and not finite.all():
        return f"{int((~finite).sum())} non-finite elements (the CPU's are all finite)", None
    if "full" in entry:
        want = np.load(os.path.join(folder, entry["full"])).astype(np.float64)
        same_nan = np.isnan(got) == np.isnan(want)
        if not same_nan.all():
            return "NaNs where the CPU has none, or the other way", None
        ok = ~np.isnan(want)
        worst = float(np.abs(got[ok] - want[ok]).max(initial=0.0)) / scale
        return (None if worst <= tol else f"relative difference {worst:.3g} over {tol:g}"), worst
    flat = got.reshape(-1)
    positions = sample_positions(SAMPLES, flat.size, entry["sample_seed"])
    want = np.load(os.path.join(folder, entry["sample"])).astype(np.float64)
    worst = float(np.abs(flat[positions] - want).max(initial=0.0)) / scale
    if worst > tol:
        return f"sampled elements: relative difference {worst:.3g} over {tol:g}", worst
    rows = _rows(got)
    n = rows.shape[1]
    sums = np.load(os.path.join(folder, entry["row_sums"]))
    norms = np.load(os.path.join(folder, entry["row_norms"]))
    sum_err = float(np.abs(rows.sum(axis=1) - sums).max(initial=0.0))
    norm_err = float(np.abs(np.sqrt((rows * rows).sum(axis=1)) - norms).max(initial=0.0))
    if sum_err > n * tol * scale:
        return f"row sums differ by {sum_err:.3g} (bound {n * tol * scale:.3g})", worst
    if norm_err > math.sqrt(n) * tol * scale:
        return f"row norms differ by {norm_err:.3g} (bound {math.sqrt(n) * tol * scale:.3g})", worst
    return None, worst


def load_manifest(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        return json.load(f)
