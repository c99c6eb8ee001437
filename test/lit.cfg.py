# -*- Python -*-
# lit configuration of tfc's compiler tests.

import os
import shutil

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
config.substitutions.append(("%tfc_obj_root", config.tfc_obj_root))
config.substitutions.append(("%specs", os.path.join(config.tfc_src_root, "specs")))

# The real corpora (scripts/fetch-data.sh, which scripts/test.sh runs):
# TFC_DATA_DIR, else <build>/data.
config.substitutions.append(
    ("%tfc_data", os.environ.get("TFC_DATA_DIR") or
     os.path.join(config.tfc_obj_root, "data")))

llvm_config.with_system_environment(["HOME", "TMPDIR", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The tools are found on PATH rather than substituted: "tfc" is also a word in
# command lines such as --emit=tfc.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tfc_tools_dir, append_path=True)

# Data-parallel training (test/mpi): `REQUIRES: mpirun`, run by ctest's `mpi`
# test (lit --param mpi=1, see test/CMakeLists.txt) rather than by `lit`.
# %mpirun starts ranks on this machine, however many cores it has, one
# OpenMP thread each, ended after 5 minutes at most.
if lit_config.params.get("mpi") != "1":
    config.excludes.append("mpi")
if shutil.which("mpirun"):
    config.available_features.add("mpirun")
config.substitutions.append(
    ("%mpirun", "timeout 300 mpirun --oversubscribe --allow-run-as-root "
     "--bind-to none -x OMP_NUM_THREADS=1"))

# The GPU back end (test/codegen/gpu). Its PTX is checked everywhere; where
# CUDA's ptxas is installed (`REQUIRES: ptxas`), ptxas also assembles it.
# Tests that run kernels say `REQUIRES: cuda-device` and are reported as
# unsupported (skipped) on machines without an NVIDIA GPU and driver.
ptxas = shutil.which("ptxas") or next(
    (p for p in (os.path.join(d, "bin", "ptxas") for d in
                 [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
                  "/usr/local/cuda"] if d) if os.access(p, os.X_OK)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
# A complete toolkit (ptxas and libdevice, which f64 models need):
# `REQUIRES: libdevice`, its folder as %cuda_toolkit.
toolkit = next(
    (d for d in [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
                 os.path.dirname(os.path.dirname(ptxas or "")), "/usr/local/cuda"]
     if d and os.access(os.path.join(d, "bin", "ptxas"), os.X_OK) and
     os.path.exists(os.path.join(d, "nvvm", "libdevice", "libdevice.10.bc"))),
    None)
if toolkit:
    config.available_features.add("libdevice")
    config.substitutions.append(("%cuda_toolkit", toolkit))
if os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
    config.available_features.add("cuda-in-usr-local")
nvidia_smi = shutil.which("nvidia-smi")
if nvidia_smi and os.system(nvidia_smi + " -L > /dev/null 2>&1") == 0:
    config.available_features.add("cuda-device")
