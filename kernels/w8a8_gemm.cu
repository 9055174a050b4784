// Per-row quantization and scale epilogues of the W8A8 path.
//
// quantize_rows: one block of 256 threads per row. Pass 1 takes max|x| over the row (a max is
// exact whatever the order, so the scale matches the host reference bit for bit); thread 0
// stores scale = row_scale(amax, qmax); pass 2 writes quantize_int8 / quantize_fp8_e4m3 of each
// element, the helpers the reference calls. When cols % 8 == 0, x is 16-byte and q 8-byte
// aligned and a row has at most 16384 elements, each thread loads its share of the row with
// 16-byte loads, all issued before the first is used (a decode-size M = 1 call is one block: its
// time is load latency), keeps it in registers for pass 2 and stores 8 bytes at a time; other
// shapes take the element-wise kernel, which re-reads the row from L1/L2. Padding rows
// [rows, padded_rows) of q and scales are zeroed by their own blocks of the same launch.
// Layout: x 16-bit [rows][cols] row-major, q [padded_rows][cols], scales fp32 [padded_rows].
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

#include "core/base/error.h"
#include "kernels/cuda_check.h"
#include "kernels/w8a8_reference.h"

namespace quantplan::kernels {
namespace {

constexpr int kRowThreads = 256;
constexpr int kVecElems = 8;                  // 16-bit elements per 16-byte load
constexpr int kSmallRowVecs = 4;              // vectors per thread: rows up to 8192 elements
constexpr int kLargeRowVecs = 8;              // rows up to 16384 elements
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 30;

// Zeroes row `row` of q (cols bytes) and its scale: a padding row the cuBLASLt GEMMs run over.
__device__ void zero_padding_row(void* __restrict__ q, float* __restrict__ scales, std::int64_t row, std::int64_t cols) {
    std::uint8_t* qr = static_cast<std::uint8_t*>(q) + row * cols;
    if (cols % 16 == 0 && reinterpret_cast<std::uintptr_t>(qr) % 16 == 0) {
        for (std::int64_t c = threadIdx.x; c < cols / 16; c += kRowThreads) reinterpret_cast<uint4*>(qr)[c] = make_uint4(0, 0, 0, 0);
    } else {
        for (std::int64_t c = threadIdx.x; c < cols; c += kRowThreads) qr[c] = 0;
    }
    if (threadIdx.x == 0) scales[row] = 0.0f;
}

// max over the block of each thread's `amax` (order-free), then thread 0 stores the row's scale;
// every thread gets it back.
template <bool kFp8>
__device__ __forceinline__ float block_row_scale(float amax, float* __restrict__ scales, std::int64_t row) {
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
    return row_scale_s;
}

// One element's quantized byte (the reference's helpers).
template <bool kFp8>
__device__ __forceinline__ std::uint8_t quantize_byte(float v, float scale) {
    if constexpr (kFp8) {
        return quantize_fp8_e4m3(v, scale);
    } else {
        return static_cast<std::uint8_t>(quantize_int8(v, scale));
    }
}

// Element-wise kernel: any cols, any alignment.
template <bool kFp8>
__global__ void __launch_bounds__(kRowThreads) quantize_rows_kernel(const std::uint16_t* __restrict__ x, Half16 type, std::int64_t rows,
                                                                      std::int64_t cols, void* __restrict__ q, float* __restrict__ scales) {
    const std::int64_t row = blockIdx.x;
    if (row >= rows) {
        zero_padding_row(q, scales, row, cols);
        return;
    }
    const std::uint16_t* xr = x + row * cols;
    float amax = 0.0f;
    for (std::int64_t c = threadIdx.x; c < cols; c += kRowThreads) amax = fmaxf(amax, fabsf(half16_to_float(xr[c], type)));
    const float scale = block_row_scale<kFp8>(amax, scales, row);
    std::uint8_t* qr = static_cast<std::uint8_t*>(q) + row * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += kRowThreads) qr[c] = quantize_byte<kFp8>(half16_to_float(xr[c], type), scale);
}

// Vector kernel: cols % 8 == 0, cols <= kRowThreads x kVecs x 8, x 16-byte and q 8-byte aligned.
// Thread t holds the row's 16-byte vectors t, t + 256, ... in registers for both passes. The
// zero vectors past the row's end leave max|x| unchanged (|0| = 0 <= amax) and are not stored.
template <bool kFp8, int kVecs>
__global__ void __launch_bounds__(kRowThreads) quantize_rows_vec_kernel(const std::uint16_t* __restrict__ x, Half16 type, std::int64_t rows,
                                                                          std::int64_t cols, void* __restrict__ q, float* __restrict__ scales) {
    const std::int64_t row = blockIdx.x;
    if (row >= rows) {
        zero_padding_row(q, scales, row, cols);
        return;
    }
    const int vecs = static_cast<int>(cols / kVecElems);
    const uint4* xr = reinterpret_cast<const uint4*>(x + row * cols);
    uint4 v[kVecs];
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
        const int idx = static_cast<int>(threadIdx.x) + i * kRowThreads;
        v[i] = idx < vecs ? __ldg(xr + idx) : make_uint4(0, 0, 0, 0);
    }
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
        const std::uint32_t words[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            amax = fmaxf(amax, fabsf(half16_to_float(static_cast<std::uint16_t>(words[w] & 0xFFFFu), type)));
            amax = fmaxf(amax, fabsf(half16_to_float(static_cast<std::uint16_t>(words[w] >> 16), type)));
        }
    }
    const float scale = block_row_scale<kFp8>(amax, scales, row);
    uint2* qr = reinterpret_cast<uint2*>(static_cast<std::uint8_t*>(q) + row * cols);
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
        const int idx = static_cast<int>(threadIdx.x) + i * kRowThreads;
        if (idx < vecs) {
            const std::uint32_t words[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
            std::uint32_t packed[2] = {0u, 0u};
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const std::uint32_t lo = quantize_byte<kFp8>(half16_to_float(static_cast<std::uint16_t>(words[w] & 0xFFFFu), type), scale);
                const std::uint32_t hi = quantize_byte<kFp8>(half16_to_float(static_cast<std::uint16_t>(words[w] >> 16), type), scale);
                packed[w / 2] |= (lo | (hi << 8)) << (16 * (w % 2));  // element 2w at byte 2w (little-endian)
            }
            qr[idx] = make_uint2(packed[0], packed[1]);
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

void check_rows(const char* op, const void* x, std::int64_t rows, std::int64_t padded_rows, std::int64_t cols, const void* q, const float* scales) {
    if (rows < 1 || cols < 1 || rows > kMaxExtent || cols > kMaxExtent)
        throw Error(std::string(op) + ": rows/cols", "must be in 1..2^30, got " + std::to_string(rows) + " x " + std::to_string(cols));
    if (padded_rows < rows || padded_rows > kMaxExtent)
        throw Error(std::string(op) + ": padded_rows", "must be in rows..2^30, got " + std::to_string(padded_rows));
    if (!x || !q || !scales) throw Error(op, "null device pointer");
}

// Launches the vector kernel where its preconditions hold, else the element-wise one; one block
// per row, padded_rows blocks.
template <bool kFp8>
void launch_quantize_rows(const char* op, const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t padded_rows, std::int64_t cols, void* q,
                          float* scales, cudaStream_t stream) {
    check_rows(op, x, rows, padded_rows, cols, q, scales);
    const bool vectors = cols % kVecElems == 0 && is_aligned(x, 16) && is_aligned(q, 8);
    const std::int64_t vecs_per_thread = (cols / kVecElems + kRowThreads - 1) / kRowThreads;
    const auto grid = static_cast<unsigned>(padded_rows);
    if (vectors && vecs_per_thread <= kSmallRowVecs) {
        quantize_rows_vec_kernel<kFp8, kSmallRowVecs><<<grid, kRowThreads, 0, stream>>>(x, type, rows, cols, q, scales);
    } else if (vectors && vecs_per_thread <= kLargeRowVecs) {
        quantize_rows_vec_kernel<kFp8, kLargeRowVecs><<<grid, kRowThreads, 0, stream>>>(x, type, rows, cols, q, scales);
    } else {
        quantize_rows_kernel<kFp8><<<grid, kRowThreads, 0, stream>>>(x, type, rows, cols, q, scales);
    }
    QP_CHECK_LAUNCH("quantize_rows_kernel");
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
    launch_quantize_rows<false>("quantize_rows_int8", x, type, rows, rows, cols, q, scales, stream);
}

void quantize_rows_int8_padded(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t padded_rows, std::int64_t cols, std::int8_t* q,
                               float* scales, cudaStream_t stream) {
    launch_quantize_rows<false>("quantize_rows_int8_padded", x, type, rows, padded_rows, cols, q, scales, stream);
}

void quantize_rows_fp8(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t cols, std::uint8_t* q, float* scales,
                       cudaStream_t stream) {
    launch_quantize_rows<true>("quantize_rows_fp8", x, type, rows, rows, cols, q, scales, stream);
}

void quantize_rows_fp8_padded(const std::uint16_t* x, Half16 type, std::int64_t rows, std::int64_t padded_rows, std::int64_t cols, std::uint8_t* q,
                              float* scales, cudaStream_t stream) {
    launch_quantize_rows<true>("quantize_rows_fp8_padded", x, type, rows, padded_rows, cols, q, scales, stream);
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
