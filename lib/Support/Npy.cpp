//===- Npy.cpp - NumPy .npy files -------------------------------*- C++ -*-===//
//
// Part of normfuse. See Npy.h. The header is a Python dict literal; only the
// three keys NumPy writes are understood, and anything else is an error
// that names the file.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace normfuse;

static llvm::Error npyError(llvm::StringRef name, const llvm::Twine &what) {
  return llvm::make_error<llvm::StringError>(name + ": " + what,
                                             llvm::inconvertibleErrorCode());
}

/// The .npy descr of each dtype; bf16 is what ml_dtypes writes (a 2-byte
/// void), and '|V2' is read as bf16 too.
static constexpr std::pair<const char *, DType> kDescrs[] = {
    {"<f2", DType::F16},
    {"<V2", DType::BF16},
    {"<f4", DType::F32},
    {"<f8", DType::F64},
};

/// The value of `key` in the header dict, up to the next top-level comma.
static std::optional<llvm::StringRef> headerValue(llvm::StringRef header,
                                                  llvm::StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  size_t end = rest.starts_with("(") ? rest.find(')') + 1 : rest.find(',');
  if (end == llvm::StringRef::npos || end == 0)
    end = rest.find('}');
  return rest.take_front(end).trim();
}

llvm::Expected<NpyArray> normfuse::parseNpy(llvm::StringRef bytes,
                                            llvm::StringRef name) {
  if (!bytes.starts_with("\x93NUMPY"))
    return npyError(name, "not a .npy file (no \\x93NUMPY magic)");
  if (bytes.size() < 10)
    return npyError(name, "truncated .npy header");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen =
        static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(name, "truncated .npy header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    return npyError(name, "unsupported .npy version " + llvm::Twine(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return npyError(name, "truncated .npy header");
  llvm::StringRef header = bytes.substr(headerStart, headerLen);

  auto descr = headerValue(header, "descr");
  auto fortran = headerValue(header, "fortran_order");
  auto shapeText = headerValue(header, "shape");
  if (!descr || !fortran || !shapeText)
    return npyError(name, "malformed .npy header: " + header.trim());

  NpyArray array;
  llvm::StringRef d = descr->trim("'\"");
  const auto *known = llvm::find_if(kDescrs, [&](const auto &entry) {
    return d == entry.first || (d == "|V2" && entry.second == DType::BF16);
  });
  if (known != std::end(kDescrs))
    array.dtype = known->second;
  else if (d.starts_with(">"))
    return npyError(name, "big-endian data ('" + d +
                              "') is not supported; save it little-endian");
  else
    return npyError(name, "unsupported dtype '" + d +
                              "' (nf-run reads <f2, <f4, <f8 and bfloat16 "
                              "as ml_dtypes saves it, <V2)");
  if (*fortran == "True")
    return npyError(name, "the array is in Fortran order; save it in C order "
                          "(numpy.ascontiguousarray)");
  if (*fortran != "False")
    return npyError(name, "malformed fortran_order " + *fortran +
                              " (expected False)");

  // A tuple: "()", "(4,)", "(4, 13)"; every element an integer.
  auto malformedShape = [&] {
    return npyError(name, "malformed shape " + *shapeText);
  };
  if (!shapeText->starts_with("(") || !shapeText->ends_with(")"))
    return malformedShape();
  llvm::StringRef dims = shapeText->drop_front().drop_back().trim();
  if (dims.ends_with(",")) {
    dims = dims.drop_back();
    if (dims.trim().empty()) // "(,)"
      return malformedShape();
  }
  llvm::SmallVector<llvm::StringRef> parts;
  if (!dims.trim().empty())
    dims.split(parts, ',', -1, /*KeepEmpty=*/true);
  // The element count and bytes, overflow-checked: a header may claim
  // more than any memory holds.
  uint64_t count = 1;
  bool overflow = false;
  for (llvm::StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return malformedShape();
    array.shape.push_back(v);
    overflow |= __builtin_mul_overflow(count, uint64_t(v), &count);
  }
  uint64_t bytesNeeded = 0;
  overflow |= __builtin_mul_overflow(count, uint64_t(getDTypeSize(array.dtype)),
                                     &bytesNeeded);
  if (overflow || bytesNeeded > uint64_t(INT64_MAX))
    return npyError(name, "shape " + *shapeText +
                              " has more elements than any memory holds");
  llvm::StringRef payload = bytes.drop_front(headerStart + headerLen);
  if (payload.size() != bytesNeeded)
    return npyError(name, "holds " + llvm::Twine(payload.size()) +
                              " bytes of data; shape " + *shapeText + " of " +
                              getDTypeName(array.dtype) + " needs " +
                              llvm::Twine(bytesNeeded));
  array.data.assign(payload.begin(), payload.end());
  return array;
}

llvm::Expected<NpyArray> normfuse::readNpy(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return npyError(path, "cannot read: " + buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path);
}

std::string normfuse::encodeNpy(const NpyArray &array) {
  const char *descr = llvm::find_if(kDescrs, [&](const auto &entry) {
                        return entry.second == array.dtype;
                      })->first;
  std::string shape = "(";
  for (int64_t d : array.shape)
    shape += std::to_string(d) + (array.shape.size() == 1 ? "," : ", ");
  if (array.shape.size() > 1)
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
  out.append(reinterpret_cast<const char *>(array.data.data()),
             array.data.size());
  return out;
}

/// Whether `path` names something that is not a regular file (a device or
/// a pipe: /dev/null, /dev/stdout), which is written directly: a temporary
/// renamed over it would replace the device with a file.
static bool isDevice(llvm::StringRef path) {
  return llvm::sys::fs::exists(path) && !llvm::sys::fs::is_regular_file(path);
}

static llvm::Error writeDevice(llvm::StringRef path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return npyError(path, "cannot open: " + ec.message());
  os << bytes;
  os.close();
  if (os.has_error()) {
    std::string message = os.error().message();
    os.clear_error();
    return npyError(path, "cannot write: " + message);
  }
  return llvm::Error::success();
}

/// Writes `bytes` to a new temporary file beside `path` and returns its
/// name; on failure nothing is left behind.
static llvm::Expected<std::string> writeTemporary(llvm::StringRef path,
                                                  llvm::StringRef bytes) {
  llvm::SmallString<256> temp;
  int fd;
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  llvm::SmallString<256> model(dir.empty() ? "." : dir);
  llvm::sys::path::append(model,
                          llvm::sys::path::filename(path) + ".tmp-%%%%%%");
  if (auto ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return npyError(path, "cannot create a file next to it: " + ec.message());
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.close();
  if (os.has_error()) {
    std::string message = os.error().message();
    os.clear_error();
    llvm::sys::fs::remove(temp);
    return npyError(path, "cannot write: " + message);
  }
  return std::string(temp);
}

llvm::Error normfuse::writeNpy(llvm::StringRef path, const NpyArray &array) {
  return writeNpyFiles({path.str()}, {array});
}

llvm::Error normfuse::writeNpyFiles(llvm::ArrayRef<std::string> paths,
                                    llvm::ArrayRef<NpyArray> arrays) {
  assert(paths.size() == arrays.size() && "one path per array");
  // Every regular file first goes to its temporary; then the devices are
  // written; only when all of that succeeded are the temporaries renamed.
  std::vector<std::string> temps(paths.size());
  auto removeTemps = [&] {
    for (const std::string &temp : temps)
      if (!temp.empty())
        llvm::sys::fs::remove(temp);
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (isDevice(paths[i]))
      continue;
    llvm::Expected<std::string> temp =
        writeTemporary(paths[i], encodeNpy(arrays[i]));
    if (!temp) {
      removeTemps();
      return temp.takeError();
    }
    temps[i] = *temp;
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!temps[i].empty())
      continue;
    if (llvm::Error err = writeDevice(paths[i], encodeNpy(arrays[i]))) {
      removeTemps();
      return err;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (temps[i].empty())
      continue;
    if (auto ec = llvm::sys::fs::rename(temps[i], paths[i])) {
      removeTemps();
      return npyError(paths[i], "cannot move the written file into place: " +
                                    ec.message());
    }
    temps[i].clear();
  }
  return llvm::Error::success();
}

NpyArray normfuse::convertF32ToBF16(const NpyArray &array) {
  NpyArray out;
  out.dtype = DType::BF16;
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
