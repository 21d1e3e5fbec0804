//===- FileIO.h - whole files read and written, for the runtime -*- C++ -*-===//
//
// Part of normfuse. Plain C++ and POSIX: reading a whole file, and writing
// a set of files all or nothing. Errors are return values with messages
// that start with the file's path.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_FILEIO_H
#define NORMFUSE_RUNTIME_FILEIO_H

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace normfuse::runtime {

/// The bytes of the file (or pipe) at `path`.
bool readWholeFile(const std::string &path, std::string &bytes,
                   std::string &error);

/// Writes `contents(i)` to `paths[i]`, all or nothing: each goes to a
/// temporary file beside its path first, and the files are renamed into
/// place only when every one was written. A path that names a device or a
/// pipe (/dev/null) is written directly, after the temporaries and before
/// the renames. Only a failed rename, after others succeeded, leaves some
/// files replaced. `contents` is called once per regular file and once per
/// device, so that only one file's bytes are held at a time.
bool writeFilesAllOrNothing(const std::vector<std::string> &paths,
                            const std::function<std::string(size_t)> &contents,
                            std::string &error);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_FILEIO_H
