#pragma once
// Host references of the cuBLASLt-backed ops (w8a8_gemm.h): per-row INT8 / FP8 quantization
// (per-token activations, per-channel weights), the INT8 GEMM with its scale epilogue, the FP8
// GEMM with outer-vector scales, and the bf16 GEMM baseline.
#include <cstdint>
#include <vector>

#include "kernels/numeric.h"
#include "kernels/reference.h"

namespace quantplan::kernels {

// A [rows][cols] matrix quantized symmetrically per row: value ~ q * scales[row].
struct Int8Rows {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::int8_t> q;   // [rows][cols]
    std::vector<float> scales;    // [rows]
};

// The FP8 E4M3 twin of Int8Rows.
struct Fp8Rows {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::uint8_t> q;  // [rows][cols] E4M3 bits
    std::vector<float> scales;    // [rows]
};

// The per-row scale of a row whose largest magnitude is `amax`, for a format whose largest value
// is `qmax`: amax / qmax in float, or 1 for an all-zero row (so nothing divides by zero).
QP_HD float row_scale(float amax, float qmax) { return amax > 0.0f ? amax / qmax : 1.0f; }

// Quantizes each row of x (16-bit `type`) to INT8 with scale row_scale(max|row|, 127). Bit-exact
// contract of quantize_rows_int8().
Int8Rows quantize_rows_int8_reference(const std::vector<std::uint16_t>& x, Half16 type, std::int64_t rows, std::int64_t cols);

// Quantizes each row to FP8 E4M3 with scale row_scale(max|row|, 448). Bit-exact contract of
// quantize_rows_fp8().
Fp8Rows quantize_rows_fp8_reference(const std::vector<std::uint16_t>& x, Half16 type, std::int64_t rows, std::int64_t cols);

// Y[M][N] = bf16((float(sum_k qx qw) * sx[m]) * sw[n]): the INT8 GEMM (int32 accumulate, exact for
// K < 2^17) and its epilogue, bit-exact.
std::vector<std::uint16_t> int8_gemm_reference(const Int8Rows& x, const Int8Rows& w);

// Y = sx[m] sw[n] sum_k qx qw over the decoded FP8 values, in double.
DenseResult fp8_gemm_reference(const Fp8Rows& x, const Fp8Rows& w);

// The accepted error of the FP8 GEMM: inputs exact (already FP8), fp32 accumulation over K,
// a bf16 output, and 2^-14 of sum|x w| for Hopper's FP8 tensor-core accumulation, which keeps
// about 14 bits before cuBLASLt promotes partial sums to fp32 (DeepSeek-V3 technical report
// §3.3.2; to be confirmed by the first GPU run).
Tolerance fp8_gemm_tolerance(std::int64_t k);

// Y = X W^T for bf16 X [M][K] and W [N][K], in double.
DenseResult bf16_gemm_reference(const std::vector<std::uint16_t>& x, const std::vector<std::uint16_t>& w, std::int64_t m, std::int64_t n,
                                std::int64_t k);

// The accepted error of the bf16 GEMM: fp32 accumulation over K, a bf16 output.
Tolerance bf16_gemm_tolerance(std::int64_t k);

}  // namespace quantplan::kernels
