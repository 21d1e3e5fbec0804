//===- StreamingStoresTest.cpp - large outputs written around the cache ---===//
//
// Part of normfuse. Norm and pointwise outputs of at least 16 MiB whose
// rows are whole vectors are written with non-temporal stores when their
// base address is 16-byte aligned, and with plain stores otherwise
// (StreamingStores in lib/Codegen/CPU/LoopUtils.h). Both paths run here,
// on the same inputs, with the output placed at a 32-byte boundary, 16
// bytes past one (where large malloc blocks start) and one element past
// one (plain stores): the results must be the same bits, and match the
// float64 reference.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>
#include <cstring>

using namespace nftest;

namespace {

/// An output buffer whose data starts `offset` bytes past a 32-byte
/// boundary, poisoned with NaN.
struct PlacedOutput {
  PlacedOutput(DType dtype, std::vector<int64_t> shape, size_t offset)
      : like(dtype, shape), storage(like.bytes.size() + 64) {
    like.fill(std::nan(""));
    auto base = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((32 - base % 32) % 32) + offset;
    std::memcpy(data, like.bytes.data(), like.bytes.size());
  }
  normfuse::TensorRef ref() {
    normfuse::TensorRef r = like.ref();
    r.data = data;
    return r;
  }
  /// The written elements as a Buffer.
  Buffer contents() const {
    Buffer out = like;
    std::memcpy(out.bytes.data(), data, out.bytes.size());
    return out;
  }

  Buffer like;
  std::vector<uint8_t> storage;
  uint8_t *data;
};

/// Runs `kernel` once per offset with its first output (of `dtype` and
/// `shape`) placed at that offset and the other outputs like `others`;
/// checks each result against `reference` within `tolerance` and that all
/// results are the same bits.
void expectSameBitsAtOffsets(normfuse::jit::Kernel &kernel,
                             std::vector<normfuse::TensorRef> inputs,
                             DType dtype, std::vector<int64_t> shape,
                             std::vector<Buffer> others,
                             const std::vector<double> &reference,
                             double tolerance) {
  int64_t elementBytes = normfuse::getDTypeSize(dtype);
  std::vector<Buffer> results;
  // 32-byte aligned, 16 bytes past (streaming), one element past (plain).
  for (size_t offset : {size_t(0), size_t(16), size_t(elementBytes)}) {
    PlacedOutput y(dtype, shape, offset);
    std::vector<normfuse::TensorRef> outputs = {y.ref()};
    for (Buffer &other : others)
      outputs.push_back(other.ref());
    ASSERT_EQ(errorText(kernel.run(inputs, outputs)), "")
        << "offset " << offset;
    results.push_back(y.contents());
    EXPECT_LE(relativeError(results.back().toDoubles(), reference), tolerance)
        << "offset " << offset;
  }
  EXPECT_EQ(results[0].bytes, results[1].bytes);
  EXPECT_EQ(results[0].bytes, results[2].bytes);
}

TEST(StreamingStoresTest, LayerNormF32WritesTheSameBitsAtEveryAlignment) {
  const int64_t rows = 4096, cols = 1024; // 16 MiB of f32 output
  std::string x = tensorType(DType::F32, {rows, cols});
  std::string st = tensorType(DType::F32, {rows, 1});
  std::string ir = "func.func @ln(%x: " + x + ") -> (" + x + ", " + st + ", " +
                   st +
                   ") {\n"
                   "  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (" +
                   x + ") -> (" + x + ", " + st + ", " + st +
                   ")\n"
                   "  return %y, %m, %r : " +
                   x + ", " + st + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "ln");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(7);
  Buffer in(DType::F32, {rows, cols});
  in.fillNormal(rng);
  std::vector<double> ry, rmean, rrstd;
  layerNormReference(in.toDoubles(), cols, nullptr, nullptr, 1e-5, ry, rmean,
                     rrstd);

  expectSameBitsAtOffsets(
      *kernel, {in.ref()}, DType::F32, {rows, cols},
      {Buffer(DType::F32, {rows, 1}), Buffer(DType::F32, {rows, 1})}, ry, 1e-5);
}

TEST(StreamingStoresTest, RMSNormBF16WritesTheSameBitsAtEveryAlignment) {
  const int64_t rows = 8192, cols = 1024; // 16 MiB of bf16 output
  std::string x = tensorType(DType::BF16, {rows, cols});
  std::string p = tensorType(DType::F32, {cols});
  std::string st = tensorType(DType::F32, {rows, 1});
  std::string ir = "func.func @rms(%x: " + x + ", %s: " + p + ") -> (" + x +
                   ", " + st +
                   ") {\n"
                   "  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64} : (" +
                   x + ", " + p + ") -> (" + x + ", " + st +
                   ")\n"
                   "  return %y, %r : " +
                   x + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "rms");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(8);
  Buffer in(DType::BF16, {rows, cols}), scale(DType::F32, {cols});
  in.fillNormal(rng);
  scale.fillNormal(rng, 1.0, 0.5);
  std::vector<double> ry, rrstd, s = scale.toDoubles();
  rmsNormReference(in.toDoubles(), cols, &s, 1e-5, ry, rrstd);

  expectSameBitsAtOffsets(*kernel, {in.ref(), scale.ref()}, DType::BF16,
                          {rows, cols}, {Buffer(DType::F32, {rows, 1})}, ry,
                          8e-3);
}

TEST(StreamingStoresTest, GroupNormNHWCF16WritesTheSameBitsAtEveryAlignment) {
  const int64_t n = 8, h = 64, w = 64, c = 256, groups = 32; // 16 MiB of f16
  std::string x = tensorType(DType::F16, {n, h, w, c});
  std::string p = tensorType(DType::F32, {c});
  std::string st = tensorType(DType::F32, {n, groups});
  std::string ir =
      "func.func @gn(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" + x +
      ", " + st + ", " + st +
      ") {\n"
      "  %y, %m, %r = nf.group_norm %x scale %s bias %b {num_groups = 32 : "
      "i64, layout = #nf.layout<nhwc>} : (" +
      x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
      ")\n"
      "  return %y, %m, %r : " +
      x + ", " + st + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "gn");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(9);
  Buffer in(DType::F16, {n, h, w, c}), scale(DType::F32, {c}),
      bias(DType::F32, {c});
  in.fillNormal(rng);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                        b = bias.toDoubles();
  ChannelDims dims{n, c, h * w, /*channelsLast=*/true};
  groupNormReference(in.toDoubles(), dims, groups, &s, &b, 1e-5, ry, rmean,
                     rrstd);

  expectSameBitsAtOffsets(
      *kernel, {in.ref(), scale.ref(), bias.ref()}, DType::F16, {n, h, w, c},
      {Buffer(DType::F32, {n, groups}), Buffer(DType::F32, {n, groups})}, ry,
      1e-3);
}

TEST(StreamingStoresTest, SiluF32WritesTheSameBitsAtEveryAlignment) {
  const int64_t n = (int64_t(1) << 22) + 3; // 16 MiB and an odd tail
  std::string x = tensorType(DType::F32, {n});
  std::string ir = "func.func @silu(%x: " + x + ") -> " + x +
                   " {\n"
                   "  %y = nf.silu %x : " +
                   x + "\n  return %y : " + x + "\n}\n";
  auto kernel = compileOrFail(ir, "silu");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(10);
  Buffer in(DType::F32, {n});
  in.fillNormal(rng);
  std::vector<double> ry;
  for (double v : in.toDoubles())
    ry.push_back(v / (1.0 + std::exp(-v)));
  expectSameBitsAtOffsets(*kernel, {in.ref()}, DType::F32, {n}, {}, ry, 1e-5);
}

} // namespace
