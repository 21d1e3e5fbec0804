//===- Reference.h - float64 references for JIT tests -----------*- C++ -*-===//
//
// Part of normfuse. Host buffers of any dtype holding values the tests can
// read back as doubles, random data, the relative L2 error against a
// float64 reference, and the references of the nf ops the CPU back end runs.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_JIT_REFERENCE_H
#define NORMFUSE_UNITTESTS_JIT_REFERENCE_H

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

/// Trailing-axis norms over rows of `cols` elements (float64 throughout).
void layerNormReference(const std::vector<double> &x, int64_t cols,
                        const std::vector<double> *scale,
                        const std::vector<double> *bias, double eps,
                        std::vector<double> &y, std::vector<double> &mean,
                        std::vector<double> &rstd);
void rmsNormReference(const std::vector<double> &x, int64_t cols,
                      const std::vector<double> *scale, double eps,
                      std::vector<double> &y, std::vector<double> &rstd);

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_JIT_REFERENCE_H
