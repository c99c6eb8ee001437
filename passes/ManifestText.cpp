//===- ManifestText.cpp - Records of the embedded manifest ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/ManifestText.h"
#include "runtime/ManifestFormat.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

/// The manifest's global and its text, or a null text when there is none.
static std::pair<LLVM::GlobalOp, StringAttr> manifestText(ModuleOp module) {
  auto global =
      module.lookupSymbol<LLVM::GlobalOp>(::tfc::manifest::kGlobalName);
  auto text = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull())
                     : StringAttr();
  return {global, text};
}

std::optional<StringRef> mlir::tfc::getManifestRecord(ModuleOp module,
                                                      StringRef key) {
  auto [global, text] = manifestText(module);
  if (!text)
    return std::nullopt;
  SmallVector<StringRef> lines;
  text.getValue().split(lines, '\n');
  for (StringRef line : lines)
    if (line.consume_front((key + " ").str()))
      return line;
  return std::nullopt;
}

void mlir::tfc::setManifestRecord(ModuleOp module, StringRef key,
                                  StringRef value) {
  auto [global, text] = manifestText(module);
  if (!text)
    return;
  // The text is NUL-terminated; every piece but the last ends a line.
  SmallVector<StringRef> lines;
  text.getValue().split(lines, '\n');
  std::string record = (key + " " + value).str();
  std::string updated;
  bool written = false;
  for (auto [i, line] : llvm::enumerate(lines)) {
    if (i > 0)
      updated += "\n";
    if (!written && line.starts_with((key + " ").str())) {
      updated += record;
      written = true;
      continue;
    }
    if (!written && line == ::tfc::manifest::kEnd) {
      updated += record + "\n";
      written = true;
    }
    updated += line.str();
  }
  OpBuilder builder(global);
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), updated.size());
  builder.create<LLVM::GlobalOp>(global.getLoc(), type, global.getConstant(),
                                 global.getLinkage(), global.getSymName(),
                                 builder.getStringAttr(updated));
  global.erase();
}
