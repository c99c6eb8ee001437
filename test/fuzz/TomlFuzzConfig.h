//===- TomlFuzzConfig.h - toml++ settings for the fuzzing build -*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Force-included (-include) into the spec parser when it is built for
/// fuzzing. That build compiles toml++ from its headers (TOML_HEADER_ONLY=1)
/// so that the sanitizers and the coverage instrumentation see inside the
/// TOML parser too. Everything else matches the Debian libtomlplusplus.so the
/// normal build links: NDEBUG is defined, and TOML_ASSUME is a no-op as it is
/// in that GCC-built library (GCC has no __builtin_assume), so the fuzzer
/// explores the behaviour users get.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TEST_FUZZ_TOMLFUZZCONFIG_H
#define TFC_TEST_FUZZ_TOMLFUZZCONFIG_H

#include <toml++/impl/preprocessor.h>

#undef TOML_ASSUME
#define TOML_ASSUME(...) static_assert(true)

#endif // TFC_TEST_FUZZ_TOMLFUZZCONFIG_H
