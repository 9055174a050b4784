#pragma once
// The small kernels around the cuBLASLt W8A8 GEMMs (lt_gemm.h): per-row (per-token) INT8 / FP8
// quantization of activations, and the per-token x per-channel scale epilogue for the INT8 GEMM
// (cuBLASLt has no outer-vector scales for INT8) and for FP8 on sm_89 (outer-vector scales are
// sm_90 only: kernels.md (c)). Host references: w8a8_reference.h. Details: w8a8_gemm.cu.
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/numeric.h"

namespace quantplan::kernels {

// q[r][c] = quantize_int8(x[r][c], s[r]) with s[r] = row_scale(max_c |x[r][c]|, 127); x 16-bit
// `type` [rows][cols], q int8 [rows][cols], scales fp32 [rows] (device pointers). Bit-exact with
// quantize_rows_int8_reference. Preconditions: rows, cols >= 1.
void quantize_rows_int8(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t cols, std::int8_t* q, float* scales,
                        cudaStream_t stream);

// The FP8 E4M3 twin (qmax 448, saturating). Bit-exact with quantize_rows_fp8_reference.
void quantize_rows_fp8(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t cols, std::uint8_t* q, float* scales,
                       cudaStream_t stream);

// quantize_rows_int8 of the `rows` rows of x, and in the same launch rows [rows, padded_rows) of q
// and scales set to zero: the padding rows the cuBLASLt GEMMs run over (w8a8_padded_rows in
// lt_gemm.h). q and scales hold padded_rows rows. Precondition: rows <= padded_rows <= 2^30.
void quantize_rows_int8_padded(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t padded_rows, std::int64_t cols, std::int8_t* q,
                               float* scales, cudaStream_t stream);

// The FP8 twin of quantize_rows_int8_padded.
void quantize_rows_fp8_padded(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t padded_rows, std::int64_t cols, std::uint8_t* q,
                              float* scales, cudaStream_t stream);

// y[m][n] = bf16((float(acc[m][n]) * row_scales[m]) * col_scales[n]) for an int32 accumulator
// [M][N]; bit-exact with int8_gemm_reference given the same accumulator.
void scale_epilogue_int32(const std::int32_t* acc, const float* row_scales, const float* col_scales, std::int64_t m, std::int64_t n,
                          std::uint16_t* y, cudaStream_t stream);

// The same epilogue for an fp32 accumulator (FP8 on sm_89).
void scale_epilogue_fp32(const float* acc, const float* row_scales, const float* col_scales, std::int64_t m, std::int64_t n, std::uint16_t* y,
                         cudaStream_t stream);

}  // namespace quantplan::kernels
