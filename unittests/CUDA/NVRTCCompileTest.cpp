//===- NVRTCCompileTest.cpp - the printed CUDA compiles for real GPUs -*- C++
//-*-===//
//
// Part of normfuse. Prints the CUDA of every kernel family and schedule the
// CUDA back end emits (row norms and their gradients forced through each
// schedule, group and
// instance norms fused with SiLU and their gradients, in every dtype, every
// pointwise op, matmul and the convolutions with fused epilogues, and the
// linalg kernels of TOSA ops nothing raises)
// as one translation unit per family, and compiles it
// with NVRTC as the runtime will: cubins for sm_80 and sm_90, PTX for
// compute_75. Then checks what decides speed before any GPU runs it:
// - ptxas reports no local-memory spills in any kernel at sm_90;
// - where a kernel's schedule reads 16-byte vectors, its PTX has 128-bit
//   global loads and stores (ld/st.global.v4 or .v2 of 64-bit words).
// Built only where a CUDA toolkit is found; needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/InitAll.h"
#include "normfuse/Runtime/Sha256.h"
#include "normfuse/Target/CUDAEmitter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

const char *kDTypes[] = {"f32", "f16", "bf16", "f64"};

/// Functions of every row-norm kernel in `dtype` (rows of 2048 elements,
/// which every schedule can take, or of `cols`; named with `suffix`) and
/// every pointwise op.
std::string rowNormModule(const std::string &dtype, const char *op,
                          int64_t cols = 2048, const std::string &suffix = "") {
  std::string n = std::to_string(cols);
  std::string x = "tensor<16x" + n + "x" + dtype + ">";
  std::string st = dtype == "f64" ? "tensor<16x1xf64>" : "tensor<16x1xf32>";
  std::string p = "tensor<" + n + "x" + dtype + ">";
  std::string name = std::string(op) + suffix + "_" + dtype;
  if (std::string(op) == "layer_norm")
    return "func.func @" + name + "(%x: " + x + ", %s: " + p + ", %b: " + p +
           ") -> (" + x + ", " + st + ", " + st +
           ") {\n  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 "
           ": i64} : (" +
           x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
           ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st + "\n}\n";
  return "func.func @" + name + "(%x: " + x + ", %s: " + p + ") -> (" + x +
         ", " + st +
         ") {\n  %y, %r = nf.rms_norm %x scale %s {axis = 1 : "
         "i64} : (" +
         x + ", " + p + ") -> (" + x + ", " + st + ")\n  return %y, %r : " + x +
         ", " + st + "\n}\n";
}

/// GroupNorm in both layouts and InstanceNorm NHWC, with SiLU after it
/// (run through the fusion pipeline, the UNet block's kernel); the NHWC
/// GroupNorm on a 64x64 image, which goes across the channels but for f64.
std::string groupNormModule(const std::string &dtype) {
  std::string nhwcLarge = "tensor<2x64x64x320x" + dtype + ">";
  std::string nhwc = "tensor<2x16x16x320x" + dtype + ">";
  std::string nchw = "tensor<2x320x16x16x" + dtype + ">";
  std::string p = "tensor<320x" + dtype + ">";
  std::string st32 = dtype == "f64" ? "tensor<2x32xf64>" : "tensor<2x32xf32>";
  std::string st320 =
      dtype == "f64" ? "tensor<2x320xf64>" : "tensor<2x320xf32>";
  std::string stC = dtype == "f64" ? "tensor<320xf64>" : "tensor<320xf32>";
  auto norm = [&](const std::string &name, const std::string &t,
                  const std::string &op, const std::string &st) {
    return "func.func @" + name + "_" + dtype + "(%x: " + t + ", %s: " + p +
           ", %b: " + p + ") -> " + t + " {\n  %y, %m, %r = " + op + " : (" +
           t + ", " + p + ", " + p + ") -> (" + t + ", " + st + ", " + st +
           ")\n  %a = nf.silu %y : " + t + "\n  return %a : " + t + "\n}\n";
  };
  return norm("group_nhwc", nhwcLarge,
              "nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, "
              "num_groups = 32 : i64}",
              st32) +
         norm("group_nchw", nchw,
              "nf.group_norm %x scale %s bias %b {layout = #nf.layout<nchw>, "
              "num_groups = 32 : i64}",
              st32) +
         norm("instance_nhwc", nhwc,
              "nf.instance_norm %x scale %s bias %b {layout = "
              "#nf.layout<nhwc>}",
              st320) +
         "func.func @bn_inference_" + dtype + "(%x: " + nhwc + ", %s: " + p +
         ", %b: " + p + ", %rm: " + stC + ", %rv: " + stC + ") -> " + nhwc +
         " {\n  %y = nf.batch_norm_inference %x scale %s bias %b running(%rm, "
         "%rv) {layout = #nf.layout<nhwc>} : (" +
         nhwc + ", " + p + ", " + p + ", " + stC + ", " + stC + ") -> " + nhwc +
         "\n  return %y : " + nhwc + "\n}\n";
}

/// batch_norm_training, batch_norm_grad and bias_add_grad in both layouts
/// (the per-channel reductions and their elementwise kernels).
std::string channelReductionModule(const std::string &dtype) {
  std::string stat = dtype == "f64" ? "f64" : "f32";
  std::string c = "tensor<320x" + stat + ">";
  std::string module;
  for (const char *layout : {"nhwc", "nchw"}) {
    std::string t = std::string(layout) == "nhwc"
                        ? "tensor<4x16x16x320x" + dtype + ">"
                        : "tensor<4x320x16x16x" + dtype + ">";
    std::string attr = std::string("layout = #nf.layout<") + layout + ">";
    std::string name = std::string(layout) + "_" + dtype;
    module += "func.func @bn_training_" + name + "(%x: " + t + ", %s: " + c +
              ", %b: " + c + ", %rm: " + c + ", %rv: " + c + ") -> (" + t +
              ", " + c + ", " + c + ", " + c + ", " + c +
              ") {\n  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale "
              "%s bias %b running(%rm, %rv) {" +
              attr + "} : (" + t + ", " + c + ", " + c + ", " + c + ", " + c +
              ") -> (" + t + ", " + c + ", " + c + ", " + c + ", " + c +
              ")\n  return %y, %m, %r, %nm, %nv : " + t + ", " + c + ", " + c +
              ", " + c + ", " + c + "\n}\n";
    module += "func.func @bn_grad_" + name + "(%dy: " + t + ", %x: " + t +
              ", %m: " + c + ", %r: " + c + ", %s: " + c + ") -> (" + t + ", " +
              c + ", " + c +
              ") {\n  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r "
              "scale %s {" +
              attr + "} : (" + t + ", " + t + ", " + c + ", " + c + ", " + c +
              ") -> (" + t + ", " + c + ", " + c +
              ")\n  return %dx, %ds, %db : " + t + ", " + c + ", " + c +
              "\n}\n";
    module += "func.func @bias_grad_" + name + "(%dy: " + t + ") -> " + c +
              " {\n  %g = nf.bias_add_grad %dy {" + attr + "} : " + t + " -> " +
              c + "\n  return %g : " + c + "\n}\n";
  }
  return module;
}

/// TOSA ops no raising takes, op by op: linalg kernels. A chain over
/// contiguous operands, a row and a column broadcast and math the nf ops do
/// not use (one fused kernel of 16-byte vectors), a transpose (one lane a
/// thread), a sum over rows (a warp a row) and a maximum over columns (a
/// thread a column).
std::string linalgModule(const std::string &dtype) {
  std::string t = "tensor<64x256x" + dtype + ">";
  std::string row = "tensor<1x256x" + dtype + ">";
  std::string col = "tensor<64x1x" + dtype + ">";
  std::string tt = "tensor<256x64x" + dtype + ">";
  std::string binary = " : (" + t + ", " + t + ") -> " + t + "\n";
  std::string unary = " : (" + t + ") -> " + t + "\n";
  return "func.func @linalg_" + dtype + "(%x: " + t + ", %y: " + t +
         ", %r: " + row + ", %c: " + col + ") -> (" + t + ", " + tt + ", " +
         col + ", " + row + ") {\n  %a = tosa.add %x, %y" + binary +
         "  %sum = tosa.reduce_sum %y {axis = 1 : i32} : (" + t + ") -> " +
         col + "\n  %max = tosa.reduce_max %y {axis = 0 : i32} : (" + t +
         ") -> " + row + "\n" + "  %b = tosa.mul %a, %r {shift = 0 : i8} : (" +
         t + ", " + row + ") -> " + t + "\n  %s = tosa.sub %b, %c : (" + t +
         ", " + col + ") -> " + t + "\n  %p = tosa.pow %s, %x" + binary +
         "  %n = tosa.sin %p" + unary + "  %o = tosa.cos %n" + unary +
         "  %perm = \"tosa.const\"() <{value = dense<[1, 0]> : "
         "tensor<2xi32>}> : () -> tensor<2xi32>\n"
         "  %tr = tosa.transpose %x, %perm : (" +
         t + ", tensor<2xi32>) -> " + tt +
         "\n  return %o, %tr, %sum, %max : " + t + ", " + tt + ", " + col +
         ", " + row + "\n}\n";
}

/// Elementwise kernels over a size no 16-byte vector divides (33 x 777):
/// vectors and a peeled tail, nf ops and a TOSA op alike.
std::string oddPointwiseModule(const std::string &dtype) {
  std::string t = "tensor<33x777x" + dtype + ">";
  return "func.func @odd_" + dtype + "(%x: " + t + ", %y: " + t + ") -> (" + t +
         ", " + t + ", " + t + ") {\n  %g = nf.gelu %x : " + t +
         "\n  %a = nf.add %x, %y : " + t + "\n  %h = tosa.tanh %y : (" + t +
         ") -> " + t + "\n  return %g, %a, %h : " + t + ", " + t + ", " + t +
         "\n}\n";
}

/// Integer and bool tensors, op by op: a chain of wrapping arithmetic and a
/// select on a bool mask (one fused kernel), a sum over rows (a warp a
/// row, narrow integers shuffled as i32), a maximum over columns (a thread
/// a column) and an or over rows.
std::string integerModule(const std::string &dtype) {
  std::string t = "tensor<64x256x" + dtype + ">";
  std::string mask = "tensor<64x256xi1>";
  std::string col = "tensor<64x1x" + dtype + ">";
  std::string row = "tensor<1x256x" + dtype + ">";
  std::string binary = " : (" + t + ", " + t + ") -> " + t + "\n";
  return "func.func @ints_" + dtype + "(%x: " + t + ", %y: " + t +
         ", %p: " + mask + ") -> (" + t + ", " + col + ", " + row +
         ", tensor<64x1xi1>) {\n  %a = tosa.add %x, %y" + binary +
         "  %m = tosa.mul %a, %x {shift = 0 : i8}" + binary +
         "  %s = tosa.select %p, %m, %y : (" + mask + ", " + t + ", " + t +
         ") -> " + t + "\n  %sum = tosa.reduce_sum %y {axis = 1 : i32} : (" +
         t + ") -> " + col +
         "\n  %max = tosa.reduce_max %y {axis = 0 : i32} : (" + t + ") -> " +
         row + "\n  %any = tosa.reduce_any %p {axis = 1 : i32} : (" + mask +
         ") -> tensor<64x1xi1>\n  return %s, %sum, %max, %any : " + t + ", " +
         col + ", " + row + ", tensor<64x1xi1>\n}\n";
}

std::string pointwiseModule(const std::string &dtype) {
  std::string t = "tensor<8x1024x" + dtype + ">";
  std::string c = "tensor<1024x" + dtype + ">";
  std::string ops[] = {
      "nf.relu %a : " + t,
      "nf.gelu %a : " + t,
      "nf.gelu %a {approximate = #nf.approximation<tanh>} : " + t,
      "nf.silu %a : " + t,
      "nf.add %a, %b : " + t,
      "nf.mul %a, %b : " + t,
      "nf.relu_grad %a, %b : " + t,
      "nf.gelu_grad %a, %b : " + t,
      "nf.gelu_grad %a, %b {approximate = #nf.approximation<tanh>} : " + t,
      "nf.silu_grad %a, %b : " + t,
      "nf.bias_add %a, %c {layout = #nf.layout<nhwc>} : " + t + ", " + c,
  };
  std::string body;
  int i = 0;
  for (const std::string &op : ops)
    body += "  %" + std::to_string(i++) + " = " + op + "\n";
  body += "  return";
  for (int j = 0; j < i; ++j)
    body += std::string(j ? ", %" : " %") + std::to_string(j);
  body += " : ";
  for (int j = 0; j < i; ++j)
    body += (j ? ", " : "") + t;
  std::string results;
  for (int j = 0; j < i; ++j)
    results += (j ? ", " : "") + t;
  return "func.func @pointwise_" + dtype + "(%a: " + t + ", %b: " + t +
         ", %c: " + c + ") -> (" + results + ") {\n" + body + "\n}\n";
}

/// group_norm_grad (NHWC) and instance_norm_grad (NCHW): three kernels
/// each.
std::string groupNormGradModule(const std::string &dtype) {
  std::string nhwc = "tensor<2x16x16x320x" + dtype + ">";
  std::string nchw = "tensor<2x320x16x16x" + dtype + ">";
  std::string stat = dtype == "f64" ? "f64" : "f32";
  std::string p = "tensor<320x" + stat + ">";
  auto grad = [&](const std::string &name, const std::string &t,
                  const std::string &op, const std::string &attrs,
                  const std::string &st) {
    return "func.func @" + name + "_" + dtype + "(%dy: " + t + ", %x: " + t +
           ", %m: " + st + ", %r: " + st + ", %s: " + p + ") -> (" + t + ", " +
           p + ", " + p + ") {\n  %dx, %ds, %db = " + op +
           " %dy, %x, %m, %r scale %s " + attrs + " : (" + t + ", " + t + ", " +
           st + ", " + st + ", " + p + ") -> (" + t + ", " + p + ", " + p +
           ")\n  return %dx, %ds, %db : " + t + ", " + p + ", " + p + "\n}\n";
  };
  return grad("group_grad_nhwc", nhwc, "nf.group_norm_grad",
              "{layout = #nf.layout<nhwc>, num_groups = 32 : i64}",
              "tensor<2x32x" + stat + ">") +
         grad("instance_grad_nchw", nchw, "nf.instance_norm_grad", "",
              "tensor<2x320x" + stat + ">");
}

/// matmul (64x64 tiles; a fused bias + GELU epilogue), conv2d in both
/// layouts (a fused bias + ReLU) and its two gradients (32x32 tiles).
std::string productModule(const std::string &dtype) {
  auto t = [&](const std::string &shape) {
    return "tensor<" + shape + "x" + dtype + ">";
  };
  std::string module =
      "func.func @mm_" + dtype + "(%a: " + t("256x96") +
      ", %b: " + t("96x128") + ", %c: " + t("128") + ") -> " + t("256x128") +
      " {\n  %p = nf.matmul %a, %b : " + t("256x96") + ", " + t("96x128") +
      " -> " + t("256x128") +
      "\n  %q = nf.bias_add %p, %c {layout = "
      "#nf.layout<nhwc>} : " +
      t("256x128") + ", " + t("128") + "\n  %z = nf.gelu %q : " + t("256x128") +
      "\n  return %z : " + t("256x128") + "\n}\n";
  // Large enough for a wave of 128 x 128 tiles (the tensor cores' large
  // schedule for f16 and bf16).
  module += "func.func @mm_large_" + dtype + "(%a: " + t("2048x64") +
            ", %b: " + t("64x2048") + ") -> " + t("2048x2048") +
            " {\n  %p = nf.matmul %a, %b : " + t("2048x64") + ", " +
            t("64x2048") + " -> " + t("2048x2048") +
            "\n  return %p : " + t("2048x2048") + "\n}\n";
  // Too few tiles for the device over a long K: f16 and bf16 split K into
  // three ranges (two kernels: the partial sums, their sum + bias + GELU).
  module += "func.func @mm_split_" + dtype + "(%a: " + t("512x768") +
            ", %b: " + t("768x768") + ", %c: " + t("768") + ") -> " +
            t("512x768") + " {\n  %p = nf.matmul %a, %b : " + t("512x768") +
            ", " + t("768x768") + " -> " + t("512x768") +
            "\n  %q = nf.bias_add %p, %c {layout = #nf.layout<nhwc>} : " +
            t("512x768") + ", " + t("768") +
            "\n  %z = nf.gelu %q : " + t("512x768") +
            "\n  return %z : " + t("512x768") + "\n}\n";
  for (const char *layout : {"nhwc", "nchw"}) {
    bool nhwc = std::string(layout) == "nhwc";
    std::string x = t(nhwc ? "2x16x16x8" : "2x8x16x16");
    std::string w = t(nhwc ? "12x3x3x8" : "12x8x3x3");
    std::string y = t(nhwc ? "2x8x8x12" : "2x12x8x8");
    std::string attrs = std::string("{strides = array<i64: 2, 2>, padding = "
                                    "array<i64: 1, 0, 1, 0>, layout = "
                                    "#nf.layout<") +
                        layout + ">}";
    std::string name = std::string(layout) + "_" + dtype;
    module += "func.func @conv_" + name + "(%x: " + x + ", %w: " + w +
              ", %c: " + t("12") + ") -> " + y +
              " {\n  %y = nf.conv2d %x, %w " + attrs + " : " + x + ", " + w +
              " -> " + y +
              "\n  %b = nf.bias_add %y, %c {layout = "
              "#nf.layout<" +
              layout + ">} : " + y + ", " + t("12") +
              "\n  %z = nf.relu %b : " + y + "\n  return %z : " + y + "\n}\n";
    module += "func.func @conv_grads_" + name + "(%x: " + x + ", %w: " + w +
              ", %dy: " + y + ") -> (" + x + ", " + w +
              ") {\n  %dx = nf.conv2d_backprop_input %dy, %w " + attrs + " : " +
              y + ", " + w + " -> " + x +
              "\n  %dw = nf.conv2d_backprop_filter %x, %dy " + attrs + " : " +
              x + ", " + y + " -> " + w + "\n  return %dx, %dw : " + x + ", " +
              w + "\n}\n";
  }
  return module;
}

/// The CUDA of `module` lowered with `schedule` for row norms (after the
/// fusion pipeline when `fuse`).
std::string
printCUDA(const std::string &moduleText, const std::string &schedule,
          bool fuse = false, bool tf32 = false,
          const std::string &arch = normfuse::runtime::kDefaultGpuTarget) {
  mlir::DialectRegistry registry;
  mlir::nf::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(moduleText, &context);
  if (!module) {
    ADD_FAILURE() << "does not parse:\n" << moduleText;
    return "";
  }
  mlir::PassManager pm(&context);
  if (fuse)
    mlir::nf::buildFusePipeline(pm);
  mlir::nf::CUDAPipelineOptions options;
  options.rowNormSchedule = schedule;
  options.allowTf32 = tf32;
  options.arch = arch;
  mlir::nf::buildCUDAPipeline(pm, options);
  if (mlir::failed(pm.run(*module))) {
    ADD_FAILURE() << "the CUDA pipeline failed on:\n" << moduleText;
    return "";
  }
  std::string source;
  llvm::raw_string_ostream os(source);
  if (mlir::failed(mlir::nf::translateToCUDA(*module, os))) {
    ADD_FAILURE() << "the printer failed";
    return "";
  }
  return source;
}

/// Every kernel the CUDA back end emits, each schedule once: one source
/// per forced schedule (the kernels' names say which).
/// Every kernel family with dynamic sizes (its sizes index arguments), in
/// f16 with f32 statistics.
const char *kDynamicShapesModule = R"mlir(
func.func @dyn_group_norm(%x: tensor<?x?x?x320xf16>, %s: tensor<320xf16>, %b: tensor<320xf16>) -> tensor<?x?x?x320xf16> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<?x?x?x320xf16>, tensor<320xf16>, tensor<320xf16>) -> (tensor<?x?x?x320xf16>, tensor<?x32xf32>, tensor<?x32xf32>)
  %a = nf.silu %y : tensor<?x?x?x320xf16>
  return %a : tensor<?x?x?x320xf16>
}
func.func @dyn_instance_norm_grad(%dy: tensor<?x?x?x?xf16>, %x: tensor<?x?x?x?xf16>, %m: tensor<?x?xf32>, %r: tensor<?x?xf32>) -> (tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %ds, %db = nf.instance_norm_grad %dy, %x, %m, %r : (tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>, tensor<?x?xf32>, tensor<?x?xf32>) -> (tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>)
  return %dx, %ds, %db : tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>
}
func.func @dyn_batch_norm(%x: tensor<?x?x?x64xf16>, %rm: tensor<64xf32>, %rv: tensor<64xf32>, %dy: tensor<?x64x?x?xf16>, %x2: tensor<?x64x?x?xf16>, %m: tensor<64xf32>, %r: tensor<64xf32>) -> (tensor<?x?x?x64xf16>, tensor<?x64x?x?xf16>, tensor<64xf16>) {
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x2, %m, %r {layout = #nf.layout<nchw>} : (tensor<?x64x?x?xf16>, tensor<?x64x?x?xf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x64x?x?xf16>, tensor<64xf32>, tensor<64xf32>)
  %g = nf.bias_add_grad %dy {layout = #nf.layout<nchw>} : tensor<?x64x?x?xf16> -> tensor<64xf16>
  return %y, %dx, %g : tensor<?x?x?x64xf16>, tensor<?x64x?x?xf16>, tensor<64xf16>
}
func.func @dyn_products(%a: tensor<?x?xf16>, %b: tensor<?x?xf16>, %x: tensor<?x?x?x8xf16>, %w: tensor<16x3x3x8xf16>) -> (tensor<?x?xf16>, tensor<?x?x?x16xf16>) {
  %c = nf.matmul %a, %b : tensor<?x?xf16>, tensor<?x?xf16> -> tensor<?x?xf16>
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, layout = #nf.layout<nhwc>} : tensor<?x?x?x8xf16>, tensor<16x3x3x8xf16> -> tensor<?x?x?x16xf16>
  return %c, %y : tensor<?x?xf16>, tensor<?x?x?x16xf16>
}
)mlir";

std::vector<std::string>
allSources(const std::string &arch = normfuse::runtime::kDefaultGpuTarget) {
  std::vector<std::string> sources;
  for (const char *schedule : {"warp-rows", "block-row-registers",
                               "block-row-streaming", "split-row", "auto"}) {
    // Forward rows of 2048, and of 2047 (peeled), under each forced
    // schedule; gradient rows of 512 (16 elements a thread in warp rows)
    // and of 509 (peeled) forced, and of 32768 (a cluster of blocks on
    // sm_90) and 5121 (peeled: a block row, f64 a cluster) under "auto".
    bool automatic = std::string(schedule) == "auto";
    std::string module;
    for (const char *dtype : kDTypes)
      for (const char *op : {"layer_norm", "rms_norm"}) {
        if (!automatic) {
          module += rowNormModule(dtype, op);
          module += rowNormModule(dtype, op, 2047, "_peeled");
        }
        bool center = std::string(op) == "layer_norm";
        auto d = *normfuse::parseDType(dtype);
        module +=
            nftest::rowNormGradIR(d, 16, automatic ? 32768 : 512, center,
                                  "grad_" + std::string(op) + "_" + dtype);
        module += nftest::rowNormGradIR(d, 16, automatic ? 5121 : 509, center,
                                        "grad_peeled_" + std::string(op) + "_" +
                                            dtype);
      }
    std::string source = printCUDA(module, schedule, false, false, arch);
    // Kernel names are unique per module, not across these sources: give
    // each source's kernels its schedule as a prefix.
    std::string prefix = schedule;
    for (char &ch : prefix)
      if (ch == '-')
        ch = '_';
    source = std::regex_replace(
        source,
        std::regex("(layer_norm|rms_norm)((?:_peeled)?)_(f32|f16|bf16|f64)_"),
        prefix + "_$1$2_$3_");
    sources.push_back(source);
  }
  std::string pointwise, groupNorms, channelReductions, products,
      groupNormGrads, linalg;
  for (const char *dtype : kDTypes) {
    linalg += linalgModule(dtype) + oddPointwiseModule(dtype);
    pointwise += pointwiseModule(dtype);
    groupNorms += groupNormModule(dtype);
    channelReductions += channelReductionModule(dtype);
    products += productModule(dtype);
    groupNormGrads += groupNormGradModule(dtype);
  }
  for (const char *dtype : {"i8", "i16", "i32", "i64"})
    linalg += integerModule(dtype);
  // Reductions split across blocks (too few results to fill the device):
  // an f32 sum and an argmax of a long row and an f16 maximum over the
  // rows of eight columns, the parts and their finish (two kernels each).
  linalg += R"mlir(
func.func @split_reductions(%x: tensor<1x65536xf32>, %h: tensor<8192x8xf16>) -> (tensor<1x1xf32>, tensor<1x8xf16>, tensor<1xi32>) {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<1x65536xf32>) -> tensor<1x1xf32>
  %m = tosa.reduce_max %h {axis = 0 : i32} : (tensor<8192x8xf16>) -> tensor<1x8xf16>
  %a = tosa.argmax %x {axis = 1 : i32} : (tensor<1x65536xf32>) -> tensor<1xi32>
  return %s, %m, %a : tensor<1x1xf32>, tensor<1x8xf16>, tensor<1xi32>
}
)mlir";
  // A gather of bf16 rows (its body loads from the table at computed
  // positions).
  linalg +=
      "func.func @gather(%t: tensor<1x512x64xbf16>, %i: tensor<1x100xi32>) "
      "-> tensor<1x100x64xbf16> {\n  %y = tosa.gather %t, %i : "
      "(tensor<1x512x64xbf16>, tensor<1x100xi32>) -> "
      "tensor<1x100x64xbf16>\n  return %y : tensor<1x100x64xbf16>\n}\n";
  // A concatenation of three f16 inputs and a pad of bools: window kernels.
  linalg +=
      "func.func @windows(%a: tensor<64x100xf16>, %b: tensor<64x28xf16>, %p: "
      "tensor<30x30xi1>) -> (tensor<64x228xf16>, tensor<32x33xi1>) {\n"
      "  %c = tosa.concat %a, %b, %a {axis = 1 : i32} : (tensor<64x100xf16>, "
      "tensor<64x28xf16>, tensor<64x100xf16>) -> tensor<64x228xf16>\n"
      "  %s = \"tosa.const\"() <{value = dense<[[1, 1], [0, 3]]> : "
      "tensor<2x2xi32>}> : () -> tensor<2x2xi32>\n"
      "  %v = \"tosa.const\"() <{value = dense<true> : tensor<i1>}> : () -> "
      "tensor<i1>\n"
      "  %q = tosa.pad %p, %s, %v : (tensor<30x30xi1>, tensor<2x2xi32>, "
      "tensor<i1>) -> tensor<32x33xi1>\n"
      "  return %c, %q : tensor<64x228xf16>, tensor<32x33xi1>\n}\n";
  // Windows and reductions of two results: a max pool of f16, an average
  // pool of f32 (its pad, the sums, the division), an argmax, a bilinear
  // resize (its body reads the input at computed positions) and an rfft2d.
  linalg += R"mlir(
func.func @pools(%h: tensor<2x32x32x64xf16>, %x: tensor<2x32x32x64xf32>) -> (tensor<2x16x16x64xf16>, tensor<2x32x32x64xf32>, tensor<2x32x32xi32>, tensor<2x63x63x64xf32>, tensor<2x32x17xf32>, tensor<2x32x17xf32>) {
  %m = tosa.max_pool2d %h {kernel = array<i64: 3, 3>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<2x32x32x64xf16>) -> tensor<2x16x16x64xf16>
  %a = tosa.avg_pool2d %x {acc_type = f32, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x32x32x64xf32>) -> tensor<2x32x32x64xf32>
  %i = tosa.argmax %x {axis = 3 : i32} : (tensor<2x32x32x64xf32>) -> tensor<2x32x32xi32>
  %r = tosa.resize %x {border = array<i64: 0, 0>, mode = "BILINEAR", offset = array<i64: 0, 0>, scale = array<i64: 2, 1, 2, 1>} : (tensor<2x32x32x64xf32>) -> tensor<2x63x63x64xf32>
  %s = tosa.slice %x {start = array<i64: 0, 0, 0, 0>, size = array<i64: 2, 32, 32, 1>} : (tensor<2x32x32x64xf32>) -> tensor<2x32x32x1xf32>
  %s3 = tosa.reshape %s {new_shape = array<i64: 2, 32, 32>} : (tensor<2x32x32x1xf32>) -> tensor<2x32x32xf32>
  %re, %im = tosa.rfft2d %s3 : (tensor<2x32x32xf32>) -> (tensor<2x32x17xf32>, tensor<2x32x17xf32>)
  return %m, %a, %i, %r, %re, %im : tensor<2x16x16x64xf16>, tensor<2x32x32x64xf32>, tensor<2x32x32xi32>, tensor<2x63x63x64xf32>, tensor<2x32x17xf32>, tensor<2x32x17xf32>
}
)mlir";
  // f64 to f16 in one rounding.
  linalg += "func.func @linalg_narrow_to_f16(%x: tensor<64x256xf64>) -> "
            "tensor<64x256xf16> {\n  %y = arith.truncf %x : "
            "tensor<64x256xf64> to tensor<64x256xf16>\n  return %y : "
            "tensor<64x256xf16>\n}\n";
  sources.push_back(printCUDA(linalg, "auto", false, false, arch));
  sources.push_back(printCUDA(groupNormGrads, "auto", false, false, arch));
  sources.push_back(printCUDA(products, "auto", true, false, arch));
  sources.push_back(printCUDA(channelReductions, "auto", false, false, arch));
  sources.push_back(printCUDA(pointwise, "auto", false, false, arch));
  sources.push_back(printCUDA(groupNorms, "auto", true, false, arch));
  sources.push_back(printCUDA(kDynamicShapesModule, "auto", true, false, arch));
  return sources;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Compiled {
  bool ok = false;
  std::string log;
  std::string ptx;
  std::string cubin;
};

/// What NVRTC gives for `source` with `options`, compiled now.
Compiled runNVRTC(const std::string &source,
                  const std::vector<std::string> &optionText, bool ptx) {
  Compiled result;
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), "nf_kernels.cu", 0, nullptr,
                         nullptr) != NVRTC_SUCCESS) {
    result.log = "nvrtcCreateProgram failed";
    return result;
  }
  std::vector<const char *> options;
  for (const std::string &option : optionText)
    options.push_back(option.c_str());
  nvrtcResult compiled =
      nvrtcCompileProgram(program, int(options.size()), options.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  result.log.resize(logSize);
  nvrtcGetProgramLog(program, result.log.data());
  result.ok = compiled == NVRTC_SUCCESS;
  if (result.ok && ptx) {
    size_t ptxSize = 0;
    nvrtcGetPTXSize(program, &ptxSize);
    result.ptx.resize(ptxSize);
    nvrtcGetPTX(program, result.ptx.data());
  } else if (result.ok) {
    size_t cubinBytes = 0;
    nvrtcGetCUBINSize(program, &cubinBytes);
    result.cubin.resize(cubinBytes);
    nvrtcGetCUBIN(program, result.cubin.data());
  }
  nvrtcDestroyProgram(&program);
  return result;
}

/// Keeps the 256 most recently used entries of the NVRTC cache (a full
/// run of the tests makes about 75, each a few hundred KB): changed
/// kernels leave their old entries behind.
void pruneNVRTCCache() {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const auto &e : fs::directory_iterator(NF_NVRTC_TEST_CACHE, error))
    entries.push_back({e.last_write_time(error), e.path()});
  constexpr size_t kKept = 256;
  if (entries.size() <= kKept)
    return;
  std::sort(entries.begin(), entries.end());
  for (size_t i = 0; i + kKept < entries.size(); ++i)
    fs::remove(entries[i].second, error);
}

/// NVRTC's result for `source` on `arch`: from the build folder's cache of
/// earlier compiles (NF_NVRTC_TEST_CACHE: a file per source, options and
/// NVRTC version, written whole under a temporary name and renamed), or
/// compiled and kept there (an entry that does not read back whole is
/// compiled again). Three tests compile every kernel for sm_90, and a rerun
/// with unchanged kernels compiles none of them again.
Compiled compileWithNVRTC(const std::string &source, const std::string &arch) {
  std::vector<std::string> options = {"--gpu-architecture=" + arch,
                                      std::string("--include-path=") +
                                          NF_CUDA_INCLUDE_DIR,
                                      "--std=c++17", "-Xptxas=-v"};
  bool ptx = arch.rfind("compute_", 0) == 0;
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string key =
      "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + "\n";
  for (const std::string &option : options)
    key += option + "\n";
  std::string path = std::string(NF_NVRTC_TEST_CACHE) + "/" +
                     normfuse::runtime::sha256Hex(key + source);
  // "ok log-bytes binary-bytes\n", the log, the PTX or cubin: sizes that
  // add up to the file's.
  auto read = [&](Compiled &c) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    auto fileBytes = static_cast<size_t>(
        std::max<std::streamoff>(0, static_cast<std::streamoff>(in.tellg())));
    in.seekg(0);
    size_t logBytes = 0, binaryBytes = 0;
    if (!(in >> c.ok >> logBytes >> binaryBytes) || in.get() != '\n' ||
        logBytes > fileBytes || binaryBytes > fileBytes - logBytes ||
        static_cast<size_t>(in.tellg()) + logBytes + binaryBytes != fileBytes)
      return false;
    c.log.resize(logBytes);
    std::string &binary = ptx ? c.ptx : c.cubin;
    binary.resize(binaryBytes);
    return static_cast<bool>(in.read(c.log.data(), logBytes) &&
                             in.read(binary.data(), binaryBytes));
  };
  Compiled cached;
  if (read(cached)) {
    // Its time marks it used: the folder keeps the most recently used.
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    return cached;
  }
  Compiled result = runNVRTC(source, options, ptx);
  ::mkdir(NF_NVRTC_TEST_CACHE, 0755);
  pruneNVRTCCache();
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    const std::string &binary = ptx ? result.ptx : result.cubin;
    out << result.ok << ' ' << result.log.size() << ' ' << binary.size() << '\n'
        << result.log << binary;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    std::remove(tmp.c_str());
  return result;
}

class NVRTCCompileTest : public testing::TestWithParam<const char *> {
protected:
  /// Lowered for sm_90, or for sm_80 where the architecture has no
  /// thread-block clusters (which some sm_90 schedules take).
  static const std::vector<std::string> &sources(const std::string &arch) {
    static const std::vector<std::string> sm90 = allSources();
    static const std::vector<std::string> sm80 = allSources("sm_80");
    return arch == "sm_80" || arch == "compute_75" ? sm80 : sm90;
  }
};

TEST_P(NVRTCCompileTest, EveryKernelCompiles) {
  std::string arch = GetParam();
  for (const std::string &source : sources(arch)) {
    ASSERT_FALSE(source.empty());
    Compiled c = compileWithNVRTC(source, arch);
    EXPECT_TRUE(c.ok) << c.log;
    if (arch.rfind("sm_", 0) == 0)
      EXPECT_GT(c.cubin.size(), 0u);
    else
      EXPECT_NE(c.ptx.find(".entry"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, NVRTCCompileTest,
                         testing::Values("sm_80", "sm_90", "sm_90a",
                                         "compute_75"));

TEST(NVRTCResourceTest, NoKernelSpillsAtSm90) {
  static const std::regex spills(
      "Compiling entry function '([A-Za-z0-9_]+)'[^]*?"
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  int kernels = 0;
  for (const std::string &source : allSources()) {
    Compiled c = compileWithNVRTC(source, "sm_90");
    ASSERT_TRUE(c.ok) << c.log;
    for (std::sregex_iterator it(c.log.begin(), c.log.end(), spills), end;
         it != end; ++it) {
      ++kernels;
      EXPECT_EQ((*it)[2].str(), "0") << "spill stores in " << (*it)[1];
      EXPECT_EQ((*it)[3].str(), "0") << "spill loads in " << (*it)[1];
    }
  }
  // Forward, for rows of 2048 and of 2047 (peeled): 3 one-kernel schedules
  // x 4 dtypes x 2 norms, split rows (two kernels) x 4 dtypes x 2 norms.
  // Gradients, 4 dtypes x 2 norms, of 512 (or 32768) and 509 (or 5121,
  // peeled) columns: warp and
  // block rows two kernels each (dx, parameter sums), streaming (taken as
  // split) and split three, auto (32768 columns: a cluster row; 5121: a
  // block row, f64 a cluster row) two. 11
  // pointwise kernels x 4 dtypes, 2 group norms (NHWC across the channels: the
  // one kernel and its three-kernel fallback, f64 (80-byte runs) split: two;
  // NCHW a block row: one, f64 split: two), the instance norm (256 elements a
  // group in one-channel runs: across the channels, the one kernel and its
  // three-kernel fallback; f64 one warp-row kernel) and batch_norm_inference x
  // 4 dtypes. Per-channel reductions x 2 layouts x 4 dtypes:
  // batch_norm_training (NHWC: the moments, their finish, the normalize kernel;
  // NCHW: one kernel), batch_norm_grad (NHWC: the sums, their totals, the
  // finish, dx; NCHW: one kernel), bias_add_grad (sums, totals, finish).
  // Products x 4 dtypes: the fused matmul, a large matmul, a matmul of few
  // tiles (f16, bf16 and f32 split K: two kernels; f64 sums are not split), and
  // per layout the fused conv2d and the two gradients (f16 and bf16 NCHW
  // conv2d: two channels-last copies before it; their NCHW filter gradient:
  // one, of x). Group and instance norm gradients: four kernels each, and the
  // NHWC group norm gradient's one kernel, x 4 dtypes. Dynamic shapes: the
  // group norm (two), the instance norm gradient (four), batch_norm_training
  // (three), batch_norm_grad (NCHW: one), bias_add_grad (three), matmul and
  // conv2d (three each: K split at launch, the product on large tiles and on
  // small, the finish). Linalg kernels: the fused chain, the transpose and the
  // two reductions x 4 dtypes, and the narrowing from f64. Odd sizes: GELU, add
  // and tanh x 4 dtypes. Integers: the chain and three reductions x 4 widths.
  // Three split reductions (a sum, a maximum, an argmax), two kernels each. A
  // gather. Windows: a concatenation and a pad. Pools and two-result
  // reductions: the max pool (its pad, the window), the average pool (its pad,
  // the sums, the division), the argmax, the resize, the slice and the rfft2d.
  EXPECT_EQ(kernels,
            2 * (3 * 4 * 2 + 4 * 2 * 2) + (2 + 2 + 3 + 3 + 2) * 4 * 2 * 2 +
                11 * 4 + (3 * 4 + 2) + (1 + 1 + 1) * 4 + 1 + 3 * 3 +
                (3 + 4 + 3 + 1 + 1 + 3) * 4 + (3 + 3 * 2) * 4 + 2 * 2 + 2 + 3 +
                (2 * 4 + 1) * 4 + (2 + 4 + 3 + 1 + 3 + 2 * 3) + 4 * 4 + 1 +
                3 * 4 + 4 * 4 + 3 * 2 + 1 + 2 + (2 + 3 + 1 + 1 + 1 + 1));
}

// Rows held in registers stay within blocks whose threads have the
// registers: lowered for sm_90 (block rows, clusters of such blocks) and
// for sm_80 (block rows, then split rows), nothing spills in the norm
// gradients (16 elements a thread, four values each) of 8192 to 65536
// columns of f32, bf16 and f64, and of 5121 (peeled), with a scale, nor in f64
// layer norms of 32768 and 131072 columns. (Blocks of 1024 threads, 64
// registers a thread, spilled 228 bytes of a 16384-column f32 gradient, and 768
// of a 32768-column f64 layer norm.)
TEST(NVRTCResourceTest, LongRowsInRegistersDoNotSpill) {
  static const std::regex spills(
      "Compiling entry function '([A-Za-z0-9_]+)'[^]*?"
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  for (const char *arch : {"sm_90", "sm_80"}) {
    std::string module;
    for (const char *dtype : {"f32", "bf16", "f64"})
      for (int64_t cols : {5121, 8192, 16384, 65536})
        module += nftest::rowNormGradIR(
            *normfuse::parseDType(dtype), 4, cols, true,
            "g_" + std::string(dtype) + "_" + std::to_string(cols));
    for (int64_t cols : {32768, 131072})
      module +=
          rowNormModule("f64", "layer_norm", cols, "_" + std::to_string(cols));
    std::string source = printCUDA(module, "auto", false, false, arch);
    ASSERT_FALSE(source.empty());
    Compiled c = compileWithNVRTC(source, arch);
    ASSERT_TRUE(c.ok) << c.log;
    int kernels = 0;
    for (std::sregex_iterator it(c.log.begin(), c.log.end(), spills), end;
         it != end; ++it, ++kernels) {
      EXPECT_EQ((*it)[2].str(), "0") << arch << ": spills in " << (*it)[1];
      EXPECT_EQ((*it)[3].str(), "0") << arch << ": spills in " << (*it)[1];
    }
    // The dx kernel and the parameter sums of each, and a split row's
    // chunk sums; the layer norms' one or two kernels.
    EXPECT_GE(kernels, 26) << arch;
  }
}

/// A kernel whose schedule moves 16 bytes per access, and whether it must
/// also store 16 bytes at a time.
struct VectorKernel {
  std::string name;
  bool checkStores = true;
};

/// The 16-byte-vector kernels of `source`, from the comment the printer
/// writes above each kernel.
std::vector<VectorKernel> vectorKernels(const std::string &source) {
  static const std::regex schedule(
      "// ([A-Za-z0-9_]+): ([^\n]*) vector=([0-9]+)");
  std::vector<VectorKernel> kernels;
  for (std::sregex_iterator it(source.begin(), source.end(), schedule), end;
       it != end; ++it) {
    std::string kernel = (*it)[1];
    int width = std::stoi((*it)[3]);
    std::string dtype = kernel.find("_f64") != std::string::npos   ? "f64"
                        : kernel.find("_f32") != std::string::npos ? "f32"
                                                                   : "16";
    if (width * (dtype == "f64" ? 8 : dtype == "f32" ? 4 : 2) != 16)
      continue;
    // A split row's first kernel stores two scalars a block, by design, and
    // so do a channels-first reduction's blocks (one sum each) and a linalg
    // reduction's rows (one result each: only their loads are vectors).
    bool channelsFirst =
        (*it)[2].str().find("channels-first") != std::string::npos;
    bool checkStores = !endsWith(kernel, "_partial") &&
                       !endsWith(kernel, "_rowsums") && !channelsFirst &&
                       kernel.find("_reduce") == std::string::npos;
    kernels.push_back({kernel, checkStores});
  }
  return kernels;
}

TEST(NVRTCResourceTest, VectorSchedulesUse128BitGlobalAccesses) {
  int checked = 0;
  for (const std::string &source : allSources()) {
    Compiled c = compileWithNVRTC(source, "compute_90");
    ASSERT_TRUE(c.ok) << c.log;
    for (const VectorKernel &k : vectorKernels(source)) {
      size_t begin = c.ptx.find(".entry " + k.name + "(");
      ASSERT_NE(begin, std::string::npos) << k.name;
      size_t end = c.ptx.find(".entry ", begin + 1);
      std::string body = c.ptx.substr(begin, end - begin);
      static const std::regex wideLoad(
          "ld\\.global(\\.nc)?\\.v(4\\.(b|u|f|s)32|2\\.(b|u|f|s)64)");
      static const std::regex wideStore(
          "st\\.global\\.v(4\\.(b|u|f|s)32|2\\.(b|u|f|s)64)");
      EXPECT_TRUE(std::regex_search(body, wideLoad))
          << k.name << " has no 128-bit global load";
      if (k.checkStores)
        EXPECT_TRUE(std::regex_search(body, wideStore))
            << k.name << " has no 128-bit global store";
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

/// The SASS of `cubin` by cuobjdump, or why there is none.
std::string disassemble(const std::string &cubin, std::string &error) {
#ifdef NF_CUOBJDUMP
  char dir[] = "/tmp/nf-sass-XXXXXX";
  if (!::mkdtemp(dir)) {
    error = "mkdtemp failed";
    return "";
  }
  std::string path = std::string(dir) + "/kernels.cubin";
  std::ofstream(path, std::ios::binary) << cubin;
  std::string tool = NF_CUOBJDUMP;
  // nvdisasm lies beside cuobjdump.
  std::string command = "NVDISASM_PATH='" +
                        tool.substr(0, tool.find_last_of('/')) + "' '" + tool +
                        "' -sass '" + path + "' 2>&1";
  std::string sass;
  if (FILE *pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
      sass.append(buffer, n);
    if (::pclose(pipe) != 0)
      error = "cuobjdump failed:\n" + sass;
  }
  ::unlink(path.c_str());
  ::rmdir(dir);
  return sass;
#else
  (void)cubin;
  error = "no cuobjdump (scripts/setup.sh installs it where a CUDA toolkit is)";
  return "";
#endif
}

// What the GPU runs, not only what NVVM asked for: the sm_90 machine code of
// every 16-byte-vector kernel has 128-bit global loads (LDG.E.128, also in
// their .CONSTANT form for read-only data) and, where checked, stores.
TEST(NVRTCResourceTest, VectorSchedulesUse128BitAccessesInSASS) {
#ifndef NF_CUOBJDUMP
  GTEST_SKIP() << "no cuobjdump (scripts/setup.sh installs it where a CUDA "
                  "toolkit is)";
#endif
  int checked = 0;
  for (const std::string &source : allSources()) {
    Compiled c = compileWithNVRTC(source, "sm_90");
    ASSERT_TRUE(c.ok) << c.log;
    std::string error, sass = disassemble(c.cubin, error);
    ASSERT_EQ(error, "");
    for (const VectorKernel &k : vectorKernels(source)) {
      size_t begin = sass.find("Function : " + k.name + "\n");
      ASSERT_NE(begin, std::string::npos) << k.name << " is not in the SASS";
      size_t end = sass.find("Function : ", begin + 1);
      std::string body = sass.substr(begin, end - begin);
      EXPECT_NE(body.find("LDG.E.128"), std::string::npos)
          << k.name << " has no 128-bit global load in its SASS";
      if (k.checkStores)
        EXPECT_NE(body.find("STG.E.128"), std::string::npos)
            << k.name << " has no 128-bit global store in its SASS";
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

/// The printer's prelude and one of the simulator's test kernel files
/// (lib/Runtime/Sim/test/`file`: tensorcore.cu by default), as one source.
std::string tensorCoreSource(const std::string &file = "tensorcore.cu") {
  auto read = [](const std::string &path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  std::string prelude =
      read(std::string(NF_SOURCE_DIR) + "/lib/Target/CUDA/Prelude.cuh");
  std::string kernels =
      read(std::string(NF_SOURCE_DIR) + "/lib/Runtime/Sim/test/" + file);
  return prelude.empty() || kernels.empty() ? "" : prelude + kernels;
}

// The prelude's mma.sync (f16, bf16 and tf32), ldmatrix and cp.async
// wrappers are valid PTX for every architecture with m16n8k16 tensor cores,
// and are what the GPU runs: HMMA, LDSM and LDGSTS in the SASS.
TEST(NVRTCResourceTest, TensorCoreWrappersCompileToHMMAAndLDSM) {
  std::string source = tensorCoreSource();
  ASSERT_FALSE(source.empty());
  for (const char *arch : {"sm_80", "sm_90"}) {
    Compiled c = compileWithNVRTC(source, arch);
    ASSERT_TRUE(c.ok) << arch << ":\n" << c.log;
    std::string error, sass = disassemble(c.cubin, error);
    if (!error.empty())
      GTEST_SKIP() << error;
    EXPECT_NE(sass.find("HMMA.16816.F32 "), std::string::npos) << arch;
    EXPECT_NE(sass.find("HMMA.16816.F32.BF16"), std::string::npos) << arch;
    EXPECT_NE(sass.find("HMMA.1688.F32.TF32"), std::string::npos) << arch;
    EXPECT_NE(sass.find("LDSM.16.M88.4"), std::string::npos) << arch;
    EXPECT_NE(sass.find("LDSM.16.MT88.4"), std::string::npos) << arch;
    EXPECT_NE(sass.find("LDGSTS.E.BYPASS.128"), std::string::npos) << arch;
    EXPECT_NE(sass.find("LDGDEPBAR"), std::string::npos) << arch;
  }
}

// The prelude's mbarrier and TMA wrappers (lib/Runtime/Sim/test/tma.cu's
// kernels) are valid PTX for sm_90, where they are UTMALDG (2-d and 3-d
// boxes) and SYNCS; for sm_80 they compile to traps.
TEST(NVRTCResourceTest, TmaWrappersCompileToUTMALDGAndSYNCSAtSm90) {
  std::string source = tensorCoreSource("tma.cu");
  ASSERT_FALSE(source.empty());
  Compiled old = compileWithNVRTC(source, "sm_80");
  ASSERT_TRUE(old.ok) << old.log;
  Compiled c = compileWithNVRTC(source, "sm_90");
  ASSERT_TRUE(c.ok) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op : {"UTMALDG.2D", "UTMALDG.3D", "SYNCS.EXCH.64",
                         "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64"})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
}

/// The SASS NVRTC makes of the simulator's test kernels in `file` for
/// `arch` (empty, and the test skipped by the caller, without cuobjdump),
/// checking that `ops` are in it.
void expectTestKernelsHave(const std::string &file, const char *arch,
                           std::initializer_list<const char *> ops,
                           std::string &skip) {
  std::string source = tensorCoreSource(file);
  ASSERT_FALSE(source.empty());
  Compiled c = compileWithNVRTC(source, arch);
  ASSERT_TRUE(c.ok) << c.log;
  std::string sass = disassemble(c.cubin, skip);
  if (!skip.empty())
    return;
  for (const char *op : ops)
    EXPECT_NE(sass.find(op), std::string::npos)
        << op << " is not in the SASS of " << file;
}

// The warp-specialized pipeline's wrappers (lib/Runtime/Sim/test/
// pipeline.cu): a plain mbarrier arrival and a named barrier of the
// consumers, whose count is a register.
TEST(NVRTCResourceTest, PipelineWrappersCompileToNamedBarrierAndArrive) {
  std::string skip;
  expectTestKernelsHave("pipeline.cu", "sm_90",
                        {"BAR.SYNC.DEFER_BLOCKING 0x1, R",
                         "SYNCS.ARRIVE.TRANS64.A1T0 ", "SYNCS.ARRIVE.TRANS64 ",
                         "UTMALDG.2D"},
                        skip);
  if (!skip.empty())
    GTEST_SKIP() << skip;
}

// The wrappers a cluster of blocks sharing an operand's tiles takes
// (lib/Runtime/Sim/test/multicast.cu), for sm_90a: a TMA load multicast to
// the cluster's blocks and an arrival on another block's mbarrier (a
// reduction into the cluster's shared memory), after the cluster barrier.
TEST(NVRTCResourceTest, MulticastWrappersCompileToUTMALDGMulticastAtSm90a) {
  std::string skip;
  expectTestKernelsHave("multicast.cu", "sm_90a",
                        {"UTMALDG.2D.MULTICAST",
                         "SYNCS.ARRIVE.TRANS64.RED.A1T0",
                         "SYNCS.ARRIVE.TRANS64.A1T0", "UCGABAR_ARV"},
                        skip);
  if (!skip.empty())
    GTEST_SKIP() << skip;
}

// The prelude's wgmma wrappers (m64n64k16 and m64n128k16, f16 and bf16,
// K-major and MN-major operands) compile for sm_90a to HGMMA, which reads
// shared memory by descriptors, and the fences around it.
TEST(NVRTCResourceTest, WgmmaWrappersCompileToHGMMAAtSm90a) {
  std::string source = tensorCoreSource();
  ASSERT_FALSE(source.empty());
  Compiled c = compileWithNVRTC(source, "sm_90a");
  ASSERT_TRUE(c.ok) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op : {"HGMMA.64x128x16.F32 ", "HGMMA.64x128x16.F32.BF16 ",
                         "HGMMA.64x64x16.F32 ", "WARPGROUP.ARRIVE",
                         "WARPGROUP.DEPBAR.LE", "FENCE.VIEW.ASYNC.S"})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
  // The MN-major (transposed) operands.
  EXPECT_NE(sass.find(".tnspA.tnspB"), std::string::npos);
}

// Products under a written wgmma schedule (a 128 x 256 tile of two
// warpgroups in 4 stages of 64-wide K; both operands transposed on 128 x
// 128 in 3 stages of 32), printed for an sm_90a target: HGMMA of the
// warpgroup's width fed by LDGSTS, one group left in flight in the K loop
// (WARPGROUP.DEPBAR.LE gsb0, 0x1), no spills, and nothing ptxas serializes.
TEST(NVRTCResourceTest, WgmmaProductsUseHGMMAWithoutSpillsAtSm90a) {
  std::string module =
      "func.func @wg_f16(%a: tensor<1024x512xf16>, %b: tensor<512x1024xf16>) "
      "-> tensor<1024x1024xf16> {\n"
      "  %p = nf.matmul %a, %b {nf.gpu_schedule = \"tensor-core-product "
      "tile=128x256x64 warps=8x1 stages=4 wgmma\"} : tensor<1024x512xf16>, "
      "tensor<512x1024xf16> -> tensor<1024x1024xf16>\n"
      "  return %p : tensor<1024x1024xf16>\n}\n"
      "func.func @wg_t_bf16(%a: tensor<512x1024xbf16>, %b: "
      "tensor<1024x512xbf16>) -> tensor<1024x1024xbf16> {\n"
      "  %p = nf.matmul %a, %b {transpose_lhs, transpose_rhs, "
      "nf.gpu_schedule = \"tensor-core-product tile=128x128x32 warps=4x1 "
      "stages=3 wgmma\"} : tensor<512x1024xbf16>, tensor<1024x512xbf16> -> "
      "tensor<1024x1024xbf16>\n"
      "  return %p : tensor<1024x1024xbf16>\n}\n";
  std::string source = printCUDA(module, "auto", false, false, "sm_90a");
  ASSERT_FALSE(source.empty());
  Compiled c = compileWithNVRTC(source, "sm_90a");
  ASSERT_TRUE(c.ok) << c.log;
  static const std::regex spills(
      "Compiling entry function '([A-Za-z0-9_]+)'[^]*?"
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  int kernels = 0;
  for (std::sregex_iterator it(c.log.begin(), c.log.end(), spills), end;
       it != end; ++it, ++kernels) {
    EXPECT_EQ((*it)[2].str(), "0") << "spill stores in " << (*it)[1];
    EXPECT_EQ((*it)[3].str(), "0") << "spill loads in " << (*it)[1];
  }
  EXPECT_EQ(kernels, 2) << c.log;
  EXPECT_EQ(c.log.find("serialized"), std::string::npos) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *k : {"wg_f16_matmul", "wg_t_bf16_matmul"}) {
    size_t begin = sass.find(std::string("Function : ") + k + "\n");
    ASSERT_NE(begin, std::string::npos) << k << " is not in the SASS";
    std::string body =
        sass.substr(begin, sass.find("Function : ", begin + 1) - begin);
    // A matmul's B is MN-major (tnspB); transposed, A is and B is not.
    bool wide = std::string(k) == "wg_f16_matmul";
    for (const char *op :
         {wide ? "HGMMA.64x256x16.F32 " : "HGMMA.64x128x16.F32.BF16 ",
          wide ? ".tnspB" : ".tnspA", "LDGSTS.E.BYPASS.128",
          "WARPGROUP.DEPBAR.LE gsb0, 0x1", "STG.E.128"})
      EXPECT_NE(body.find(op), std::string::npos)
          << k << " has no " << op << " in its SASS";
    EXPECT_EQ(body.find(wide ? ".tnspA" : ".tnspB"), std::string::npos) << k;
    EXPECT_EQ(body.find("LDSM"), std::string::npos) << k;
  }
}

/// The barriers of the whole block (`bar.sync 0`) in `sass`.
size_t blockBarriers(const std::string &sass) {
  const std::string barrier = "BAR.SYNC.DEFER_BLOCKING 0x0 ";
  size_t count = 0;
  for (size_t at = sass.find(barrier); at != std::string::npos;
       at = sass.find(barrier, at + 1))
    ++count;
  return count;
}

/// The registers ptxas reports for the one kernel `c` holds, checking that
/// it spills nothing (a failure, and 1000 registers, where the log has no
/// count).
int registersWithoutSpills(const Compiled &c) {
  std::smatch m;
  static const std::regex registers("Used ([0-9]+) registers");
  EXPECT_NE(c.log.find("0 bytes spill stores, 0 bytes spill loads"),
            std::string::npos)
      << c.log;
  if (std::regex_search(c.log, m, registers))
    return std::stoi(m[1].str());
  ADD_FAILURE() << "no register count in\n" << c.log;
  return 1000;
}

/// A 1024 x 512 x 1024 f16 matmul under the written schedule
/// "tensor-core-product `words`", printed for sm_90a (`source`) and
/// compiled by NVRTC.
struct WrittenProduct {
  std::string source;
  Compiled compiled;
};
WrittenProduct compileWrittenProduct(const std::string &words) {
  std::string module =
      "func.func @p(%a: tensor<1024x512xf16>, %b: tensor<512x1024xf16>) "
      "-> tensor<1024x1024xf16> {\n"
      "  %p = nf.matmul %a, %b {nf.gpu_schedule = \"tensor-core-product " +
      words +
      "\"} : tensor<1024x512xf16>, tensor<512x1024xf16> -> "
      "tensor<1024x1024xf16>\n"
      "  return %p : tensor<1024x1024xf16>\n}\n";
  WrittenProduct w;
  w.source = printCUDA(module, "auto", false, false, "sm_90a");
  if (!w.source.empty())
    w.compiled = compileWithNVRTC(w.source, "sm_90a");
  return w;
}

// The same 128 x 256 x 64 tile fed by TMA loads (`wgmma tma`): one thread
// loads each stage's boxes (UTMALDG) completing on an mbarrier (SYNCS);
// no thread copies by cp.async (no LDGSTS); fewer registers than the
// cp.async producer's 186 (the copies' addresses are gone); no spills.
TEST(NVRTCResourceTest, WgmmaTmaProductUsesUTMALDGAndNoLDGSTSAtSm90a) {
  WrittenProduct w =
      compileWrittenProduct("tile=128x256x64 warps=8x1 stages=4 wgmma tma");
  ASSERT_FALSE(w.source.empty());
  const Compiled &c = w.compiled;
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_LT(registersWithoutSpills(c), 186) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op :
       {"UTMALDG.2D", "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
        "HGMMA.64x256x16.F32 ", "WARPGROUP.DEPBAR.LE gsb0, 0x1"})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
  EXPECT_EQ(sass.find("LDGSTS"), std::string::npos);
}

// The same tile warp specialized (`wgmma tma warp-specialized`, 3 stages
// and the result tile's own 64 KiB): 384 threads, so ptxas has at most 168
// registers a thread (65536 / 384, in 8s), and uses them without spills;
// the block's one barrier is the one after the mbarriers are made (BAR.SYNC
// 0x0), the consumers meet at named barrier 1 and release stages by plain
// arrivals (SYNCS.ARRIVE.TRANS64.A1T0).
TEST(NVRTCResourceTest, WarpSpecializedProductHasOneBlockBarrierAtSm90a) {
  WrittenProduct w = compileWrittenProduct(
      "tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized");
  ASSERT_FALSE(w.source.empty());
  EXPECT_NE(w.source.find("__launch_bounds__(384, 1)"), std::string::npos);
  const Compiled &c = w.compiled;
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_LE(registersWithoutSpills(c), 168) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op :
       {"UTMALDG.2D", "SYNCS.ARRIVE.TRANS64 ", "SYNCS.ARRIVE.TRANS64.A1T0 ",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT", "HGMMA.64x256x16.F32 ",
        "WARPGROUP.DEPBAR.LE gsb0, 0x1", "BAR.SYNC.DEFER_BLOCKING 0x1, ",
        "STG.E.128"})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
  EXPECT_EQ(blockBarriers(sass), 1u) << sass;
  EXPECT_EQ(sass.find("LDGSTS"), std::string::npos);
}

// Warp specialized without TMA (`wgmma warp-specialized`): the producer
// warpgroup copies every stage by cp.async (LDGSTS), then, its copies
// landed, fences them for wgmma (FENCE.VIEW.ASYNC.S) and arrives on the
// stage's full mbarrier (SYNCS.ARRIVE); no TMA, one block barrier, no
// spills within 168 registers.
TEST(NVRTCResourceTest, CopyingProducerFeedsWgmmaAtSm90a) {
  WrittenProduct w = compileWrittenProduct(
      "tile=128x256x64 warps=8x1 stages=3 wgmma warp-specialized");
  ASSERT_FALSE(w.source.empty());
  EXPECT_NE(w.source.find("__launch_bounds__(384, 1)"), std::string::npos);
  const Compiled &c = w.compiled;
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_LE(registersWithoutSpills(c), 168) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op :
       {"LDGSTS.E.BYPASS.128", "FENCE.VIEW.ASYNC.S",
        "SYNCS.ARRIVE.TRANS64.A1T0 ", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
        "HGMMA.64x256x16.F32 ", "BAR.SYNC.DEFER_BLOCKING 0x1, "})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
  EXPECT_EQ(sass.find("UTMALDG"), std::string::npos);
  EXPECT_EQ(blockBarriers(sass), 1u) << sass;
}

// Two teams of consumers taking turns (`pingpong`), each a whole 128 x
// 128 tile (two m64n128 slabs: 128 accumulators a thread), 4 stages and a
// staging buffer a team: 384 threads within 168 registers and no spills;
// the teams meet at named barriers 1 and 2, and the block once.
TEST(NVRTCResourceTest, PingpongProductHasABarrierATeamAtSm90a) {
  WrittenProduct w =
      compileWrittenProduct("tile=128x128x64 warps=4x1 stages=4 "
                            "wgmma tma warp-specialized pingpong");
  ASSERT_FALSE(w.source.empty());
  EXPECT_NE(w.source.find("__launch_bounds__(384, 1)"), std::string::npos);
  const Compiled &c = w.compiled;
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_LE(registersWithoutSpills(c), 168) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op :
       {"UTMALDG.2D", "SYNCS.ARRIVE.TRANS64.A1T0 ", "HGMMA.64x128x16.F32 ",
        "BAR.SYNC.DEFER_BLOCKING 0x1, ", "BAR.SYNC.DEFER_BLOCKING 0x2, ",
        "STG.E.128"})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
  EXPECT_EQ(blockBarriers(sass), 1u) << sass;
}

// Two consumer warpgroups and a producer (384 threads, launched with 168
// registers a thread): the producer keeps 40 where it issues TMA loads and
// 72 where its threads copy by cp.async (setmaxnreg.dec), the consumers
// take the 232 or 216 that frees (setmaxnreg.inc), each its role's first
// act. ptxas takes both (no warning that it ignored them, C7508), spills
// nothing, gives the kernel exactly the 168 the block's registers are
// counted from (fewer, and the consumers' increase would wait forever),
// and the SASS has both (USETMAXREG). One consumer warpgroup (256
// threads, 255 registers) has nothing to gain: no setmaxnreg.
TEST(NVRTCResourceTest, ConsumersTakeTheProducersRegistersAtSm90a) {
  struct Case {
    const char *words, *producer, *consumers;
  };
  for (const Case &k :
       {Case{"tile=128x128x64 warps=4x1 stages=4 wgmma tma warp-specialized "
             "pingpong",
             "nf_setmaxnreg<false, 40>();", "nf_setmaxnreg<true, 232>();"},
        Case{"tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized",
             "nf_setmaxnreg<false, 40>();", "nf_setmaxnreg<true, 232>();"},
        Case{"tile=128x256x64 warps=8x1 stages=3 wgmma warp-specialized",
             "nf_setmaxnreg<false, 72>();", "nf_setmaxnreg<true, 216>();"}}) {
    WrittenProduct w = compileWrittenProduct(k.words);
    ASSERT_FALSE(w.source.empty());
    EXPECT_NE(w.source.find(k.producer), std::string::npos) << k.words;
    EXPECT_NE(w.source.find(k.consumers), std::string::npos) << k.words;
    const Compiled &c = w.compiled;
    ASSERT_TRUE(c.ok) << c.log;
    EXPECT_EQ(c.log.find("setmaxnreg"), std::string::npos) << c.log;
    EXPECT_EQ(c.log.find("C7508"), std::string::npos) << c.log;
    EXPECT_EQ(registersWithoutSpills(c), 168) << k.words << "\n" << c.log;
    std::string error, sass = disassemble(c.cubin, error);
    if (!error.empty())
      GTEST_SKIP() << error;
    EXPECT_NE(sass.find("USETMAXREG"), std::string::npos) << k.words;
  }
  WrittenProduct one = compileWrittenProduct(
      "tile=128x128x64 warps=4x1 stages=4 wgmma tma warp-specialized");
  ASSERT_FALSE(one.source.empty());
  EXPECT_EQ(one.source.find("nf_setmaxnreg<true,"), std::string::npos);
  EXPECT_EQ(one.source.find("nf_setmaxnreg<false,"), std::string::npos);
}

// The same in clusters of two sharing B's tiles (`multicast`): each block
// multicasts its half of B (UTMALDG.2D.MULTICAST) and loads its own A, the
// consumers release each stage in both blocks (an arrival on the other's
// mbarrier: SYNCS.ARRIVE.TRANS64.RED), the cluster meets once after the
// mbarriers are made (UCGABAR), and nothing spills.
TEST(NVRTCResourceTest, MulticastProductSharesBAcrossTheClusterAtSm90a) {
  WrittenProduct w =
      compileWrittenProduct("tile=128x256x64 warps=8x1 stages=3 wgmma tma "
                            "warp-specialized multicast");
  ASSERT_FALSE(w.source.empty());
  EXPECT_NE(w.source.find("__cluster_dims__(2, 1, 1)"), std::string::npos);
  const Compiled &c = w.compiled;
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_LE(registersWithoutSpills(c), 168) << c.log;
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  for (const char *op :
       {"UTMALDG.2D.MULTICAST", "UTMALDG.2D ", "SYNCS.ARRIVE.TRANS64.RED.A1T0",
        "UCGABAR_ARV", "HGMMA.64x256x16.F32 ", "BAR.SYNC.DEFER_BLOCKING 0x1, "})
    EXPECT_NE(sass.find(op), std::string::npos) << op << " is not in the SASS";
}

// The products' tensor-core kernels (every one the corpus holds) run on the
// tensor cores: HMMA, fed
// by LDSM from shared memory that LDGSTS (cp.async) fills, at sm_80 and
// sm_90.
TEST(NVRTCResourceTest, TensorCoreProductsUseHMMALDSMAndLDGSTSInSASS) {
  static const std::regex schedule(
      "// ([A-Za-z0-9_]+): tensor-core-product ([^\n]*)");
  int checked = 0;
  for (const std::string &source : allSources()) {
    // Each kernel, and whether it splits K.
    std::vector<std::pair<std::string, bool>> kernels;
    for (std::sregex_iterator it(source.begin(), source.end(), schedule), end;
         it != end; ++it)
      kernels.push_back(
          {(*it)[1], (*it)[2].str().find("split-k=") != std::string::npos});
    if (kernels.empty())
      continue;
    for (const char *arch : {"sm_80", "sm_90"}) {
      Compiled c = compileWithNVRTC(source, arch);
      ASSERT_TRUE(c.ok) << c.log;
      std::string error, sass = disassemble(c.cubin, error);
      if (!error.empty())
        GTEST_SKIP() << error;
      for (const auto &[k, split] : kernels) {
        size_t begin = sass.find("Function : " + k + "\n");
        ASSERT_NE(begin, std::string::npos) << k << " is not in the SASS";
        size_t end = sass.find("Function : ", begin + 1);
        std::string body = sass.substr(begin, end - begin);
        // The NCHW data gradient gathers both operands one element at a
        // time (dy along the positions, the filter's taps): no cp.async.
        bool gathered = k.find("_nchw_") != std::string::npos &&
                        k.find("backprop_input") != std::string::npos;
        for (const char *op :
             {"HMMA.16816.F32", "LDSM.16.", "LDGSTS.E.BYPASS.128"})
          if (!gathered || std::string(op) != "LDGSTS.E.BYPASS.128")
            EXPECT_NE(body.find(op), std::string::npos)
                << k << " at " << arch << " has no " << op << " in its SASS";
        // The static matmuls' rows (N = 128, 768, 2048) are whole 16-byte
        // chunks: the result goes out through shared memory in 16-byte
        // stores; a split K's partial sums go out as a lane's f32 pairs
        // (its second kernel's 16-byte accesses are checked with the
        // other vector kernels').
        if (k.rfind("mm_", 0) == 0)
          EXPECT_NE(body.find(split ? "STG.E.64" : "STG.E.128"),
                    std::string::npos)
              << k << " at " << arch << " has no " << (split ? "8" : "16")
              << "-byte store in its SASS";
        // The NCHW convolution's and data gradient's planes (8 x 8, 16 x
        // 16) are whole chunks: a channel's positions go out 16 bytes at a
        // time through shared memory.
        if (k.find("_nchw_") != std::string::npos &&
            k.find("backprop_filter") == std::string::npos)
          EXPECT_NE(body.find("STG.E.128"), std::string::npos)
              << k << " at " << arch << " has no 16-byte store in its SASS";
        ++checked;
      }
    }
  }
  // The three matmuls, the convolution and its two gradients in both
  // layouts, f16 and bf16, and the f16 matmul and convolution of dynamic
  // shape (cp.async where the runs turn out whole), each on large tiles and
  // on small, at two architectures.
  EXPECT_EQ(checked, (9 * 2 + 2 * 2) * 2);
}

// f32 products with tf32 allowed (the fused matmul, a large one, one that
// splits K, the convolutions and their gradients in both layouts) run on
// the tensor cores as tf32 (HMMA.1688.F32.TF32), their operands staged by
// cp.async (LDGSTS) but where the NCHW data gradient gathers them, with no
// spills at sm_90 (the K-major fragments are loaded element by element, so
// their addresses take registers).
TEST(NVRTCResourceTest, Tf32ProductsUseHMMA1688WithoutSpills) {
  static const std::regex schedule(
      "// ([A-Za-z0-9_]+): tensor-core-product [^\n]* tf32[ \n]");
  static const std::regex spills(
      "Compiling entry function '([A-Za-z0-9_]+)'[^]*?"
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  std::string source =
      printCUDA(productModule("f32"), "auto", /*fuse=*/true, /*tf32=*/true);
  std::vector<std::string> kernels;
  for (std::sregex_iterator it(source.begin(), source.end(), schedule), end;
       it != end; ++it)
    kernels.push_back((*it)[1]);
  // mm, mm_large, mm_split; conv2d and both gradients in two layouts.
  ASSERT_EQ(kernels.size(), 9u) << source;
  for (const char *arch : {"sm_80", "sm_90"}) {
    Compiled c = compileWithNVRTC(source, arch);
    ASSERT_TRUE(c.ok) << c.log;
    if (std::string(arch) == "sm_90")
      for (std::sregex_iterator it(c.log.begin(), c.log.end(), spills), end;
           it != end; ++it) {
        EXPECT_EQ((*it)[2].str(), "0") << "spill stores in " << (*it)[1];
        EXPECT_EQ((*it)[3].str(), "0") << "spill loads in " << (*it)[1];
      }
    std::string error, sass = disassemble(c.cubin, error);
    if (!error.empty())
      GTEST_SKIP() << error;
    for (const std::string &k : kernels) {
      size_t begin = sass.find("Function : " + k + "\n");
      ASSERT_NE(begin, std::string::npos) << k << " is not in the SASS";
      size_t end = sass.find("Function : ", begin + 1);
      std::string body = sass.substr(begin, end - begin);
      EXPECT_NE(body.find("HMMA.1688.F32.TF32"), std::string::npos)
          << k << " at " << arch << " has no tf32 HMMA";
      bool gathered = k.find("_nchw_") != std::string::npos &&
                      k.find("backprop_input") != std::string::npos;
      if (!gathered)
        EXPECT_NE(body.find("LDGSTS.E.BYPASS.128"), std::string::npos)
            << k << " at " << arch << " has no 16-byte cp.async";
    }
  }
}

// An NCHW data gradient whose channels are whole 16-byte runs (ResNet's)
// reads channels-last copies of dy and the filter: two copy kernels, then
// the product stages both by cp.async (LDGSTS) into HMMA and stores dx's
// planes 16 bytes at a time (STG.E.128), with no spills.
TEST(NVRTCResourceTest, NCHWDataGradientStagesChannelsLastCopies) {
  static const std::regex spills(
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  const char *module = R"mlir(
func.func @dx(%dy: tensor<32x64x28x28xf16>, %w: tensor<64x32x3x3xf16>) -> tensor<32x32x28x28xf16> {
  %dx = nf.conv2d_backprop_input %dy, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, layout = #nf.layout<nchw>} : tensor<32x64x28x28xf16>, tensor<64x32x3x3xf16> -> tensor<32x32x28x28xf16>
  return %dx : tensor<32x32x28x28xf16>
}
)mlir";
  std::string source = printCUDA(module, "auto");
  for (const char *kernel :
       {"// dx_grad_output_nhwc: channels-last-copy",
        "// dx_filter_ohwi: channels-last-copy",
        "// dx_conv2d_backprop_input: tensor-core-product tile=128x64x32 "
        "warps=2x2 stages=3\n"})
    EXPECT_NE(source.find(kernel), std::string::npos) << kernel << source;
  Compiled c = compileWithNVRTC(source, "sm_90");
  ASSERT_TRUE(c.ok) << c.log;
  int kernels = 0;
  for (std::sregex_iterator it(c.log.begin(), c.log.end(), spills), end;
       it != end; ++it, ++kernels)
    EXPECT_EQ((*it)[1].str() + " " + (*it)[2].str(), "0 0") << c.log;
  EXPECT_EQ(kernels, 3);
  std::string error, sass = disassemble(c.cubin, error);
  if (!error.empty())
    GTEST_SKIP() << error;
  size_t begin = sass.find("Function : dx_conv2d_backprop_input\n");
  ASSERT_NE(begin, std::string::npos);
  std::string body =
      sass.substr(begin, sass.find("Function : ", begin + 1) - begin);
  for (const char *op : {"LDGSTS.E.BYPASS.128", "HMMA.16816.F32", "STG.E.128"})
    EXPECT_NE(body.find(op), std::string::npos) << "no " << op;
}

// The SIMT products of 64 x 64 and 128 x 128 tiles read their operands from
// shared memory 16 bytes at a time (LDS.128) into fused multiply-adds
// (FFMA, DFMA for f64), at sm_90; the large f32 matmul's operands, whole
// 16-byte chunks, come from global memory as LDG.E.128.
TEST(NVRTCResourceTest, SimtProductsUseLDS128InSASS) {
#ifndef NF_CUOBJDUMP
  GTEST_SKIP() << "no cuobjdump (scripts/setup.sh installs it where a CUDA "
                  "toolkit is)";
#endif
  static const std::regex schedule(
      "// ([A-Za-z0-9_]+): tiled-product tile=(64x64|128x128)x");
  int checked = 0, large = 0;
  for (const std::string &source : allSources()) {
    std::vector<std::pair<std::string, bool>> kernels;
    for (std::sregex_iterator it(source.begin(), source.end(), schedule), end;
         it != end; ++it)
      kernels.push_back({(*it)[1], (*it)[2] == "128x128"});
    if (kernels.empty())
      continue;
    Compiled c = compileWithNVRTC(source, "sm_90");
    ASSERT_TRUE(c.ok) << c.log;
    std::string error, sass = disassemble(c.cubin, error);
    ASSERT_EQ(error, "");
    for (const auto &[k, wide] : kernels) {
      size_t begin = sass.find("Function : " + k + "\n");
      ASSERT_NE(begin, std::string::npos) << k << " is not in the SASS";
      size_t end = sass.find("Function : ", begin + 1);
      std::string body = sass.substr(begin, end - begin);
      bool f64 = k.find("_f64") != std::string::npos;
      EXPECT_NE(body.find("LDS.128"), std::string::npos)
          << k << " has no 16-byte shared load in its SASS";
      EXPECT_NE(body.find(f64 ? "DFMA" : "FFMA"), std::string::npos) << k;
      if (k.rfind("mm_large_f32", 0) == 0) {
        EXPECT_TRUE(wide) << k << " does not take 128 x 128 tiles";
        EXPECT_NE(body.find("LDG.E.128"), std::string::npos)
            << k << " has no 16-byte global load in its SASS";
        ++large;
      }
      ++checked;
    }
  }
  // The f32 and f64 matmuls: the fused, the large and the split one
  // (the convolutions' results have 32 rows or columns or fewer).
  EXPECT_EQ(large, 1);
  EXPECT_EQ(checked, 3 * 2);
}

// A row norm whose x outgrows the L2 of an H100 (16384 x 4096: 268 MB of
// f32, 134 MB of bf16) stores y evict-first (STG.E.EF.128, from
// st.global.cs) and nothing else of 16 bytes; one that fits (64 x 4096)
// stores y as usual. x is loaded as usual in both.
TEST(NVRTCResourceTest, RowNormsLargerThanL2StoreYEvictFirstInSASS) {
#ifndef NF_CUOBJDUMP
  GTEST_SKIP() << "no cuobjdump (scripts/setup.sh installs it where a CUDA "
                  "toolkit is)";
#endif
  for (const char *dtype : {"f32", "bf16"}) {
    SCOPED_TRACE(dtype);
    std::string module;
    for (int64_t rows : {16384, 64}) {
      std::string x = "tensor<" + std::to_string(rows) + "x4096x" + dtype + ">";
      std::string p = std::string("tensor<4096x") + dtype + ">";
      std::string st = "tensor<" + std::to_string(rows) + "x1xf32>";
      module += "func.func @rows_" + std::to_string(rows) + "(%x: " + x +
                ", %s: " + p + ") -> " + x +
                " {\n  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64} : (" +
                x + ", " + p + ") -> (" + x + ", " + st +
                ")\n  return %y : " + x + "\n}\n";
    }
    std::string source = printCUDA(module, "auto");
    Compiled c = compileWithNVRTC(source, "sm_90");
    ASSERT_TRUE(c.ok) << c.log;
    std::string error, sass = disassemble(c.cubin, error);
    ASSERT_EQ(error, "");
    auto body = [&](const std::string &kernel) {
      size_t begin = sass.find("Function : " + kernel + "\n");
      EXPECT_NE(begin, std::string::npos) << kernel << " is not in the SASS";
      if (begin == std::string::npos)
        return std::string();
      return sass.substr(begin, sass.find("Function : ", begin + 1) - begin);
    };
    std::string large = body("rows_16384_rms_norm");
    EXPECT_NE(large.find("STG.E.EF.128"), std::string::npos) << large;
    EXPECT_EQ(large.find("STG.E.128"), std::string::npos) << large;
    EXPECT_NE(large.find("LDG.E.128"), std::string::npos) << large;
    std::string small = body("rows_64_rms_norm");
    EXPECT_EQ(small.find(".EF"), std::string::npos) << small;
    EXPECT_NE(small.find("STG.E.128"), std::string::npos) << small;
  }
}

// Rows spread over clusters (sm_90): layer and RMS norms of 16384 to
// 262144 elements (clusters of 2 to 8 blocks, 256 to 1024 threads each;
// beyond, and f64 rows of 262144, split rows, checked for spills too) and
// forced small clusters of 2048 and 2047 (peeled) elements, every dtype.
// ptxas reports no spills; the SASS of each has the cluster's barrier
// (UCGABAR_ARV, UCGABAR_WAIT), the stores into other blocks' shared memory
// through the generic window (ST.E, after mapa's address arithmetic) and,
// where the row is whole vectors,
// 128-bit global loads and stores.
TEST(NVRTCResourceTest, ClusterRowsUseTheClusterBarrierInSASS) {
#ifndef NF_CUOBJDUMP
  GTEST_SKIP() << "no cuobjdump (scripts/setup.sh installs it where a CUDA "
                  "toolkit is)";
#endif
  static const std::regex schedule(
      "// ([A-Za-z0-9_]+): cluster-row [^\n]* cluster=([0-9]+)");
  static const std::regex spills(
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  int checked = 0;
  for (const char *forced : {"auto", "cluster-row"}) {
    std::string module;
    for (const char *dtype : kDTypes)
      for (const char *op : {"layer_norm", "rms_norm"}) {
        if (std::string(forced) == "auto") {
          // (f64 rows of 262144 are split: 16 elements a thread; rows of
          // 524288 split in every dtype, their first kernel holding its
          // chunk in registers: spills are checked for those too.)
          for (int64_t cols : {16384, 65536, 262144, 524288})
            module +=
                rowNormModule(dtype, op, cols, "_" + std::to_string(cols));
        } else {
          module += rowNormModule(dtype, op);
          module += rowNormModule(dtype, op, 2047, "_peeled");
        }
      }
    std::string source = printCUDA(module, forced);
    std::vector<std::string> kernels;
    for (std::sregex_iterator it(source.begin(), source.end(), schedule), end;
         it != end; ++it)
      kernels.push_back((*it)[1]);
    EXPECT_EQ(kernels.size(), std::string(forced) == "auto" ? 22u : 16u)
        << source;
    Compiled c = compileWithNVRTC(source, "sm_90");
    ASSERT_TRUE(c.ok) << c.log;
    for (std::sregex_iterator it(c.log.begin(), c.log.end(), spills), end;
         it != end; ++it)
      EXPECT_EQ((*it)[1].str() + " " + (*it)[2].str(), "0 0") << c.log;
    std::string error, sass = disassemble(c.cubin, error);
    ASSERT_EQ(error, "");
    for (const std::string &k : kernels) {
      size_t begin = sass.find("Function : " + k + "\n");
      ASSERT_NE(begin, std::string::npos) << k << " is not in the SASS";
      std::string body =
          sass.substr(begin, sass.find("Function : ", begin + 1) - begin);
      for (const char *op : {"UCGABAR_ARV", "UCGABAR_WAIT", " ST.E"})
        EXPECT_NE(body.find(op), std::string::npos) << k << ": no " << op;
      if (k.find("_peeled") == std::string::npos) {
        EXPECT_NE(body.find("LDG.E.128"), std::string::npos) << k;
        EXPECT_NE(body.find("STG.E.128"), std::string::npos) << k;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 22 + 16);
}

} // namespace
