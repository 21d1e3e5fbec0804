"""normfuse.fuse and normfuse.kernel_graph: what the fusion pipeline makes
of a module, as text."""

import re

import pytest

import normfuse
from conftest import EXAMPLES


def kernels(dot):
    """The kernel count in each cluster's label."""
    return [int(n) for n in re.findall(r": (\d+) kernels", dot)]


def test_fuse_raises_and_fuses_the_tosa_transformer_block():
    text = normfuse.fuse(EXAMPLES / "transformer_block_tosa.mlir")
    assert "func.func @transformer_mlp_block_tosa" in text
    assert "nf.fused" in text
    assert "tosa.reduce_sum" not in text


def test_fuse_output_parses_and_compiles():
    text = normfuse.fuse(EXAMPLES / "unet_block_tosa.mlir")
    fn = normfuse.compile(text, "unet_resnet_block_tosa", fuse=False)
    assert fn.name == "unet_resnet_block_tosa"


def test_kernel_graph_is_a_dot_digraph_with_a_cluster_per_function():
    dot = normfuse.kernel_graph(EXAMPLES / "unet_block.mlir")
    assert dot.startswith("digraph kernels {")
    assert dot.rstrip().endswith("}")
    assert 'subgraph "cluster_unet_resnet_block"' in dot


def test_kernel_graph_after_fusion_has_fewer_kernels():
    source = EXAMPLES / "transformer_block_tosa.mlir"
    (before,) = kernels(normfuse.kernel_graph(source))
    (after,) = kernels(normfuse.kernel_graph(source, fuse=True))
    assert after < before


def test_fuse_and_kernel_graph_raise_compile_error_on_bad_ir():
    with pytest.raises(normfuse.CompileError, match="does not parse or verify"):
        normfuse.fuse("func.func @f( {")
    with pytest.raises(normfuse.CompileError, match="does not parse or verify"):
        normfuse.kernel_graph("func.func @f( {")


def test_the_python_example_runs_and_matches_numpy():
    import os
    import subprocess
    import sys

    example = EXAMPLES / "python" / "transformer_mlp.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "normfuse matches NumPy" in done.stdout
