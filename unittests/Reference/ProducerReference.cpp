//===- ProducerReference.cpp - float64 matmul and conv references ---------===//
//
// Part of normfuse. See ProducerReference.h.
//
//===----------------------------------------------------------------------===//

#include "ProducerReference.h"

#include <functional>

using namespace nftest;

namespace {

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= v[i];
  return p;
}

/// Calls `tap(xIndex, wIndex, yIndex)` for every multiply-add of the
/// conv2d: every (n, o, oh, ow, c, kh, kw) whose input element lies inside
/// the input (the padding contributes zeros, so it has no taps).
void forEachTap(const ConvGeometry &g,
                const std::function<void(int64_t, int64_t, int64_t)> &tap) {
  const ConvAttrs &a = g.attrs;
  int64_t oh = g.outH(), ow = g.outW();
  auto act = [&](int64_t n, int64_t c, int64_t y, int64_t x, int64_t channels,
                 int64_t height, int64_t width) {
    return a.nhwc ? ((n * height + y) * width + x) * channels + c
                  : ((n * channels + c) * height + y) * width + x;
  };
  auto filter = [&](int64_t o, int64_t c, int64_t y, int64_t x) {
    return a.nhwc ? ((o * g.kh + y) * g.kw + x) * g.c + c
                  : ((o * g.c + c) * g.kh + y) * g.kw + x;
  };
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t c = 0; c < g.c; ++c)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                int64_t ih =
                    y * a.strides[0] - a.padding[0] + ky * a.dilations[0];
                int64_t iw =
                    x * a.strides[1] - a.padding[2] + kx * a.dilations[1];
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
                  continue;
                tap(act(n, c, ih, iw, g.c, g.h, g.w), filter(o, c, ky, kx),
                    act(n, o, y, x, g.o, oh, ow));
              }
}

std::string array(const int64_t *v, size_t n) {
  std::string s = "array<i64: ";
  for (size_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ">";
}

} // namespace

std::vector<int64_t> MatmulShape::result() const {
  const std::vector<int64_t> &batchOf = lhs.size() > 2 ? lhs : rhs;
  std::vector<int64_t> r(batchOf.begin(), batchOf.end() - 2);
  size_t l = lhs.size(), q = rhs.size();
  r.push_back(transposeLhs ? lhs[l - 1] : lhs[l - 2]);
  r.push_back(transposeRhs ? rhs[q - 2] : rhs[q - 1]);
  return r;
}

std::vector<double> nftest::matmulReference(const MatmulShape &s,
                                            const std::vector<double> &lhs,
                                            const std::vector<double> &rhs) {
  size_t l = s.lhs.size(), q = s.rhs.size();
  int64_t m = s.transposeLhs ? s.lhs[l - 1] : s.lhs[l - 2];
  int64_t k = s.transposeLhs ? s.lhs[l - 2] : s.lhs[l - 1];
  int64_t n = s.transposeRhs ? s.rhs[q - 2] : s.rhs[q - 1];
  bool lhsBatched = l > 2, rhsBatched = q > 2;
  int64_t batch = product(lhsBatched ? s.lhs : s.rhs, 0,
                          (lhsBatched ? s.lhs : s.rhs).size() - 2);
  std::vector<double> out(batch * m * n, 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    const double *a = lhs.data() + (lhsBatched ? b * m * k : 0);
    const double *r = rhs.data() + (rhsBatched ? b * k * n : 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += (s.transposeLhs ? a[p * m + i] : a[i * k + p]) *
                 (s.transposeRhs ? r[j * k + p] : r[p * n + j]);
        out[(b * m + i) * n + j] = sum;
      }
  }
  return out;
}

std::string ConvAttrs::toMLIR() const {
  return "{strides = " + array(strides.data(), 2) +
         ", padding = " + array(padding.data(), 4) +
         ", dilations = " + array(dilations.data(), 2) +
         ", layout = #nf.layout<" + (nhwc ? "nhwc" : "nchw") + ">}";
}

int64_t ConvGeometry::outH() const {
  return (h + attrs.padding[0] + attrs.padding[1] -
          attrs.dilations[0] * (kh - 1) - 1) /
             attrs.strides[0] +
         1;
}

int64_t ConvGeometry::outW() const {
  return (w + attrs.padding[2] + attrs.padding[3] -
          attrs.dilations[1] * (kw - 1) - 1) /
             attrs.strides[1] +
         1;
}

std::vector<int64_t> ConvGeometry::inputShape() const {
  return attrs.nhwc ? std::vector<int64_t>{n, h, w, c}
                    : std::vector<int64_t>{n, c, h, w};
}

std::vector<int64_t> ConvGeometry::filterShape() const {
  return attrs.nhwc ? std::vector<int64_t>{o, kh, kw, c}
                    : std::vector<int64_t>{o, c, kh, kw};
}

std::vector<int64_t> ConvGeometry::outputShape() const {
  return attrs.nhwc ? std::vector<int64_t>{n, outH(), outW(), o}
                    : std::vector<int64_t>{n, o, outH(), outW()};
}

std::vector<double> nftest::conv2dReference(const ConvGeometry &g,
                                            const std::vector<double> &x,
                                            const std::vector<double> &w) {
  std::vector<double> y(product(g.outputShape(), 0, 4), 0.0);
  forEachTap(
      g, [&](int64_t xi, int64_t wi, int64_t yi) { y[yi] += x[xi] * w[wi]; });
  return y;
}

std::vector<double>
nftest::conv2dBackpropInputReference(const ConvGeometry &g,
                                     const std::vector<double> &dy,
                                     const std::vector<double> &w) {
  std::vector<double> dx(product(g.inputShape(), 0, 4), 0.0);
  forEachTap(
      g, [&](int64_t xi, int64_t wi, int64_t yi) { dx[xi] += dy[yi] * w[wi]; });
  return dx;
}

std::vector<double>
nftest::conv2dBackpropFilterReference(const ConvGeometry &g,
                                      const std::vector<double> &x,
                                      const std::vector<double> &dy) {
  std::vector<double> dw(product(g.filterShape(), 0, 4), 0.0);
  forEachTap(
      g, [&](int64_t xi, int64_t wi, int64_t yi) { dw[wi] += dy[yi] * x[xi]; });
  return dw;
}

double nftest::dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

std::vector<double> nftest::swapLeadingDims(const std::vector<double> &t,
                                            const std::array<int64_t, 4> &s) {
  std::vector<double> out(t.size());
  int64_t inner = s[2] * s[3];
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < inner; ++k)
        out[(j * s[0] + i) * inner + k] = t[(i * s[1] + j) * inner + k];
  return out;
}

std::vector<double> nftest::flipSpatial(const std::vector<double> &t,
                                        const std::array<int64_t, 4> &s) {
  std::vector<double> out(t.size());
  for (int64_t p = 0; p < s[0] * s[1]; ++p)
    for (int64_t y = 0; y < s[2]; ++y)
      for (int64_t x = 0; x < s[3]; ++x)
        out[(p * s[2] + (s[2] - 1 - y)) * s[3] + (s[3] - 1 - x)] =
            t[(p * s[2] + y) * s[3] + x];
  return out;
}

std::vector<double> nftest::spreadSpatial(const std::vector<double> &t,
                                          const std::array<int64_t, 4> &s,
                                          int64_t outH, int64_t outW,
                                          int64_t top, int64_t left,
                                          const std::array<int64_t, 2> &step) {
  std::vector<double> out(s[0] * s[1] * outH * outW, 0.0);
  for (int64_t p = 0; p < s[0] * s[1]; ++p)
    for (int64_t y = 0; y < s[2]; ++y)
      for (int64_t x = 0; x < s[3]; ++x) {
        int64_t oy = top + y * step[0], ox = left + x * step[1];
        if (oy < 0 || oy >= outH || ox < 0 || ox >= outW)
          continue;
        out[(p * outH + oy) * outW + ox] = t[(p * s[2] + y) * s[3] + x];
      }
  return out;
}
