//===- RowNormGradChecks.h - layer/rms norm gradient checks -----*- C++ -*-===//
//
// Part of normfuse. One check of a compiled layer_norm_grad or
// rms_norm_grad (rowNormGradIR's @g) against the float64 references, shared
// by the CPU JIT's tests and the CUDA simulator's: random dy, x with the
// given mean and std, its statistics from the float64 forward norm, a
// scale around 1, NaN-poisoned outputs.
//
// Tolerances (relative L2 against float64 on the rounded inputs): f32 1e-5
// (1e-4 on mean-shifted rows, where xhat itself is only good to about
// 4e-5), f16 1e-3 and bf16 8e-3 for dx; parameter gradients 1e-5.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_JIT_ROWNORMGRADCHECKS_H
#define NORMFUSE_UNITTESTS_JIT_ROWNORMGRADCHECKS_H

#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>
#include <ostream>

namespace nftest {

struct RowNormGradShape {
  DType dtype;
  int64_t rows, cols;
  double mean = 0.0, std = 1.0;

  DType statType() const {
    return dtype == DType::F64 ? DType::F64 : DType::F32;
  }
  double dxTolerance() const {
    if (dtype == DType::F16)
      return 1e-3;
    if (dtype == DType::BF16)
      return 8e-3;
    return mean != 0.0 ? 1e-4 : 1e-5;
  }
};

// gtest prints a shape with this instead of its bytes.
[[maybe_unused]] inline void PrintTo(const RowNormGradShape &c,
                                     std::ostream *os) {
  *os << normfuse::getDTypeName(c.dtype) << " " << c.rows << "x" << c.cols;
  if (c.mean != 0.0)
    *os << " mean " << c.mean << " std " << c.std;
}

/// Runs `kernel` (layer_norm_grad when `layerNorm`, else rms_norm_grad) on
/// shape `c` and expects dx, dscale (and dbias) to match float64.
inline void expectRowNormGradMatchesReference(normfuse::jit::Kernel &kernel,
                                              const RowNormGradShape &c,
                                              bool layerNorm) {
  std::mt19937 rng(layerNorm ? 17 : 19);
  Buffer dy(c.dtype, {c.rows, c.cols}), x(c.dtype, {c.rows, c.cols}),
      mean(c.statType(), {c.rows, 1}), rstd(c.statType(), {c.rows, 1}),
      scale(c.statType(), {c.cols});
  dy.fillNormal(rng);
  x.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  std::vector<double> y, rmean, rrstd;
  if (layerNorm)
    layerNormReference(x.toDoubles(), c.cols, nullptr, nullptr, 1e-5, y, rmean,
                       rrstd);
  else
    rmsNormReference(x.toDoubles(), c.cols, nullptr, 1e-6, y, rrstd);
  for (int64_t r = 0; r < c.rows; ++r) {
    if (layerNorm)
      mean.set(r, rmean[r]);
    rstd.set(r, rrstd[r]);
  }
  Buffer dx(c.dtype, {c.rows, c.cols}), dscale(c.statType(), {c.cols}),
      dbias(c.statType(), {c.cols});
  for (Buffer *b : {&dx, &dscale, &dbias})
    b->fill(std::nan(""));
  llvm::Error err =
      layerNorm
          ? kernel.run({dy.ref(), x.ref(), mean.ref(), rstd.ref(), scale.ref()},
                       {dx.ref(), dscale.ref(), dbias.ref()})
          : kernel.run({dy.ref(), x.ref(), rstd.ref(), scale.ref()},
                       {dx.ref(), dscale.ref()});
  ASSERT_EQ(errorText(std::move(err)), "");

  std::vector<double> rdx, rds, rdb, s = scale.toDoubles();
  if (layerNorm) {
    channelNormGradReference(
        dy.toDoubles(), x.toDoubles(), ChannelDims{c.rows, c.cols, 1, true}, 1,
        false, mean.toDoubles(), rstd.toDoubles(), &s, rdx, rds, rdb);
    EXPECT_LE(relativeError(dbias.toDoubles(), rdb), 1e-5);
  } else {
    rmsNormGradReference(dy.toDoubles(), x.toDoubles(), c.cols,
                         rstd.toDoubles(), &s, rdx, rds);
  }
  EXPECT_LE(relativeError(dscale.toDoubles(), rds), 1e-5);
  if (layerNorm || c.cols != 1) {
    EXPECT_LE(relativeError(dx.toDoubles(), rdx), c.dxTolerance());
    return;
  }
  // RMSNorm of one column: dx = rstd * g * dy * (1 - x^2 / (x^2 + eps)),
  // two terms within eps of each other, so the error is measured against
  // the terms' size.
  double diff = 0, term = 0;
  std::vector<double> out = dx.toDoubles();
  for (int64_t r = 0; r < c.rows; ++r) {
    diff += (out[r] - rdx[r]) * (out[r] - rdx[r]);
    double t = rstd.get(r) * s[0] * dy.get(r);
    term += t * t;
  }
  EXPECT_LE(std::sqrt(diff / term), c.dxTolerance());
}

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_JIT_ROWNORMGRADCHECKS_H
