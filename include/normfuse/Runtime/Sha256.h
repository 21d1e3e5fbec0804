//===- Sha256.h - SHA-256 of byte strings -----------------------*- C++ -*-===//
//
// Part of normfuse. SHA-256 (FIPS 180-4), for the kernel cache's keys and
// its entries' checksums. Plain C++: the runtime has no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_SHA256_H
#define NORMFUSE_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace normfuse::runtime {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(const std::string &s) { update(s.data(), s.size()); }
  /// The digest as 64 lowercase hex digits; the object is spent after.
  std::string hexDigest();

private:
  void block(const uint8_t *p);
  std::array<uint32_t, 8> h_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;
};

/// SHA-256 of `s` as 64 lowercase hex digits.
std::string sha256Hex(const std::string &s);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_SHA256_H
