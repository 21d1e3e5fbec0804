# -*- Python -*-
# lit configuration of the normfuse test suite: .mlir tests run nf-opt and
# FileCheck from LLVM 19.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "normfuse"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nf_obj_root, "test")

# Freed memory filled with 0xa5: a read of it fails every time (see
# unittests/CMakeLists.txt).
config.environment["MALLOC_PERTURB_"] = "165"
# A CHECK line whose variable leaks across CHECK-LABEL blocks is a bug.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope --dump-input=fail"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%nf_src_root", config.nf_src_root))
config.substitutions.append(("%nf_generated_dialect_doc", config.nf_generated_dialect_doc))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

if config.nf_have_cuda_toolkit:
    config.available_features.add("cuda-toolkit")
if config.nf_cuda_stub_driver and os.path.exists(config.nf_cuda_stub_driver):
    config.available_features.add("cuda-stub-driver")
    config.substitutions.append(("%cuda_stub_driver", config.nf_cuda_stub_driver))

tool_dirs = [config.nf_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["nf-opt", "nf-run", "nf-translate", "nf-package", "nf-package-run", ToolSubst("not", unresolved="fatal")], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# A GPU the cuda target can use: its tests run for real there and are
# unsupported elsewhere.
import shutil
import subprocess
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass
