//===- UpstreamGuards.cpp - refuse what crashes MLIR 19 -----------*- C++
//-*-===//
//
// Part of normfuse. See UpstreamGuards.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/UpstreamGuards.h"

#include "llvm/ADT/StringExtras.h"

using namespace normfuse;

namespace {

/// The line and column (from 1) of `offset` in `text`.
std::pair<size_t, size_t> lineAndColumn(llvm::StringRef text, size_t offset) {
  llvm::StringRef before = text.take_front(offset);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column =
      lineStart == llvm::StringRef::npos ? offset + 1 : offset - lineStart;
  return {line, column};
}

/// Whether `offset` lies in a `//` comment.
bool inComment(llvm::StringRef text, size_t offset) {
  size_t lineStart = text.take_front(offset).rfind('\n');
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  return text.slice(lineStart, offset).contains("//");
}

/// Whether `list` (the text between `[` and `]`) is a list of integers.
bool isIntegerList(llvm::StringRef list) {
  list = list.trim();
  if (list.empty())
    return true;
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',');
  for (llvm::StringRef item : items) {
    item = item.trim();
    item.consume_front("-");
    if (item.empty() || !llvm::all_of(item, llvm::isDigit))
      return false;
  }
  return true;
}

/// MLIR 19's custom parsers of linalg.reduce and linalg.broadcast
/// (`dimensions = [...]`) and linalg.transpose (`permutation = [...]`)
/// store the parsed DenseI64ArrayAttr without checking it: anything but a
/// bracketed list of integers there dereferences a null attribute.
std::optional<std::string> findLinalgArrayCrash(llvm::StringRef text,
                                                llvm::StringRef name) {
  static const std::pair<llvm::StringRef, llvm::StringRef> ops[] = {
      {"linalg.reduce", "dimensions"},
      {"linalg.broadcast", "dimensions"},
      {"linalg.transpose", "permutation"}};
  for (auto [op, keyword] : ops) {
    for (size_t at = text.find(op); at != llvm::StringRef::npos;
         at = text.find(op, at + op.size())) {
      // In a comment, or the generic form ("linalg.reduce"(...) <{...}>),
      // which does not go through the custom parser.
      if (inComment(text, at) || (at > 0 && text[at - 1] == '"'))
        continue;
      // The op's own attribute: the first `keyword =` after it, before the
      // next op of the dialect.
      size_t end = text.find("linalg.", at + op.size());
      llvm::StringRef rest = text.slice(at + op.size(), end);
      size_t key = rest.find(keyword);
      while (key != llvm::StringRef::npos) {
        llvm::StringRef after = rest.drop_front(key + keyword.size()).ltrim();
        if (!inComment(text, at + op.size() + key) &&
            after.consume_front("=")) {
          after = after.ltrim();
          size_t close = after.find(']');
          if (!after.starts_with("[") || close == llvm::StringRef::npos ||
              !isIntegerList(after.slice(1, close))) {
            auto [line, column] = lineAndColumn(text, at);
            return (name + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) +
                    ": error: " + op + "'s `" + keyword +
                    "` must be a list of integers, like [0, 1]: MLIR 19's "
                    "parser crashes on anything else, so normfuse refuses it "
                    "(docs/UpstreamGuards.md)")
                .str();
          }
          break;
        }
        key = rest.find(keyword, key + keyword.size());
      }
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string>
normfuse::findUpstreamCrash(llvm::StringRef text, llvm::StringRef bufferName) {
  return findLinalgArrayCrash(text, bufferName);
}
