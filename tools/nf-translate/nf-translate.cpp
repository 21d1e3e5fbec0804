//===- nf-translate.cpp - normfuse's translation driver ---------*- C++ -*-===//
//
// Part of normfuse. An mlir-translate with normfuse's translations:
// `--nf-to-cuda [--cuda-arch=sm_XY]` prints the GPU kernels of a module as
// one CUDA C++ translation unit. A module of nf ops on tensors is lowered
// with the nf-cuda-pipeline first; one that nf-opt already lowered is
// printed as it is.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Target/CUDAEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::nf::registerToCUDATranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv,
                                              "normfuse translation driver\n"))
             ? 1
             : 0;
}
