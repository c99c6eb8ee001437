# -*- Python -*-
# lit configuration of tfc's compiler tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tfc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".toml", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit",
                   "Inputs", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tfc_src_root", config.tfc_src_root))
config.substitutions.append(("%specs", os.path.join(config.tfc_src_root, "specs")))

llvm_config.with_system_environment(["HOME", "TMPDIR", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The tools are found on PATH rather than substituted: "tfc" is also a word in
# command lines such as --emit=tfc.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tfc_tools_dir, append_path=True)
