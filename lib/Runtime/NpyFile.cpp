//===- NpyFile.cpp - NumPy .npy files, for the runtime alone --------------===//
//
// Part of normfuse. See NpyFile.h. The header is a Python dict literal; only
// the three keys NumPy writes are understood, and anything else is an error
// that names the file.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/NpyFile.h"
#include "normfuse/Runtime/FileIO.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <string_view>

using namespace normfuse::runtime;

namespace {

/// The .npy descr of each dtype, as NumPy writes it, and another spelling
/// read as the same dtype: bf16 is what ml_dtypes writes (a 2-byte void),
/// and a one-byte type has no byte order ('|'), though '<' reads too.
/// Integer dtypes are named as MLIR names their element types: signless
/// iN for NumPy's signed integers, uiN for its unsigned ones, i1 for bool.
struct Descr {
  const char *descr, *alias, *dtype;
  size_t size;
};
constexpr Descr kDescrs[] = {
    {"<f2", nullptr, "f16", 2},  {"<V2", "|V2", "bf16", 2},
    {"<f4", nullptr, "f32", 4},  {"<f8", nullptr, "f64", 8},
    {"|b1", "<b1", "i1", 1},     {"|i1", "<i1", "i8", 1},
    {"<i2", nullptr, "i16", 2},  {"<i4", nullptr, "i32", 4},
    {"<i8", nullptr, "i64", 8},  {"|u1", "<u1", "ui8", 1},
    {"<u2", nullptr, "ui16", 2}, {"<u4", nullptr, "ui32", 4},
    {"<u8", nullptr, "ui64", 8},
};

constexpr std::string_view kSpace = " \t\n\v\f\r";

std::string_view ltrim(std::string_view s, std::string_view chars = kSpace) {
  size_t at = s.find_first_not_of(chars);
  return at == std::string_view::npos ? std::string_view() : s.substr(at);
}

std::string_view trim(std::string_view s, std::string_view chars = kSpace) {
  s = ltrim(s, chars);
  size_t at = s.find_last_not_of(chars);
  return at == std::string_view::npos ? std::string_view()
                                      : s.substr(0, at + 1);
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

/// The value of `key` in the header dict, up to the next top-level comma;
/// false when the key or its colon is missing.
bool headerValue(std::string_view header, const std::string &key,
                 std::string_view &value) {
  std::string quoted = "'" + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos)
    return false;
  std::string_view rest = ltrim(header.substr(at + quoted.size()));
  if (!startsWith(rest, ":"))
    return false;
  rest = ltrim(rest.substr(1));
  // A tuple runs to its ')' (npos + 1 wraps to 0: no ')' at all).
  size_t end = startsWith(rest, "(") ? rest.find(')') + 1 : rest.find(',');
  if (end == std::string_view::npos || end == 0)
    end = rest.find('}');
  value = trim(rest.substr(0, end));
  return true;
}

/// A non-negative decimal integer that fits int64_t.
bool parseDimension(std::string_view text, int64_t &value) {
  text = trim(text);
  if (text.empty())
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    if (__builtin_mul_overflow(v, uint64_t(10), &v) ||
        __builtin_add_overflow(v, uint64_t(c - '0'), &v) ||
        v > uint64_t(INT64_MAX))
      return false;
  }
  value = int64_t(v);
  return true;
}

bool fail(std::string &error, const std::string &name,
          const std::string &what) {
  error = name + ": " + what;
  return false;
}

} // namespace

size_t normfuse::runtime::npyElementSize(const std::string &dtype) {
  for (const Descr &d : kDescrs)
    if (dtype == d.dtype)
      return d.size;
  return 0;
}

bool normfuse::runtime::parseNpy(const char *data, size_t size,
                                 const std::string &name, NpyArray &array,
                                 std::string &error) {
  std::string_view bytes(data, size);
  if (!startsWith(bytes, "\x93NUMPY"))
    return fail(error, name, "not a .npy file (no \\x93NUMPY magic)");
  if (bytes.size() < 10)
    return fail(error, name, "truncated .npy header");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen = 0, headerStart;
  if (major == 1) {
    headerLen =
        static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail(error, name, "truncated .npy header");
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    return fail(error, name,
                "unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() - headerStart < headerLen)
    return fail(error, name, "truncated .npy header");
  std::string_view header = bytes.substr(headerStart, headerLen);

  std::string_view descr, fortran, shapeText;
  if (!headerValue(header, "descr", descr) ||
      !headerValue(header, "fortran_order", fortran) ||
      !headerValue(header, "shape", shapeText))
    return fail(error, name,
                "malformed .npy header: " + std::string(trim(header)));

  NpyArray result;
  std::string_view d = trim(descr, "'\"");
  size_t elementSize = 0;
  for (const Descr &known : kDescrs)
    if (d == known.descr || (known.alias && d == known.alias)) {
      result.dtype = known.dtype;
      elementSize = known.size;
    }
  if (!elementSize && startsWith(d, ">"))
    return fail(error, name,
                "big-endian data ('" + std::string(d) +
                    "') is not supported; save it little-endian");
  if (!elementSize)
    return fail(error, name,
                "unsupported dtype '" + std::string(d) +
                    "' (normfuse reads <f2, <f4, <f8, bfloat16 as "
                    "ml_dtypes saves it (<V2), bool (|b1) and integers of "
                    "8 to 64 bits (|i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8))");
  if (fortran == "True")
    return fail(error, name,
                "the array is in Fortran order; save it in C order "
                "(numpy.ascontiguousarray)");
  if (fortran != "False")
    return fail(error, name,
                "malformed fortran_order " + std::string(fortran) +
                    " (expected False)");

  // A tuple: "()", "(4,)", "(4, 13)"; every element an integer.
  std::string shapeString(shapeText);
  if (!startsWith(shapeText, "(") || !endsWith(shapeText, ")"))
    return fail(error, name, "malformed shape " + shapeString);
  std::string_view dims = trim(shapeText.substr(1, shapeText.size() - 2));
  if (endsWith(dims, ",")) {
    dims.remove_suffix(1);
    if (trim(dims).empty()) // "(,)"
      return fail(error, name, "malformed shape " + shapeString);
  }
  // The element count and bytes, overflow-checked: a header may claim more
  // than any memory holds.
  uint64_t count = 1;
  bool overflow = false;
  if (!trim(dims).empty()) {
    for (size_t start = 0;;) {
      size_t comma = dims.find(',', start);
      std::string_view part = dims.substr(
          start, comma == std::string_view::npos ? comma : comma - start);
      int64_t v;
      if (!parseDimension(part, v))
        return fail(error, name, "malformed shape " + shapeString);
      result.shape.push_back(v);
      overflow |= __builtin_mul_overflow(count, uint64_t(v), &count);
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
  }
  uint64_t bytesNeeded = 0;
  overflow |=
      __builtin_mul_overflow(count, uint64_t(elementSize), &bytesNeeded);
  if (overflow || bytesNeeded > uint64_t(INT64_MAX))
    return fail(error, name,
                "shape " + shapeString +
                    " has more elements than any memory holds");
  std::string_view payload = bytes.substr(headerStart + headerLen);
  if (payload.size() != bytesNeeded)
    return fail(error, name,
                "holds " + std::to_string(payload.size()) +
                    " bytes of data; shape " + shapeString + " of " +
                    result.dtype + " needs " + std::to_string(bytesNeeded));
  if (result.dtype == "i1")
    for (size_t i = 0; i < payload.size(); ++i)
      if (static_cast<unsigned char>(payload[i]) > 1)
        return fail(error, name,
                    "element " + std::to_string(i) +
                        " of a bool array is the byte " +
                        std::to_string(static_cast<unsigned char>(payload[i])) +
                        "; a bool is 0 or 1");
  result.data.assign(payload.begin(), payload.end());
  array = std::move(result);
  return true;
}

bool normfuse::runtime::readNpyFile(const std::string &path, NpyArray &array,
                                    std::string &error) {
  std::string bytes;
  if (!readWholeFile(path, bytes, error))
    return false;
  return parseNpy(bytes.data(), bytes.size(), path, array, error);
}

std::string normfuse::runtime::encodeNpy(const NpyArray &array) {
  return encodeNpy(array.dtype, array.shape, array.data.data(),
                   array.data.size());
}

std::string normfuse::runtime::encodeNpy(const std::string &dtype,
                                         const std::vector<int64_t> &dims,
                                         const void *data, size_t bytes) {
  const char *descr = "<f4";
  for (const Descr &d : kDescrs)
    if (dtype == d.dtype)
      descr = d.descr;
  std::string shape = "(";
  for (int64_t d : dims)
    shape += std::to_string(d) + (dims.size() == 1 ? "," : ", ");
  if (dims.size() > 1)
    shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char *>(data), bytes);
  return out;
}

bool normfuse::runtime::writeNpyFiles(
    const std::vector<std::string> &paths,
    const std::vector<const NpyArray *> &arrays, std::string &error) {
  if (paths.size() != arrays.size()) {
    error = "writeNpyFiles: " + std::to_string(paths.size()) + " paths for " +
            std::to_string(arrays.size()) + " arrays";
    return false;
  }
  return writeFilesAllOrNothing(
      paths, [&](size_t i) { return encodeNpy(*arrays[i]); }, error);
}

NpyArray normfuse::runtime::convertF32ToBF16(const NpyArray &array) {
  NpyArray out;
  out.dtype = "bf16";
  out.shape = array.shape;
  size_t n = array.data.size() / 4;
  out.data.resize(n * 2);
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, array.data.data() + 4 * i, 4);
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint16_t h =
        std::isnan(f)
            ? static_cast<uint16_t>((x >> 16) | 0x40)
            : static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
    std::memcpy(out.data.data() + 2 * i, &h, 2);
  }
  return out;
}
