// OpenBLAS's kernels on CPUs newer than the library.
//
// OpenBLAS picks its kernels by CPU model when it loads. Debian 12's (0.3.21)
// does not know the Xeons of CPU model 207 and falls back to its oldest
// x86-64 kernels (Prescott: SSE3), which multiply float32 matrices 4.6x
// slower there than its AVX-512 ones (one thread, [1024 x 512] x [512 x
// 1536]: 45.8 against 9.9 ms). Every LibTorch product that is not a linear
// layer (attention's, the head's, a user's) goes through it. Its
// OPENBLAS_CORETYPE variable, read when the library loads, names the kernels
// to use instead.
#pragma once

#include <optional>
#include <string>

namespace strata {

// The kernels OpenBLAS should use instead of `loadedCore` on a CPU with
// these instruction sets: "SkylakeX" (AVX-512 F, BW, DQ and VL) or "Haswell"
// (AVX2 and FMA) where `loadedCore` does not use them; nullopt where it does.
std::optional<std::string> betterOpenBlasCore(const std::string& loadedCore, bool hasAvx512,
                                              bool hasAvx2);

// The kernels the OpenBLAS this process loaded chose ("Prescott",
// "SkylakeX", ...); nullopt where no OpenBLAS is loaded.
std::optional<std::string> loadedOpenBlasCore();

// betterOpenBlasCore for the OpenBLAS this process loaded and this CPU;
// nullopt where OPENBLAS_CORETYPE is set already or no OpenBLAS is loaded.
std::optional<std::string> openBlasCoreToForce();

// What to tell the user of a program that cannot run itself again, where
// openBlasCoreToForce() names kernels; nullopt otherwise.
std::optional<std::string> openBlasCoreWarning();

// Where openBlasCoreToForce() names kernels, sets OPENBLAS_CORETYPE and runs
// this program again with `argv` (the variable only counts before OpenBLAS
// loads): it does not return then, and the processes the program starts
// inherit the variable. Otherwise, or if running it again fails, returns.
void reexecWithBetterOpenBlasCore(char** argv);

}  // namespace strata
