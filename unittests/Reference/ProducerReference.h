//===- ProducerReference.h - float64 matmul and conv references -*- C++ -*-===//
//
// Part of normfuse. Straightforward float64 references of nf.matmul,
// nf.conv2d and its two gradients, written from the op definitions: the
// gradients loop over the forward op's taps and scatter, so they are the
// transposes of the forward reference by construction (the lowering
// gathers instead). Also the host-side tensor rearrangements the conv
// identity tests need.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_REFERENCE_PRODUCERREFERENCE_H
#define NORMFUSE_UNITTESTS_REFERENCE_PRODUCERREFERENCE_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nftest {

/// The operands of a batched matmul: shapes as stored (transposed operands
/// stored transposed); a 2-D operand is shared across the other's batch.
struct MatmulShape {
  std::vector<int64_t> lhs, rhs;
  bool transposeLhs = false, transposeRhs = false;

  /// The result shape: the batch of whichever operand has one, then M, N.
  std::vector<int64_t> result() const;
};

/// result[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n].
std::vector<double> matmulReference(const MatmulShape &shape,
                                    const std::vector<double> &lhs,
                                    const std::vector<double> &rhs);

/// The attributes of a conv op. Activations are (N, C, H, W) with `nhwc`
/// false (filters (O, I, KH, KW)) and (N, H, W, C) with `nhwc` true
/// (filters (O, KH, KW, I)).
struct ConvAttrs {
  bool nhwc = false;
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0}; // top, bottom, left, right
  std::array<int64_t, 2> dilations{1, 1};

  /// The attribute dictionary in nf syntax, e.g. "{strides = ...}".
  std::string toMLIR() const;
};

/// Logical sizes of a conv: batch, channels in and out, input, filter and
/// output spatial sizes (the output from the shape rule).
struct ConvGeometry {
  int64_t n, c, o, h, w, kh, kw;
  ConvAttrs attrs;

  int64_t outH() const;
  int64_t outW() const;
  std::vector<int64_t> inputShape() const;
  std::vector<int64_t> filterShape() const;
  std::vector<int64_t> outputShape() const;
};

/// y = conv2d(x, w).
std::vector<double> conv2dReference(const ConvGeometry &g,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w);

/// dx of conv2d given dy and w.
std::vector<double> conv2dBackpropInputReference(const ConvGeometry &g,
                                                 const std::vector<double> &dy,
                                                 const std::vector<double> &w);

/// dw of conv2d given x and dy.
std::vector<double>
conv2dBackpropFilterReference(const ConvGeometry &g,
                              const std::vector<double> &x,
                              const std::vector<double> &dy);

/// sum_i a[i] * b[i] in float64.
double dot(const std::vector<double> &a, const std::vector<double> &b);

/// A tensor of shape (d0, d1, d2, d3) with its first two dimensions
/// swapped.
std::vector<double> swapLeadingDims(const std::vector<double> &t,
                                    const std::array<int64_t, 4> &shape);

/// An NCHW tensor with rows and columns reversed (a flipped filter).
std::vector<double> flipSpatial(const std::vector<double> &t,
                                const std::array<int64_t, 4> &shape);

/// An NCHW tensor placed on a zero canvas of (N, C, outH, outW): element
/// (h, w) lands at (top + h * step[0], left + w * step[1]) when that lies on
/// the canvas (zeros inserted between elements, padding, or cropping).
std::vector<double> spreadSpatial(const std::vector<double> &t,
                                  const std::array<int64_t, 4> &shape,
                                  int64_t outH, int64_t outW, int64_t top,
                                  int64_t left,
                                  const std::array<int64_t, 2> &step);

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_REFERENCE_PRODUCERREFERENCE_H
