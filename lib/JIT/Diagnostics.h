//===- Diagnostics.h - MLIR diagnostics as an error message -----*- C++ -*-===//
//
// Part of normfuse. The JIT's requests parse, verify and lower IR in an
// MLIRContext; what MLIR reports on the way becomes the message of the
// returned error.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_JIT_DIAGNOSTICS_H
#define NORMFUSE_LIB_JIT_DIAGNOSTICS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace normfuse::jit {

/// Collects the diagnostics emitted while alive, one per line.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler(&ctx, [this](mlir::Diagnostic &d) {
          std::string loc;
          llvm::raw_string_ostream os(loc);
          if (auto fileLoc =
                  mlir::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
            os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine()
               << ":" << fileLoc.getColumn();
          else
            os << d.getLocation();
          text += (text.empty() ? "" : "\n") + loc + ": " + d.str();
          for (const mlir::Diagnostic &note : d.getNotes())
            if (!llvm::StringRef(note.str())
                     .starts_with("see current operation"))
              text += "\n  note: " + note.str();
          return mlir::success();
        }) {}
  const std::string &str() const { return text; }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace normfuse::jit

#endif // NORMFUSE_LIB_JIT_DIAGNOSTICS_H
