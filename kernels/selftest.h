#pragma once
// Device self-test: the shared bit-level helpers (numeric.h) against the hardware conversions the
// kernels also use. Reference: numeric.h itself (the helpers are the specification). Details:
// selftest.cu.
#include <array>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace quantplan::kernels {

// Disagreements between hardware conversions and the helpers, by kind:
// 0 float -> bf16, 1 float -> fp16, 2 float -> E4M3 (saturating), 3 E4M3 -> float (all 256 codes).
struct NumericSelftest {
    std::array<std::uint32_t, 4> mismatches{};
    std::array<std::int64_t, 4> first_mismatch{-1, -1, -1, -1};  // input index, -1 when none

    bool passed() const { return mismatches[0] == 0 && mismatches[1] == 0 && mismatches[2] == 0 && mismatches[3] == 0; }
};

// Converts every input (device fp32, count >= 256) both ways and counts disagreements; NaN
// results agree when both are NaN. Synchronises `stream`.
NumericSelftest numeric_selftest(const float* inputs, std::int64_t count, cudaStream_t stream);

}  // namespace quantplan::kernels
