//===- ManifestJson.h - the JSON of kernel package manifests ----*- C++ -*-===//
//
// Part of normfuse. The JSON reader behind readManifest (KernelPackage.h):
// a recursive-descent parser of the JSON the manifest writer produces
// (integers only, ASCII escapes, nesting at most 64 deep), with errors that
// name the byte, and a reader of typed fields whose errors name the path.
// Plain C++, runtime-only.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_RUNTIME_MANIFESTJSON_H
#define NORMFUSE_LIB_RUNTIME_MANIFESTJSON_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace normfuse::runtime::json {

/// A parsed JSON value (numbers: integers only).
struct Json {
  enum class Kind { Null, Bool, Integer, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  int64_t integer = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;
};

/// Parses `text` (the whole of it) into `value`; otherwise sets `error`
/// ("manifest.json, byte N: what") and fails.
bool parse(const std::string &text, Json &value, std::string &error);

/// Reads typed fields out of parsed JSON, naming the path of what is wrong.
class Reader {
public:
  std::string error;

  const Json *field(const Json &object, const std::string &key, Json::Kind kind,
                    const std::string &path) {
    static const char *names[] = {"null",     "a boolean", "an integer",
                                  "a string", "an array",  "an object"};
    if (object.kind != Json::Kind::Object)
      return failAt(path, "is not an object");
    auto it = object.object.find(key);
    if (it == object.object.end())
      return failAt(path, "has no \"" + key + "\"");
    if (it->second.kind != kind)
      return failAt(path + "." + key,
                    std::string("is not ") + names[static_cast<int>(kind)]);
    return &it->second;
  }
  bool integer(const Json &object, const std::string &key, int64_t min,
               int64_t max, const std::string &path, int64_t &out) {
    const Json *v = field(object, key, Json::Kind::Integer, path);
    if (!v)
      return false;
    if (v->integer < min || v->integer > max) {
      failAt(path + "." + key, "is " + std::to_string(v->integer) +
                                   ", not from " + std::to_string(min) +
                                   " to " + std::to_string(max));
      return false;
    }
    out = v->integer;
    return true;
  }
  std::nullptr_t failAt(const std::string &path, const std::string &what) {
    if (error.empty())
      error = "manifest.json: " + path + " " + what;
    return nullptr;
  }
};

} // namespace normfuse::runtime::json

#endif // NORMFUSE_LIB_RUNTIME_MANIFESTJSON_H
