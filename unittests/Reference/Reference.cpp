//===- Reference.cpp - float64 references for JIT tests ---------*- C++ -*-===//
//
// Part of normfuse. See Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace nftest;

namespace {

uint16_t floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t mant = x & 0x7fffff;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 0xff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10)
      return sign;
    mant |= 0x800000;
    uint32_t shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half;
  return sign | half;
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000 | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400));
      x = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToBF16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f))
    return (x >> 16) | 0x40;
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return (x + rounding) >> 16;
}

float bf16BitsToFloat(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

} // namespace

double nftest::roundTo(DType dtype, double v) {
  switch (dtype) {
  case DType::F16:
    return halfBitsToFloat(floatToHalfBits(static_cast<float>(v)));
  case DType::BF16:
    return bf16BitsToFloat(floatToBF16Bits(static_cast<float>(v)));
  case DType::F32:
    return static_cast<float>(v);
  case DType::F64:
    return v;
  }
  return v;
}

Buffer::Buffer(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.assign(size() * normfuse::getDTypeSize(dtype), 0);
}

int64_t Buffer::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double Buffer::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * normfuse::getDTypeSize(dtype);
  switch (dtype) {
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfBitsToFloat(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16BitsToFloat(h);
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  }
  return 0;
}

void Buffer::set(int64_t i, double v) {
  uint8_t *p = bytes.data() + i * normfuse::getDTypeSize(dtype);
  switch (dtype) {
  case DType::F16: {
    uint16_t h = floatToHalfBits(static_cast<float>(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBF16Bits(static_cast<float>(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::F32: {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &v, 8);
    return;
  }
}

std::vector<double> Buffer::toDoubles() const {
  std::vector<double> out(size());
  for (int64_t i = 0; i < size(); ++i)
    out[i] = get(i);
  return out;
}

void Buffer::fillNormal(std::mt19937 &rng, double mean, double std) {
  std::normal_distribution<double> dist(mean, std);
  for (int64_t i = 0; i < size(); ++i)
    set(i, dist(rng));
}

void Buffer::fill(double v) {
  for (int64_t i = 0; i < size(); ++i)
    set(i, v);
}

normfuse::TensorRef Buffer::ref() {
  normfuse::TensorRef r;
  r.data = bytes.data();
  r.dtype = dtype;
  r.shape = shape;
  return r;
}

double nftest::relativeError(const std::vector<double> &out,
                             const std::vector<double> &ref) {
  long double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i]))
      return std::numeric_limits<double>::infinity();
    long double d = static_cast<long double>(out[i]) - ref[i];
    num += d * d;
    den += static_cast<long double>(ref[i]) * ref[i];
  }
  if (den == 0)
    return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(std::sqrt(num / den));
}

std::string nftest::tensorType(DType dtype, const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + normfuse::getDTypeName(dtype) + ">";
}

std::string nftest::rowNormGradIR(DType dtype, int64_t rows, int64_t cols,
                                  bool layerNorm, const std::string &name) {
  DType stat = dtype == DType::F64 ? DType::F64 : DType::F32;
  std::string x = tensorType(dtype, {rows, cols});
  std::string st = tensorType(stat, {rows, 1});
  std::string p = tensorType(stat, {cols});
  if (layerNorm)
    return "func.func @" + name + "(%dy: " + x + ", %x: " + x + ", %m: " + st +
           ", %r: " + st + ", %s: " + p + ") -> (" + x + ", " + p + ", " + p +
           ") {\n  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale "
           "%s {axis = 1 : i64} : (" +
           x + ", " + x + ", " + st + ", " + st + ", " + p + ") -> (" + x +
           ", " + p + ", " + p + ")\n  return %dx, %ds, %db : " + x + ", " + p +
           ", " + p + "\n}\n";
  return "func.func @" + name + "(%dy: " + x + ", %x: " + x + ", %r: " + st +
         ", %s: " + p + ") -> (" + x + ", " + p +
         ") {\n  %dx, %ds = nf.rms_norm_grad %dy, %x, %r scale %s {axis = 1 "
         ": i64} : (" +
         x + ", " + x + ", " + st + ", " + p + ") -> (" + x + ", " + p +
         ")\n  return %dx, %ds : " + x + ", " + p + "\n}\n";
}

void nftest::layerNormReference(const std::vector<double> &x, int64_t cols,
                                const std::vector<double> *scale,
                                const std::vector<double> *bias, double eps,
                                std::vector<double> &y,
                                std::vector<double> &mean,
                                std::vector<double> &rstd) {
  int64_t rows = static_cast<int64_t>(x.size()) / cols;
  y.assign(x.size(), 0);
  mean.assign(rows, 0);
  rstd.assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    long double s = 0;
    for (int64_t j = 0; j < cols; ++j)
      s += x[r * cols + j];
    double m = static_cast<double>(s / cols);
    long double v = 0;
    for (int64_t j = 0; j < cols; ++j) {
      long double d = x[r * cols + j] - m;
      v += d * d;
    }
    double rs = 1.0 / std::sqrt(static_cast<double>(v / cols) + eps);
    mean[r] = m;
    rstd[r] = rs;
    for (int64_t j = 0; j < cols; ++j) {
      double t = (x[r * cols + j] - m) * rs;
      if (scale)
        t *= (*scale)[j];
      if (bias)
        t += (*bias)[j];
      y[r * cols + j] = t;
    }
  }
}

void nftest::rmsNormReference(const std::vector<double> &x, int64_t cols,
                              const std::vector<double> *scale, double eps,
                              std::vector<double> &y,
                              std::vector<double> &rstd) {
  int64_t rows = static_cast<int64_t>(x.size()) / cols;
  y.assign(x.size(), 0);
  rstd.assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    long double s = 0;
    for (int64_t j = 0; j < cols; ++j)
      s += static_cast<long double>(x[r * cols + j]) * x[r * cols + j];
    double rs = 1.0 / std::sqrt(static_cast<double>(s / cols) + eps);
    rstd[r] = rs;
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = x[r * cols + j] * rs * (scale ? (*scale)[j] : 1.0);
  }
}

namespace {
/// The (image, channel) pairs of statistic k: images [m0, m1) and channels
/// [c0, c1).
struct StatSpan {
  int64_t m0, m1, c0, c1;
};

StatSpan spanOf(const ChannelDims &d, int64_t groups, bool acrossImages,
                int64_t k) {
  int64_t size = d.c / groups;
  if (acrossImages)
    return {0, d.n, k * size, (k + 1) * size};
  int64_t g = k % groups;
  return {k / groups, k / groups + 1, g * size, (g + 1) * size};
}

int64_t numStats(const ChannelDims &d, int64_t groups, bool acrossImages) {
  return acrossImages ? groups : d.n * groups;
}

/// Two-pass float64 mean and biased variance of each statistic.
void channelMoments(const std::vector<double> &x, const ChannelDims &d,
                    int64_t groups, bool acrossImages,
                    std::vector<double> &mean, std::vector<double> &var) {
  int64_t k = numStats(d, groups, acrossImages);
  mean.assign(k, 0.0);
  var.assign(k, 0.0);
  for (int64_t i = 0; i < k; ++i) {
    StatSpan sp = spanOf(d, groups, acrossImages, i);
    double count = double((sp.m1 - sp.m0) * (sp.c1 - sp.c0) * d.s);
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t m = sp.m0; m < sp.m1; ++m)
        for (int64_t c = sp.c0; c < sp.c1; ++c)
          for (int64_t s = 0; s < d.s; ++s) {
            double v = x[d.at(m, c, s)];
            if (pass == 0)
              mean[i] += v / count;
            else
              var[i] += (v - mean[i]) * (v - mean[i]) / count;
          }
  }
}

void channelNormApply(const std::vector<double> &x, const ChannelDims &d,
                      int64_t groups, bool acrossImages,
                      const std::vector<double> &mean,
                      const std::vector<double> &rstd,
                      const std::vector<double> *scale,
                      const std::vector<double> *bias, std::vector<double> &y) {
  y.assign(x.size(), 0.0);
  for (int64_t i = 0; i < numStats(d, groups, acrossImages); ++i) {
    StatSpan sp = spanOf(d, groups, acrossImages, i);
    for (int64_t m = sp.m0; m < sp.m1; ++m)
      for (int64_t c = sp.c0; c < sp.c1; ++c)
        for (int64_t s = 0; s < d.s; ++s) {
          int64_t at = d.at(m, c, s);
          double v = (x[at] - mean[i]) * rstd[i];
          y[at] = v * (scale ? (*scale)[c] : 1.0) + (bias ? (*bias)[c] : 0.0);
        }
  }
}
} // namespace

void nftest::groupNormReference(const std::vector<double> &x,
                                const ChannelDims &d, int64_t groups,
                                const std::vector<double> *scale,
                                const std::vector<double> *bias, double eps,
                                std::vector<double> &y,
                                std::vector<double> &mean,
                                std::vector<double> &rstd) {
  std::vector<double> var;
  channelMoments(x, d, groups, false, mean, var);
  rstd.resize(var.size());
  for (size_t i = 0; i < var.size(); ++i)
    rstd[i] = 1.0 / std::sqrt(var[i] + eps);
  channelNormApply(x, d, groups, false, mean, rstd, scale, bias, y);
}

void nftest::batchNormTrainingReference(
    const std::vector<double> &x, const ChannelDims &d,
    const std::vector<double> *scale, const std::vector<double> *bias,
    double eps, double momentum, const std::vector<double> &runningMean,
    const std::vector<double> &runningVar, std::vector<double> &y,
    std::vector<double> &mean, std::vector<double> &rstd,
    std::vector<double> &newRunningMean, std::vector<double> &newRunningVar) {
  std::vector<double> var;
  channelMoments(x, d, d.c, true, mean, var);
  double n = double(d.n * d.s);
  rstd.resize(d.c);
  newRunningMean.resize(d.c);
  newRunningVar.resize(d.c);
  for (int64_t c = 0; c < d.c; ++c) {
    rstd[c] = 1.0 / std::sqrt(var[c] + eps);
    newRunningMean[c] = (1 - momentum) * runningMean[c] + momentum * mean[c];
    newRunningVar[c] =
        (1 - momentum) * runningVar[c] + momentum * var[c] * n / (n - 1);
  }
  channelNormApply(x, d, d.c, true, mean, rstd, scale, bias, y);
}

void nftest::channelNormGradReference(
    const std::vector<double> &dy, const std::vector<double> &x,
    const ChannelDims &d, int64_t groups, bool acrossImages,
    const std::vector<double> &mean, const std::vector<double> &rstd,
    const std::vector<double> *scale, std::vector<double> &dx,
    std::vector<double> &dscale, std::vector<double> &dbias) {
  dx.assign(x.size(), 0.0);
  dscale.assign(d.c, 0.0);
  dbias.assign(d.c, 0.0);
  auto g = [&](int64_t c) { return scale ? (*scale)[c] : 1.0; };
  for (int64_t i = 0; i < numStats(d, groups, acrossImages); ++i) {
    StatSpan sp = spanOf(d, groups, acrossImages, i);
    double count = double((sp.m1 - sp.m0) * (sp.c1 - sp.c0) * d.s);
    // dL/dxhat = g * dy; dx = rstd * (dxhat - mean(dxhat) - xhat *
    // mean(dxhat * xhat)).
    double sumDxhat = 0, sumDxhatXhat = 0;
    for (int64_t m = sp.m0; m < sp.m1; ++m)
      for (int64_t c = sp.c0; c < sp.c1; ++c)
        for (int64_t s = 0; s < d.s; ++s) {
          int64_t at = d.at(m, c, s);
          double xhat = (x[at] - mean[i]) * rstd[i];
          sumDxhat += g(c) * dy[at];
          sumDxhatXhat += g(c) * dy[at] * xhat;
          dscale[c] += dy[at] * xhat;
          dbias[c] += dy[at];
        }
    for (int64_t m = sp.m0; m < sp.m1; ++m)
      for (int64_t c = sp.c0; c < sp.c1; ++c)
        for (int64_t s = 0; s < d.s; ++s) {
          int64_t at = d.at(m, c, s);
          double xhat = (x[at] - mean[i]) * rstd[i];
          dx[at] = rstd[i] * (g(c) * dy[at] - sumDxhat / count -
                              xhat * sumDxhatXhat / count);
        }
  }
}

void nftest::rmsNormGradReference(const std::vector<double> &dy,
                                  const std::vector<double> &x, int64_t cols,
                                  const std::vector<double> &rstd,
                                  const std::vector<double> *scale,
                                  std::vector<double> &dx,
                                  std::vector<double> &dscale) {
  int64_t rows = cols ? x.size() / cols : 0;
  dx.assign(x.size(), 0.0);
  dscale.assign(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) {
      int64_t at = r * cols + j;
      double xhat = x[at] * rstd[r];
      sum += (scale ? (*scale)[j] : 1.0) * dy[at] * xhat;
      dscale[j] += dy[at] * xhat;
    }
    for (int64_t j = 0; j < cols; ++j) {
      int64_t at = r * cols + j;
      double g = scale ? (*scale)[j] : 1.0;
      dx[at] = rstd[r] * (g * dy[at] - x[at] * rstd[r] * sum / cols);
    }
  }
}
