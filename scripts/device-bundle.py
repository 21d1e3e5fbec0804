#!/usr/bin/env python3
"""Makes the device bundle: the whole compiler for a machine without MLIR or
LLVM (the lent GPU machine, ../shared GPU.md). scripts/device-bundle.sh
builds first and calls this.

    device-bundle.py [--build build] [--python PYTHON3.12]
        writes build/device/normfuse-device.tar.xz (at most 60 MiB) and
        build/device/normfuse-device.json (its files, sizes and digest)
    device-bundle.py --stage DIR [--build build]
        writes the bundle's folder DIR only, uncompressed, with the build's
        own Python module (the ctest check device-bundle runs it)

The bundle's folder (what the archive unpacks to):

    bin/     nf-run nf-opt nf-translate nf-package-run   (stripped)
    tests/   NFJITTests NFCUDATests NFRuntimeTests       (stripped)
    lib/     libomp.so.5, and in lib/extra libz and libzstd for a system
             that lacks them (env.sh decides)
    python/  the normfuse package, its module built for the bundle's Python
    env.sh   `source` it: PATH, LD_LIBRARY_PATH, PYTHONPATH
    VERSION  the commit, the date, the Python the module is for

LLVM and MLIR are linked into each binary (NF_LINK_LLVM_STATIC, the
default); what the binaries load beyond glibc 2.34 (LLVM's call of glibc
2.36's arc4random is served by lib/Support/Arc4Random.c), libstdc++
(GLIBCXX 3.4.30: GCC 12's, which Debian 12 and Ubuntu 22.04 have), the NVIDIA
driver and NVRTC is in lib/. A binary that needs anything else (libLLVM.so
because the build was configured with NF_LINK_LLVM_STATIC=OFF) is refused.
"""
import argparse
import datetime
import hashlib
import json
import lzma
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_BYTES = 60 << 20
TOOLS = ["nf-run", "nf-opt", "nf-translate", "nf-package-run"]
TESTS = ["unittests/JIT/NFJITTests", "unittests/CUDA/NFCUDATests",
         "unittests/Runtime/NFRuntimeTests"]
# What a bundled binary may load from the system: glibc, libstdc++ and
# libgcc_s (GCC 12's on Debian 12 and Ubuntu 22.04 and later), the bundle's lib/.
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1",
                    "libpthread.so.0", "ld-linux-x86-64.so.2",
                    "libstdc++.so.6", "libgcc_s.so.1"}
BUNDLED = {"libomp.so.5": "lib", "libz.so.1": "lib/extra",
           "libzstd.so.1": "lib/extra"}

ENV_SH = """\
# Source this file to use the normfuse device bundle from any folder.
_nf_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$_nf_bundle/bin:$PATH"
export PYTHONPATH="$_nf_bundle/python${PYTHONPATH:+:$PYTHONPATH}"
_nf_lib="$_nf_bundle/lib"
# libz and libzstd from the bundle only where the system has none (the
# loader's cache read once: under pipefail, `ldconfig -p | grep -q` fails
# when grep stops reading early).
_nf_cache=$(/sbin/ldconfig -p 2>/dev/null || true)
for _nf_so in libz.so.1 libzstd.so.1; do
  if ! grep -q "^[[:space:]]*$_nf_so " <<< "$_nf_cache"; then
    _nf_lib="$_nf_lib:$_nf_bundle/lib/extra"
    break
  fi
done
export LD_LIBRARY_PATH="$_nf_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset _nf_bundle _nf_lib _nf_so _nf_cache
"""


class BundleError(Exception):
    pass


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise BundleError(f"{shlex.join(argv)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def needed_libraries(path):
    """The DT_NEEDED entries of an ELF file."""
    out = run(["readelf", "-d", path])
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def resolved_libraries(path):
    """{soname: path} of what the dynamic loader finds for `path` here."""
    found = {}
    for line in run(["ldd", path]).splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def copy_stripped(source, target):
    if not os.path.isfile(source):
        raise BundleError(f"{source} is missing: build it first (scripts/build.sh)")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    run(["strip", "-o", target, source])


def newest_glibc(path):
    """The newest GLIBC_x.y symbol version `path` needs."""
    versions = set(re.findall(r"GLIBC_(\d+)\.(\d+)", run(["objdump", "-T", path])))
    return max(((int(a), int(b)) for a, b in versions), default=(0, 0))


def check_and_collect_libraries(stage, binaries):
    """Copies what `binaries` load into the stage; refuses anything else,
    and a binary that needs a glibc newer than 2.34."""
    for binary in binaries:
        glibc = newest_glibc(binary)
        if glibc > (2, 34):
            raise BundleError(f"{os.path.relpath(binary, stage)} needs glibc "
                              f"{glibc[0]}.{glibc[1]}; the bundle promises 2.34")
        resolved = resolved_libraries(binary)
        for soname in needed_libraries(binary):
            if soname in SYSTEM_LIBRARIES:
                continue
            if soname not in BUNDLED:
                raise BundleError(
                    f"{os.path.relpath(binary, stage)} needs {soname}, which the bundle "
                    "does not carry (is LLVM linked statically? NF_LINK_LLVM_STATIC=ON)")
            target = os.path.join(stage, BUNDLED[soname], soname)
            if not os.path.exists(target):
                if soname not in resolved:
                    raise BundleError(f"{soname} of {binary} is not found here")
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(os.path.realpath(resolved[soname]), target)


def python_module_name(python):
    suffix = run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"])
    return "_normfuse" + suffix.strip()


def python_include(python):
    return run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"]).strip()


def build_module_for(python, build, workdir):
    """The _normfuse module for another Python (the GPU machine's 3.12):
    the build's own compile commands of the module and of nanobind, with
    that Python's headers, and its own link command with those objects."""
    commands = json.load(open(os.path.join(build, "compile_commands.json")))
    own = [m for m in os.listdir(os.path.join(build, "python/normfuse"))
           if m.startswith("_normfuse") and m.endswith(".so")]
    if len(own) != 1:
        raise BundleError(f"no Python module in {build}/python/normfuse: build it first")
    own_python = re.search(r"cpython-(\d)(\d+)", own[0])
    own_include = None
    objects = {}
    os.makedirs(workdir, exist_ok=True)
    new_include = python_include(python)
    for entry in commands:
        output = re.search(r" -o (\S+) ", entry["command"])
        if not output or "/python/CMakeFiles/" not in "/" + output.group(1):
            continue
        if own_include is None:
            m = re.search(r"(\S+/include/python%s\.%s)\b" % own_python.groups(),
                          entry["command"])
            if not m:
                raise BundleError("cannot find the Python headers in the module's compile command")
            own_include = m.group(1)
        target = os.path.join(workdir, os.path.basename(output.group(1)))
        command = entry["command"].replace(own_include, new_include)
        command = command.replace(" -o " + output.group(1) + " ", " -o " + target + " ")
        command = command.replace("-fdiagnostics-color", "")
        run(shlex.split(command), cwd=entry["directory"])
        objects[output.group(1)] = target
    link = run(["ninja", "-C", build, "-t", "commands",
                f"python/normfuse/{own[0]}"]).strip().splitlines()[-1]
    link = link.split("&&", 1)[1].rsplit("&&", 1)[0] if "&&" in link else link
    argv = shlex.split(link)
    module = os.path.join(workdir, python_module_name(python))
    nanobind_objects = [o for k, o in objects.items() if "nanobind-static" in k]
    out = []
    for arg in argv:
        if arg in objects:
            out.append(objects[arg])
        elif arg.endswith("libnanobind-static.a"):
            out.extend(nanobind_objects)
        elif arg == f"python/normfuse/{own[0]}":
            out.append(module)
        else:
            out.append(arg)
    out = [a for a in out if a != "-fdiagnostics-color"]
    run(out, cwd=build)
    return module


def git_version():
    try:
        commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
        dirty = run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip()
        return commit + ("+uncommitted" if dirty else "")
    except BundleError:
        return "unknown"


def stage_bundle(stage, build, module):
    if os.path.exists(stage):
        shutil.rmtree(stage)
    os.makedirs(stage)
    binaries = []
    for tool in TOOLS:
        target = os.path.join(stage, "bin", tool)
        copy_stripped(os.path.join(build, "bin", tool), target)
        binaries.append(target)
    for test in TESTS:
        target = os.path.join(stage, "tests", os.path.basename(test))
        copy_stripped(os.path.join(build, test), target)
        binaries.append(target)
    package = os.path.join(stage, "python", "normfuse")
    sources = os.path.join(ROOT, "python", "normfuse")
    # The package's Python files, subpackages (normfuse.onnx) included.
    for directory, _, files in os.walk(sources):
        for name in files:
            if name.endswith(".py"):
                target = os.path.join(package, os.path.relpath(directory, sources))
                os.makedirs(target, exist_ok=True)
                shutil.copy2(os.path.join(directory, name), target)
    target = os.path.join(package, os.path.basename(module))
    copy_stripped(module, target)
    binaries.append(target)
    check_and_collect_libraries(stage, binaries)
    with open(os.path.join(stage, "env.sh"), "w") as f:
        f.write(ENV_SH)
    python_tag = re.search(r"cpython-\d+", os.path.basename(module)).group(0)
    with open(os.path.join(stage, "VERSION"), "w") as f:
        f.write(f"normfuse {git_version()}\n"
                f"bundled {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n"
                f"python module {python_tag}\n")


def archive(stage, out):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "normfuse-device.tar.xz")
    partial = path + ".partial"
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 9, "dict_size": 256 << 20}]
    files = []
    with lzma.open(partial, "wb", format=lzma.FORMAT_XZ, filters=filters) as xz:
        with tarfile.open(fileobj=xz, mode="w") as tar:
            for folder, dirs, names in os.walk(stage):
                dirs.sort()
                for name in sorted(names):
                    full = os.path.join(folder, name)
                    rel = os.path.relpath(full, stage)
                    tar.add(full, arcname=rel)
                    files.append({"path": rel, "bytes": os.path.getsize(full)})
    size = os.path.getsize(partial)
    if size > LIMIT_BYTES:
        os.remove(partial)
        raise BundleError(f"the bundle is {size / 2**20:.1f} MiB, over the "
                          f"{LIMIT_BYTES >> 20} MiB it may take beside the tree")
    os.replace(partial, path)
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    manifest = {"archive": os.path.basename(path), "bytes": size, "sha256": digest,
                "version": open(os.path.join(stage, "VERSION")).read().splitlines(),
                "files": files}
    with open(os.path.join(out, "normfuse-device.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return path, size


def find_python312():
    candidates = [shutil.which("python3.12")]
    pyenv = os.path.expanduser("~/.pyenv/versions")
    if os.path.isdir(pyenv):
        candidates += [os.path.join(pyenv, v, "bin", "python3.12")
                       for v in sorted(os.listdir(pyenv)) if v.startswith("3.12")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            try:
                python_include(c)
                if os.path.isfile(os.path.join(python_include(c), "Python.h")):
                    return c
            except BundleError:
                pass
    raise BundleError("no Python 3.12 with its headers here (the GPU machine's "
                      "Python): name one with --python")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=None, help="default BUILD/device")
    parser.add_argument("--stage", default=None,
                        help="only write the bundle's folder here, with the build's own Python module")
    parser.add_argument("--python", default=None,
                        help="the Python the bundle's module is for (default: a python3.12 here)")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    try:
        if args.stage:
            own = [m for m in os.listdir(os.path.join(build, "python/normfuse"))
                   if m.startswith("_normfuse") and m.endswith(".so")]
            if len(own) != 1:
                raise BundleError(f"no Python module in {build}/python/normfuse")
            stage_bundle(os.path.abspath(args.stage), build,
                         os.path.join(build, "python/normfuse", own[0]))
            print(f"device bundle staged in {args.stage}")
            return 0
        python = args.python or find_python312()
        module = build_module_for(python, build, os.path.join(build, "device-python"))
        stage = os.path.join(build, "device-stage")
        stage_bundle(stage, build, module)
        path, size = archive(stage, args.out or os.path.join(build, "device"))
        print(f"device bundle: {path} ({size / 2**20:.1f} MiB; module for "
              f"{os.path.basename(module)})")
        return 0
    except BundleError as e:
        print(f"device-bundle: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
