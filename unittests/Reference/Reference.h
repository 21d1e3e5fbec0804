//===- Reference.h - float64 references for every back end -----------*- C++
//-*-===//
//
// Part of normfuse. Host buffers of any dtype holding values the tests can
// read back as doubles, random data, the relative L2 error against a
// float64 reference, and the references of the nf ops the CPU back end runs.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_REFERENCE_REFERENCE_H
#define NORMFUSE_UNITTESTS_REFERENCE_REFERENCE_H

#include "normfuse/Support/Tensor.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace nftest {

using normfuse::DType;

/// Rounds `v` to `dtype` (round to nearest even) and back to double.
double roundTo(DType dtype, double v);

/// A host tensor: bytes in `dtype`, readable as doubles.
struct Buffer {
  Buffer(DType dtype, std::vector<int64_t> shape);
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t size() const;
  double get(int64_t i) const;
  void set(int64_t i, double v);
  std::vector<double> toDoubles() const;
  /// Fills with N(mean, std) values rounded to the dtype.
  void fillNormal(std::mt19937 &rng, double mean = 0.0, double std = 1.0);
  /// Fills every element with `v` (e.g. a NaN to poison an output).
  void fill(double v);
  normfuse::TensorRef ref();
};

/// ||out - ref|| / ||ref||; infinity when `out` holds a NaN.
double relativeError(const std::vector<double> &out,
                     const std::vector<double> &ref);

/// "tensor<4x8xf32>"
std::string tensorType(DType dtype, const std::vector<int64_t> &shape);

/// Function `name`: nf.layer_norm_grad (or nf.rms_norm_grad) over (rows,
/// cols) tensors of `dtype` with a scale, statistics and parameter
/// gradients in f32 (f64 for f64 data); returns (dx, dscale[, dbias]).
std::string rowNormGradIR(DType dtype, int64_t rows, int64_t cols,
                          bool layerNorm, const std::string &name = "g");

/// Trailing-axis norms over rows of `cols` elements (float64 throughout).
void layerNormReference(const std::vector<double> &x, int64_t cols,
                        const std::vector<double> *scale,
                        const std::vector<double> *bias, double eps,
                        std::vector<double> &y, std::vector<double> &mean,
                        std::vector<double> &rstd);
void rmsNormReference(const std::vector<double> &x, int64_t cols,
                      const std::vector<double> *scale, double eps,
                      std::vector<double> &y, std::vector<double> &rstd);

/// The gradients of rms_norm over rows of `cols` elements from its saved
/// rstd (one per row); dscale has `cols` elements.
void rmsNormGradReference(const std::vector<double> &dy,
                          const std::vector<double> &x, int64_t cols,
                          const std::vector<double> &rstd,
                          const std::vector<double> *scale,
                          std::vector<double> &dx, std::vector<double> &dscale);

/// A tensor of N images, C channels and S spatial positions, stored NCHW
/// ((n, c, s) order) or NHWC ((n, s, c) order).
struct ChannelDims {
  int64_t n, c, s;
  bool channelsLast;
  int64_t at(int64_t ni, int64_t ci, int64_t si) const {
    return channelsLast ? (ni * s + si) * c + ci : (ni * c + ci) * s + si;
  }
  int64_t size() const { return n * c * s; }
};

/// GroupNorm (InstanceNorm when groups == C): mean and rstd are (N, groups).
void groupNormReference(const std::vector<double> &x, const ChannelDims &d,
                        int64_t groups, const std::vector<double> *scale,
                        const std::vector<double> *bias, double eps,
                        std::vector<double> &y, std::vector<double> &mean,
                        std::vector<double> &rstd);

/// BatchNorm with batch statistics, as PyTorch's training mode: statistics
/// (C); the running variance takes the unbiased batch variance.
void batchNormTrainingReference(
    const std::vector<double> &x, const ChannelDims &d,
    const std::vector<double> *scale, const std::vector<double> *bias,
    double eps, double momentum, const std::vector<double> &runningMean,
    const std::vector<double> &runningVar, std::vector<double> &y,
    std::vector<double> &mean, std::vector<double> &rstd,
    std::vector<double> &newRunningMean, std::vector<double> &newRunningVar);

/// The gradients of a channel norm from its saved statistics: (N, groups)
/// for GroupNorm/InstanceNorm, or (C) when `acrossImages` (BatchNorm).
void channelNormGradReference(
    const std::vector<double> &dy, const std::vector<double> &x,
    const ChannelDims &d, int64_t groups, bool acrossImages,
    const std::vector<double> &mean, const std::vector<double> &rstd,
    const std::vector<double> *scale, std::vector<double> &dx,
    std::vector<double> &dscale, std::vector<double> &dbias);

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_REFERENCE_REFERENCE_H
