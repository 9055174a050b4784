// Per-row quantization and scale epilogues of the W8A8 path.
//
// quantize_rows: one block of 256 threads per row. Pass 1 takes max|x| over the row (a max is
// exact whatever the order, so the scale matches the host reference bit for bit); thread 0
// stores scale = row_scale(amax, qmax); pass 2 re-reads the row (from L1/L2) and writes
// quantize_int8 / quantize_fp8_e4m3 of each element, the helpers the reference calls.
// Layout: x 16-bit [rows][cols] row-major, q [rows][cols], scales fp32 [rows].
//
// scale_epilogue: one thread per output element, grid-stride; acc [M][N] int32 or fp32 row-major,
// row scales [M] (per token), column scales [N] (per output channel), y bf16 [M][N]; the product is
// formed as (acc * row) * col in fp32 and rounded with float_to_bf16, as the reference does.
//
// Preconditions (checked): extents >= 1 and below 2^31 per row; non-null device pointers.
// Configurations: {int8, fp8} quantizers, {int32, fp32} epilogues; fp16 or bf16 input at run time.
#include "kernels/w8a8_gemm.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/w8a8_reference.h"

namespace quantplan::kernels {
namespace {

constexpr int kRowThreads = 256;
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 30;

template <bool kFp8>
__global__ void __launch_bounds__(kRowThreads) quantize_rows_kernel(const std::uint16_t* __restrict__ x, Half16 type, std::int64_t cols,
                                                                      void* __restrict__ q, float* __restrict__ scales) {
    const std::int64_t row = blockIdx.x;
    const std::uint16_t* xr = x + row * cols;
    float amax = 0.0f;
    for (std::int64_t c = threadIdx.x; c < cols; c += kRowThreads) amax = fmaxf(amax, fabsf(half16_to_float(xr[c], type)));
    for (int offset = 16; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    __shared__ float warp_max[kRowThreads / 32];
    __shared__ float row_scale_s;
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = 0.0f;
        for (int w = 0; w < kRowThreads / 32; ++w) m = fmaxf(m, warp_max[w]);
        row_scale_s = row_scale(m, kFp8 ? kFp8E4M3Max : kInt8Max);
        scales[row] = row_scale_s;
    }
    __syncthreads();
    const float scale = row_scale_s;
    for (std::int64_t c = threadIdx.x; c < cols; c += kRowThreads) {
        const float v = half16_to_float(xr[c], type);
        if constexpr (kFp8) {
            static_cast<std::uint8_t*>(q)[row * cols + c] = quantize_fp8_e4m3(v, scale);
        } else {
            static_cast<std::int8_t*>(q)[row * cols + c] = quantize_int8(v, scale);
        }
    }
}

template <typename Acc>
__global__ void scale_epilogue_kernel(const Acc* __restrict__ acc, const float* __restrict__ row_scales, const float* __restrict__ col_scales,
                                      std::int64_t m, std::int64_t n, std::uint16_t* __restrict__ y) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m * n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const float v = (static_cast<float>(acc[i]) * row_scales[i / n]) * col_scales[i % n];
        y[i] = float_to_bf16(v);
    }
}

void check_rows(const char* op, const void* x, std::int64_t rows, std::int64_t cols, const void* q, const float* scales) {
    if (rows < 1 || cols < 1 || rows > kMaxExtent || cols > kMaxExtent)
        throw Error(std::string(op) + ": rows/cols", "must be in 1..2^30, got " + std::to_string(rows) + " x " + std::to_string(cols));
    if (!x || !q || !scales) throw Error(op, "null device pointer");
}

template <typename Acc>
void launch_epilogue(const Acc* acc, const float* row_scales, const float* col_scales, std::int64_t m, std::int64_t n, std::uint16_t* y,
                     cudaStream_t stream) {
    if (m < 1 || n < 1 || m > kMaxExtent || n > kMaxExtent) throw Error("scale_epilogue: m/n", "must be in 1..2^30");
    if (!acc || !row_scales || !col_scales || !y) throw Error("scale_epilogue", "null device pointer");
    const std::int64_t blocks = std::min<std::int64_t>((m * n + 255) / 256, std::int64_t{current_sm_count()} * 32);
    scale_epilogue_kernel<Acc><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(acc, row_scales, col_scales, m, n, y);
    QP_CHECK_LAUNCH("scale_epilogue_kernel");
}

}  // namespace

void quantize_rows_int8(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t cols, std::int8_t* q, float* scales,
                        cudaStream_t stream) {
    check_rows("quantize_rows_int8", x, rows, cols, q, scales);
    quantize_rows_kernel<false><<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(x, type, cols, q, scales);
    QP_CHECK_LAUNCH("quantize_rows_kernel<int8>");
}

void quantize_rows_fp8(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t cols, std::uint8_t* q, float* scales,
                       cudaStream_t stream) {
    check_rows("quantize_rows_fp8", x, rows, cols, q, scales);
    quantize_rows_kernel<true><<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(x, type, cols, q, scales);
    QP_CHECK_LAUNCH("quantize_rows_kernel<fp8>");
}

void scale_epilogue_int32(const std::int32_t* acc, const float* row_scales, const float* col_scales, std::int64_t m, std::int64_t n,
                          std::uint16_t* y, cudaStream_t stream) {
    launch_epilogue(acc, row_scales, col_scales, m, n, y, stream);
}

void scale_epilogue_fp32(const float* acc, const float* row_scales, const float* col_scales, std::int64_t m, std::int64_t n, std::uint16_t* y,
                         cudaStream_t stream) {
    launch_epilogue(acc, row_scales, col_scales, m, n, y, stream);
}

}  // namespace quantplan::kernels
