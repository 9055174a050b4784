// W4A16 GEMM with fused group-wise dequantization, the dequantize kernel of the generic path, and
// the act-order activation permutation.
//
// Operation: Y[M][N] = X[M][K] W^T, W[n][k] = (q[n][k] - z[n][g]) * s[n][g], g = k / G, computed in
// fp32 and rounded once to the activation format. Reference: w4a16_reference.h.
//
// Memory layout (w4a16_pack.h): qweight uint32 [N][K/8] (nibble j of word w is k = 8w + j), scales
// fp16/bf16 [N][K/G], zeros uint8 [N][K/G] or none (zero 8); X [M][K] and Y [M][N] row-major
// fp16 or bf16 (one type for both).
//
// Kernels:
//   GEMV (decode, M <= 4 rows per pass): one warp (or 2/4/8 warps splitting K when N is small, so
//   the machine has enough loads in flight) per output channel. Each lane loads 16 bytes = 32
//   weights of one group with one 128-bit load (a warp reads 512 contiguous bytes of a row) and
//   prefetches its next chunk into L2, turns each nibble into the exact float q - z by placing it
//   in the mantissa of 2^23 (one PRMT per nibble, nibbles_minus_zero) and subtracting 2^23 + z
//   (no conversion instruction), multiplies it with up to 4 activation rows in fp32, and applies
//   the group scale once per 32 weights. Warp shuffles and shared memory reduce the row; one lane
//   writes each output. One row per pass runs at 32 registers, 64 warps per SM.
//   Tensor cores (any M): 128 threads, a 64-column x 64-k tile of weights per step, 16 or 64 rows of
//   activations. Each thread loads one 16-byte weight chunk and its activations into registers
//   one tile ahead (global loads overlap the MMAs of the current tile; the 16-row kernel keeps two
//   register sets so they also overlap its dequantization), dequantizes the chunk to fp16/bf16 in
//   shared memory, and the four warps run WMMA 16x16x16 with fp32 accumulators. For decode sizes
//   (M <= 256) the K loop is split across blocks so that the grid fills one wave (occupancy
//   calculator); partial sums meet in an fp32 workspace by atomicAdd and a last kernel rounds
//   them to the output type.
//   Dequantizing in shared memory (instead of Marlin's register-level fragments) keeps the kernel
//   short and layout-agnostic; the weight bytes, which decide decode speed, are the same.
//
// Preconditions (checked by the launchers): G in {32, 64, 128}; K a multiple of G (so of 32);
// M, N >= 1; x, y, qweight 16-byte aligned. The tensor-core path needs K % 64 == 0 (otherwise the
// GEMV path runs), fp16 from sm_75 and bf16 from sm_80.
// Supported configurations (the dispatch tables below): GEMV {1, 4 rows} x {fp16, bf16};
// tensor cores {16, 64 rows} x {fp16, bf16}; any group size, scale format and zero points at run time.
#include "kernels/w4a16_gemm.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "core/base/error.h"

namespace quantplan::kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kGemvWarps = 8;
constexpr int kGemvThreads = kGemvWarps * kWarp;
constexpr int kTileN = 64;       // output channels per tensor-core block
constexpr int kTileK = 64;       // input channels per pipeline step
constexpr int kPad = 8;          // shared-memory row padding (elements): rows start 16 bytes apart mod 128
constexpr int kMmaThreads = 128;
constexpr std::int64_t kMaxRows = std::int64_t{1} << 24;
constexpr std::int64_t kSplitMaxRows = 256;  // split-K only at decode sizes

// Threads one SM holds on the architecture being compiled: 2048 on sm_80 and sm_90, 1536 on
// sm_86/87/89, 1024 on sm_75 (a launch bound asking for more is ignored, with a ptxas warning).
// And the blocks per SM the double-buffered 16-row tensor-core kernel is capped for: ptxas fits
// it in 64 registers (8 blocks) without spills on sm_90 only (sm_80 spills 12 bytes there), in
// 80 (6 blocks) without spills on all four targets.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kSmThreads = 1024;
constexpr int kMma16MinBlocks = 6;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kSmThreads = 1536;
constexpr int kMma16MinBlocks = 6;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int kSmThreads = 2048;
constexpr int kMma16MinBlocks = 6;
#else
constexpr int kSmThreads = 2048;
constexpr int kMma16MinBlocks = 8;
#endif

// fp16 activations.
struct Fp16Act {
    using wmma_type = __half;
    static __device__ __forceinline__ void unpack2(std::uint32_t u, float& lo, float& hi) {
        lo = __half2float(__ushort_as_half(static_cast<unsigned short>(u & 0xFFFFu)));
        hi = __half2float(__ushort_as_half(static_cast<unsigned short>(u >> 16)));
    }
    static __device__ __forceinline__ std::uint16_t from_float(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

// bf16 activations.
struct Bf16Act {
    using wmma_type = __nv_bfloat16;
    static __device__ __forceinline__ void unpack2(std::uint32_t u, float& lo, float& hi) {
        lo = __uint_as_float(u << 16);
        hi = __uint_as_float(u & 0xFFFF0000u);
    }
    static __device__ __forceinline__ std::uint16_t from_float(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

template <typename Act>
__device__ __forceinline__ void load8(const std::uint16_t* p, float (&f)[8]) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
    Act::unpack2(v.x, f[0], f[1]);
    Act::unpack2(v.y, f[2], f[3]);
    Act::unpack2(v.z, f[4], f[5]);
    Act::unpack2(v.w, f[6], f[7]);
}

__device__ __forceinline__ float load_scale(const std::uint16_t* scales, std::int64_t i, int scale_is_bf16) {
    const std::uint16_t b = __ldg(scales + i);
    return scale_is_bf16 ? bf16_to_float(b) : __half2float(__ushort_as_half(b));
}

__device__ __forceinline__ float load_zero(const std::uint8_t* zeros, std::int64_t i) {
    return zeros ? static_cast<float>(__ldg(zeros + i)) : static_cast<float>(kW4SymmetricZero);
}

// Weights are read once per call: load them without polluting L1 (activations stay cached).
__device__ __forceinline__ uint4 load_stream(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// Asks L2 to fetch the line holding `p` (no register, no wait): the next chunk's DRAM latency
// overlaps this chunk's arithmetic. A hint only: values are unaffected.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// ---- GEMV: up to MT rows per pass ----
//   qweight [N][K/32] 16-byte chunks; scales/zeros [N][K/G]; x [rows][K]; y [rows][N].
//   warps_per_row in {1, 2, 4, 8} warps share one output channel, splitting its chunks.
//   N, K <= 2^20 (check_w4_shape): every offset inside one row fits in 32 bits, so only the row
//   bases are 64-bit and the loop's index arithmetic stays 32-bit.

// Blocks of 256 threads per SM the GEMV is compiled for (the register cap 65536 / (blocks x 256)):
// one row per pass fills the SM (8 blocks, 64 warps, 32 registers on sm_80/sm_90); four rows get 4
// blocks at 64 registers (without a cap the compiler hoists all 16 activation loads and takes 128,
// which leaves 16 warps). Both compile without spills (-Xptxas -v).
__host__ __device__ constexpr int gemv_min_blocks(int rows_per_pass) { return rows_per_pass == 1 ? kSmThreads / kGemvThreads : 4; }

// One chunk (32 weights of one group) times the rows of x into acc: x points at the chunk's first
// activation of row 0, rows are k apart. Per 8 weights an fp32 FMA chain into part[mi], then one
// FMA with the group scale (the order the tolerance of w4a16_reference.h assumes).
template <int MT, typename Act>
__device__ __forceinline__ void gemv_chunk(uint4 wv, float scale, float zero, const std::uint16_t* __restrict__ x, int k, int rows,
                                           float (&acc)[MT]) {
    const std::uint32_t words[4] = {wv.x, wv.y, wv.z, wv.w};
    float part[MT];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) part[mi] = 0.0f;
#pragma unroll
    for (int wi = 0; wi < 4; ++wi) {
        float wf[8];
        nibbles_minus_zero(words[wi], zero, wf);
#pragma unroll
        for (int mi = 0; mi < MT; ++mi) {
            if (MT == 1 || mi < rows) {  // one row per pass: no per-row test
                float xf[8];
                load8<Act>(x + mi * k + wi * 8, xf);
#pragma unroll
                for (int j = 0; j < 8; ++j) part[mi] = fmaf(xf[j], wf[j], part[mi]);
            }
        }
    }
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) acc[mi] = fmaf(part[mi], scale, acc[mi]);
}

template <int MT, typename Act>
__global__ void __launch_bounds__(kGemvThreads, gemv_min_blocks(MT))
    w4a16_gemv_kernel(const uint4* __restrict__ qweight, const std::uint16_t* __restrict__ scales,
                      const std::uint8_t* __restrict__ zeros, const std::uint16_t* __restrict__ x,
                      std::uint16_t* __restrict__ y, int rows, int n, int k, int group_shift,
                      int scale_is_bf16, int warps_per_row) {
    const int warp = static_cast<int>(threadIdx.x) / kWarp;
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const int rows_per_block = kGemvWarps / warps_per_row;
    const int local_row = warp / warps_per_row;
    const int sub = warp % warps_per_row;
    const int row = static_cast<int>(blockIdx.x) * rows_per_block + local_row;
    const int chunks = k / 32;
    const int groups = k >> group_shift;
    const int stride = kWarp * warps_per_row;  // chunks between one lane's consecutive chunks

    float acc[MT];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) acc[mi] = 0.0f;

    if (row < n) {
        // The lane's chunks are c0, c0 + stride, ...; stride x 32 weights is a multiple of 1024 and
        // so of G, so each step moves the scale/zero index by exactly group_step groups and the
        // pointers simply advance (no per-chunk 64-bit index arithmetic).
        const int c0 = sub * kWarp + lane;
        const int group_step = (stride * 32) >> group_shift;
        const std::int64_t row_groups = static_cast<std::int64_t>(row) * groups + ((c0 * 32) >> group_shift);
        const uint4* wp = qweight + static_cast<std::int64_t>(row) * chunks + c0;
        const std::uint16_t* sp = scales + row_groups;
        const std::uint8_t* zp = zeros ? zeros + row_groups : nullptr;
        const std::uint16_t* xp = x + c0 * 32;
        // One 16-byte weight load per lane and step, and an L2 prefetch of the lane's next chunk so
        // that its DRAM latency overlaps this chunk's ~170 instructions. Loading two chunks per step
        // instead needs more than 32 registers (measured with -Xptxas -v: 40 without spills, or
        // spills at 32 and the second load then issues after the first chunk's arithmetic).
#pragma unroll 1
        for (int c = c0; c < chunks; c += stride) {
            const uint4 wv = load_stream(wp);
            if (c + stride < chunks) prefetch_l2(wp + stride);
            const float scale = load_scale(sp, 0, scale_is_bf16);
            const float zero = load_zero(zp, 0);
            gemv_chunk<MT, Act>(wv, scale, zero, xp, k, rows, acc);
            wp += stride;
            sp += group_step;
            if (zp) zp += group_step;
            xp += stride * 32;
        }
    }
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int offset = kWarp / 2; offset > 0; offset /= 2) acc[mi] += __shfl_xor_sync(0xFFFFFFFFu, acc[mi], offset);

    __shared__ float partial[kGemvWarps][MT];
    if (lane == 0)
#pragma unroll
        for (int mi = 0; mi < MT; ++mi) partial[warp][mi] = acc[mi];
    __syncthreads();
    if (sub == 0 && lane < MT && lane < rows && row < n) {
        float sum = 0.0f;
        for (int s = 0; s < warps_per_row; ++s) sum += partial[warp + s][lane];
        y[lane * n + row] = Act::from_float(sum);
    }
}

// ---- Tensor cores: BM rows x 64 columns per block, 64 k per step ----

// Whether the BM-row kernel double-buffers its step registers. The 16-row kernel (M <= 16,
// memory-bound) does, capped at 64 registers for 8 blocks per SM on sm_90, without spills
// (-Xptxas -v; single-buffered it had 56 registers, 9 blocks). The 64-row kernel does not: on
// sm_90 its second set would take 168 registers (3 blocks per SM instead of 4-5), or spill under
// a 128 cap.
__host__ __device__ constexpr bool mma_double_buffered(int block_rows) { return block_rows <= 16; }

// Blocks per SM the BM-row kernel is register-capped for. 0 leaves it to the compiler (nvcc then
// emits no .minnctapersm); an explicit 1 would not: ptxas then takes up to 174 registers for the
// 64-row kernel instead of 96-128.
__host__ __device__ constexpr int mma_min_blocks(int block_rows) { return mma_double_buffered(block_rows) ? kMma16MinBlocks : 0; }

//   partial: null (write y) or an fp32 [M][N] workspace the split-K blocks add into.
template <int BM, typename Act>
__device__ __forceinline__ void w4a16_mma_body(const uint4* __restrict__ qweight, const std::uint16_t* __restrict__ scales,
                                               const std::uint8_t* __restrict__ zeros, const std::uint16_t* __restrict__ x,
                                               std::uint16_t* __restrict__ y, float* __restrict__ partial, int m, int n, int k, int group_shift,
                                               int scale_is_bf16, int k_tiles_per_split) {
    using namespace nvcuda;
    using WT = typename Act::wmma_type;
    constexpr int kALoads = BM * (kTileK / 8) / kMmaThreads;  // 16-byte activation loads per thread per step
    static_assert(kALoads >= 1, "BM too small for 128 threads");
    __shared__ __align__(128) std::uint16_t a_s[BM][kTileK + kPad];
    __shared__ __align__(128) std::uint16_t b_s[kTileN][kTileK + kPad];
    __shared__ __align__(128) float c_s[BM][kTileN + 4];

    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / kWarp;
    const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kTileN;
    const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * BM;
    const int k_tiles = k / kTileK;
    const int kt_begin = static_cast<int>(blockIdx.z) * k_tiles_per_split;
    const int kt_end = min(k_tiles, kt_begin + k_tiles_per_split);
    const std::int64_t chunks = k / 32;
    const std::int64_t groups = k >> group_shift;

    // This thread's weight chunk per step: tile row b_row, k half b_half (32 weights).
    const int b_row = tid >> 1;
    const int b_half = tid & 1;
    const std::int64_t wn = n0 + b_row;
    const bool b_valid = wn < n;

    // What one pipeline step loads into registers: this thread's weight chunk with its scale and
    // zero point, and its share of the activation tile. Rows past N keep zeros (never stored: the
    // dequantized zero chunk only feeds outputs that are not written).
    struct StepRegs {
        uint4 w;
        float s, z;
        uint4 a[kALoads];
    };

    auto load_step = [&](StepRegs& r, int kt) {
        const std::int64_t kc = static_cast<std::int64_t>(kt) * (kTileK / 32) + b_half;
        if (b_valid) {
            r.w = load_stream(qweight + wn * chunks + kc);
            const std::int64_t g = wn * groups + ((kc * 32) >> group_shift);
            r.s = load_scale(scales, g, scale_is_bf16);
            r.z = load_zero(zeros, g);
        }
#pragma unroll
        for (int i = 0; i < kALoads; ++i) {
            const int idx = tid + i * kMmaThreads;
            const int row = idx / (kTileK / 8);
            const int c8 = idx % (kTileK / 8);
            const std::int64_t gm = m0 + row;
            r.a[i] = gm < m ? __ldg(reinterpret_cast<const uint4*>(x + gm * k + static_cast<std::int64_t>(kt) * kTileK + c8 * 8))
                            : make_uint4(0, 0, 0, 0);
        }
    };
    auto store_step = [&](const StepRegs& r) {
#pragma unroll
        for (int i = 0; i < kALoads; ++i) {
            const int idx = tid + i * kMmaThreads;
            *reinterpret_cast<uint4*>(&a_s[idx / (kTileK / 8)][(idx % (kTileK / 8)) * 8]) = r.a[i];
        }
        const std::uint32_t words[4] = {r.w.x, r.w.y, r.w.z, r.w.w};
#pragma unroll
        for (int wi = 0; wi < 4; ++wi) {
            float wf[8];
            nibbles_minus_zero(words[wi], r.z, wf);
            std::uint32_t packed[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float lo = wf[2 * j] * r.s;
                const float hi = wf[2 * j + 1] * r.s;
                packed[j] = static_cast<std::uint32_t>(Act::from_float(lo)) | (static_cast<std::uint32_t>(Act::from_float(hi)) << 16);
            }
            *reinterpret_cast<uint4*>(&b_s[b_row][b_half * 32 + wi * 8]) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        }
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[BM / 16];
#pragma unroll
    for (int i = 0; i < BM / 16; ++i) wmma::fill_fragment(acc[i], 0.0f);
    // One step's MMAs over the tiles in shared memory.
    auto mma_step = [&]() {
#pragma unroll
        for (int kk = 0; kk < kTileK; kk += 16) {
            wmma::fragment<wmma::matrix_b, 16, 16, 16, WT, wmma::col_major> bf;
            wmma::load_matrix_sync(bf, reinterpret_cast<const WT*>(&b_s[warp * 16][kk]), kTileK + kPad);
#pragma unroll
            for (int i = 0; i < BM / 16; ++i) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, WT, wmma::row_major> af;
                wmma::load_matrix_sync(af, reinterpret_cast<const WT*>(&a_s[i * 16][kk]), kTileK + kPad);
                wmma::mma_sync(acc[i], af, bf, acc[i]);
            }
        }
    };

    StepRegs r0, r1;
    r0.w = r1.w = make_uint4(0, 0, 0, 0);
    r0.s = r1.s = r0.z = r1.z = 0.0f;
    if (kt_begin < kt_end) load_step(r0, kt_begin);
    if constexpr (mma_double_buffered(BM)) {
        // Two register sets: step kt + 1's global loads are issued before step kt is dequantized
        // into shared memory, so they have step kt's dequantization and MMAs to arrive (with one
        // set, only the MMAs). The loop is unrolled by two so that each set keeps fixed registers;
        // the steps run in the same order, so the sums are unchanged.
        for (int kt = kt_begin; kt < kt_end; kt += 2) {
            if (kt + 1 < kt_end) load_step(r1, kt + 1);
            store_step(r0);
            __syncthreads();
            mma_step();
            __syncthreads();  // every warp is done with a_s / b_s before the next store
            if (kt + 1 >= kt_end) break;
            if (kt + 2 < kt_end) load_step(r0, kt + 2);
            store_step(r1);
            __syncthreads();
            mma_step();
            __syncthreads();
        }
    } else {
        for (int kt = kt_begin; kt < kt_end; ++kt) {
            store_step(r0);
            __syncthreads();
            if (kt + 1 < kt_end) load_step(r0, kt + 1);  // next step's loads overlap this step's MMAs
            mma_step();
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < BM / 16; ++i) wmma::store_matrix_sync(&c_s[i * 16][warp * 16], acc[i], kTileN + 4, wmma::mem_row_major);
    __syncthreads();
    for (int idx = tid; idx < BM * kTileN; idx += kMmaThreads) {
        const int r = idx / kTileN;
        const int col = idx % kTileN;
        const std::int64_t gm = m0 + r, gn = n0 + col;
        if (gm >= m || gn >= n) continue;
        const float v = c_s[r][col];
        if (partial) {
            atomicAdd(partial + gm * n + gn, v);
        } else {
            y[gm * n + gn] = Act::from_float(v);
        }
    }
}

template <int BM, typename Act>
__global__ void __launch_bounds__(kMmaThreads, mma_min_blocks(BM))
    w4a16_mma_kernel(const uint4* __restrict__ qweight, const std::uint16_t* __restrict__ scales,
                     const std::uint8_t* __restrict__ zeros, const std::uint16_t* __restrict__ x,
                     std::uint16_t* __restrict__ y, float* __restrict__ partial, int m, int n, int k,
                     int group_shift, int scale_is_bf16, int k_tiles_per_split) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    if constexpr (std::is_same_v<Act, Bf16Act>) {
        __trap();  // never dispatched: bf16 WMMA needs sm_80 (the launcher's table says so)
    } else {
        w4a16_mma_body<BM, Act>(qweight, scales, zeros, x, y, partial, m, n, k, group_shift, scale_is_bf16, k_tiles_per_split);
    }
#else
    w4a16_mma_body<BM, Act>(qweight, scales, zeros, x, y, partial, m, n, k, group_shift, scale_is_bf16, k_tiles_per_split);
#endif
}

// Rounds the split-K workspace to the output type: y[i] = fp16/bf16(partial[i]).
template <typename Act>
__global__ void w4a16_finalize_kernel(const float* __restrict__ partial, std::uint16_t* __restrict__ y, std::int64_t count) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        y[i] = Act::from_float(partial[i]);
}

// x_out[r][j] = x[r][perm[j]].
__global__ void w4a16_permute_kernel(const std::uint16_t* __restrict__ x, const std::int32_t* __restrict__ perm, std::uint16_t* __restrict__ x_out,
                                     std::int64_t m, std::int64_t k) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m * k;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t r = i / k, j = i % k;
        x_out[i] = x[r * k + perm[j]];
    }
}

// One thread per 16-byte chunk (32 weights): W[n][32c .. 32c + 31] = 16-bit((q - z) * s).
__global__ void w4a16_dequantize_kernel(const uint4* __restrict__ qweight, const std::uint16_t* __restrict__ scales,
                                        const std::uint8_t* __restrict__ zeros, std::uint16_t* __restrict__ out, std::int64_t n, int k,
                                        int group_shift, int scale_is_bf16, Half16 out_type) {
    const std::int64_t chunks = k / 32;
    const std::int64_t groups = k >> group_shift;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n * chunks;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t row = i / chunks, c = i % chunks;
        const uint4 wv = load_stream(qweight + i);
        const std::int64_t g = row * groups + ((c * 32) >> group_shift);
        const float scale = scale_is_bf16 ? bf16_to_float(scales[g]) : fp16_to_float(scales[g]);
        const float zero = load_zero(zeros, g);
        const std::uint32_t words[4] = {wv.x, wv.y, wv.z, wv.w};
        uint4* dst = reinterpret_cast<uint4*>(out + row * k + c * 32);
#pragma unroll
        for (int wi = 0; wi < 4; ++wi) {
            // The GEMV's conversion: this kernel's exact check against the reference (which uses
            // nibble_minus_zero) is what proves it on the device.
            float wf[8];
            nibbles_minus_zero(words[wi], zero, wf);
            std::uint32_t packed[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const std::uint32_t lo = float_to_half16(wf[2 * j] * scale, out_type);
                const std::uint32_t hi = float_to_half16(wf[2 * j + 1] * scale, out_type);
                packed[j] = lo | (hi << 16);
            }
            dst[wi] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        }
    }
}

// ---- Dispatch tables ----

using GemvKernel = void (*)(const uint4*, const std::uint16_t*, const std::uint8_t*, const std::uint16_t*, std::uint16_t*, int, int, int, int, int, int);
using MmaKernel = void (*)(const uint4*, const std::uint16_t*, const std::uint8_t*, const std::uint16_t*, std::uint16_t*, float*, int, int, int, int,
                           int, int);
using FinalizeKernel = void (*)(const float*, std::uint16_t*, std::int64_t);

struct GemvEntry {
    Half16 act;
    int rows;  // rows per pass
    GemvKernel kernel;
};
constexpr GemvEntry kGemvTable[] = {
    {Half16::Fp16, 1, w4a16_gemv_kernel<1, Fp16Act>},
    {Half16::Fp16, 4, w4a16_gemv_kernel<4, Fp16Act>},
    {Half16::Bf16, 1, w4a16_gemv_kernel<1, Bf16Act>},
    {Half16::Bf16, 4, w4a16_gemv_kernel<4, Bf16Act>},
};

struct MmaEntry {
    Half16 act;
    int block_rows;
    int min_cc;  // lowest compute capability (x10) with this WMMA type
    MmaKernel kernel;
};
constexpr MmaEntry kMmaTable[] = {
    {Half16::Fp16, 16, 75, w4a16_mma_kernel<16, Fp16Act>},
    {Half16::Fp16, 64, 75, w4a16_mma_kernel<64, Fp16Act>},
    {Half16::Bf16, 16, 80, w4a16_mma_kernel<16, Bf16Act>},
    {Half16::Bf16, 64, 80, w4a16_mma_kernel<64, Bf16Act>},
};

FinalizeKernel finalize_kernel(Half16 act) { return act == Half16::Bf16 ? w4a16_finalize_kernel<Bf16Act> : w4a16_finalize_kernel<Fp16Act>; }

int log2_exact(std::int64_t v) {
    int s = 0;
    while ((std::int64_t{1} << s) < v) ++s;
    return s;
}

int blocks_for(std::int64_t items, int threads) {
    const std::int64_t wanted = (items + threads - 1) / threads;
    const std::int64_t cap = std::int64_t{current_sm_count()} * 32;
    return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

void check_weights(const W4DeviceWeights& w, const char* op) {
    const std::string o(op);
    check_w4_shape(w.n, w.k, w.group_size, (o + ": weight").c_str());
    if (!w.qweight || !is_aligned(w.qweight, 16)) throw Error(o + ": qweight", "must be a non-null, 16-byte aligned device pointer");
    if (!w.scales) throw Error(o + ": scales", "must be a non-null device pointer");
}

bool tensor_core_supported(Half16 act, int cc) {
    for (const MmaEntry& e : kMmaTable)
        if (e.act == act && cc >= e.min_cc) return true;
    return false;
}

}  // namespace

W4DeviceWeights W4DeviceBuffers::view() const {
    W4DeviceWeights v;
    v.qweight = qweight.as<const std::uint32_t>();
    v.scales = scales.as<const std::uint16_t>();
    v.zeros = zeros.bytes() > 0 ? zeros.as<const std::uint8_t>() : nullptr;
    v.n = n;
    v.k = k;
    v.group_size = group_size;
    v.scale_type = scale_type;
    return v;
}

W4DeviceBuffers upload_w4(const W4Packed& p) {
    check_w4_shape(p.n, p.k, p.group_size, "upload_w4");
    W4DeviceBuffers b;
    b.n = p.n;
    b.k = p.k;
    b.group_size = p.group_size;
    b.scale_type = p.scale_type;
    b.qweight = DeviceBuffer(p.qweight.size() * sizeof(std::uint32_t));
    b.qweight.upload(p.qweight.data(), b.qweight.bytes());
    b.scales = DeviceBuffer(p.scales.size() * sizeof(std::uint16_t));
    b.scales.upload(p.scales.data(), b.scales.bytes());
    if (!p.zeros.empty()) {
        b.zeros = DeviceBuffer(p.zeros.size());
        b.zeros.upload(p.zeros.data(), b.zeros.bytes());
    }
    if (!p.k_perm.empty()) {
        b.k_perm = DeviceBuffer(p.k_perm.size() * sizeof(std::int32_t));
        b.k_perm.upload(p.k_perm.data(), b.k_perm.bytes());
    }
    return b;
}

W4Path w4a16_choose_path(std::int64_t m, Half16 act_type, int cc) {
    if (m <= 4 || !tensor_core_supported(act_type, cc)) return W4Path::Gemv;
    return W4Path::TensorCore;
}

std::uint64_t w4a16_workspace_bytes(std::int64_t m, std::int64_t n) {
    if (m < 1 || n < 1 || m > kSplitMaxRows) return 0;
    return static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(n) * sizeof(float);
}

void w4a16_gemm(const W4DeviceWeights& w, const std::uint16_t* x, std::int64_t m, Half16 act_type, std::uint16_t* y, float* workspace,
                std::uint64_t workspace_bytes, cudaStream_t stream, W4Path path) {
    check_weights(w, "w4a16_gemm");
    if (m < 1 || m > kMaxRows) throw Error("w4a16_gemm: m", "must be in 1..2^24, got " + std::to_string(m));
    if (!x || !is_aligned(x, 16)) throw Error("w4a16_gemm: x", "must be a non-null, 16-byte aligned device pointer");
    if (!y || !is_aligned(y, 16)) throw Error("w4a16_gemm: y", "must be a non-null, 16-byte aligned device pointer");
    const int cc = current_compute_capability();
    if (path == W4Path::Auto) path = w4a16_choose_path(m, act_type, cc);
    if (path == W4Path::TensorCore && !tensor_core_supported(act_type, cc))
        throw Error("w4a16_gemm: path", std::string("no tensor-core kernel for ") + (act_type == Half16::Bf16 ? "bf16" : "fp16") + " on sm_" +
                                            std::to_string(cc));
    if (path == W4Path::TensorCore && w.k % kTileK != 0) path = W4Path::Gemv;  // K = 32 x odd: the GEMV path takes it

    const int n = static_cast<int>(w.n), k = static_cast<int>(w.k);
    const int group_shift = log2_exact(w.group_size);
    const int scale_bf16 = w.scale_type == Half16::Bf16 ? 1 : 0;
    const uint4* qweight = reinterpret_cast<const uint4*>(w.qweight);

    if (path == W4Path::Gemv) {
        const int pass_rows = m == 1 ? 1 : 4;
        GemvKernel kernel = nullptr;
        for (const GemvEntry& e : kGemvTable)
            if (e.act == act_type && e.rows == pass_rows) kernel = e.kernel;
        if (!kernel) throw Error("w4a16_gemm", "no GEMV kernel for this configuration");
        // Enough warps in flight: split a row over up to 8 warps when N alone gives fewer than
        // 48 warps per SM, as long as each warp keeps at least two 512-byte loads per row.
        const std::int64_t target_warps = std::int64_t{current_sm_count()} * 48;
        const std::int64_t chunks = w.k / 32;
        int wpr = 1;
        while (wpr < kGemvWarps && w.n * wpr < target_warps && chunks >= std::int64_t{kWarp} * wpr * 4) wpr *= 2;
        const int rows_per_block = kGemvWarps / wpr;
        const unsigned grid = static_cast<unsigned>((w.n + rows_per_block - 1) / rows_per_block);
        for (std::int64_t m0 = 0; m0 < m; m0 += pass_rows) {
            const int rows = static_cast<int>(std::min<std::int64_t>(pass_rows, m - m0));
            kernel<<<grid, kGemvThreads, 0, stream>>>(qweight, w.scales, w.zeros, x + m0 * w.k, y + m0 * w.n, rows, n, k, group_shift, scale_bf16, wpr);
            QP_CHECK_LAUNCH("w4a16_gemv_kernel");
        }
        return;
    }

    const int block_rows = m <= 16 ? 16 : 64;
    MmaKernel kernel = nullptr;
    for (const MmaEntry& e : kMmaTable)
        if (e.act == act_type && e.block_rows == block_rows && cc >= e.min_cc) kernel = e.kernel;
    if (!kernel) throw Error("w4a16_gemm", "no tensor-core kernel for this configuration");
    const unsigned grid_n = static_cast<unsigned>((w.n + kTileN - 1) / kTileN);
    const unsigned grid_m = static_cast<unsigned>((m + block_rows - 1) / block_rows);
    const int k_tiles = k / kTileK;
    // Split K into as many slices as one wave of blocks holds (the blocks every SM runs at once, from
    // the occupancy calculator): the grid then runs in a single wave, where a fixed "3 x SMs" could
    // leave a partial second wave with most SMs idle, or leave room unused. Each block keeps at
    // least 4 steps; a grid already a wave or more stays unsplit.
    int splits = 1;
    const std::uint64_t need = static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(w.n) * sizeof(float);
    if (workspace && m <= kSplitMaxRows && workspace_bytes >= need) {
        const std::int64_t base = std::int64_t{grid_n} * grid_m;
        const std::int64_t wave = std::int64_t{max_active_blocks_per_sm(reinterpret_cast<const void*>(kernel), kMmaThreads, 0)} * current_sm_count();
        splits = static_cast<int>(std::clamp<std::int64_t>(wave / base, 1, std::max(1, k_tiles / 4)));
    }
    const int per_split = (k_tiles + splits - 1) / splits;
    splits = (k_tiles + per_split - 1) / per_split;
    float* partial = splits > 1 ? workspace : nullptr;
    if (partial) QP_CUDA_CHECK(cudaMemsetAsync(partial, 0, need, stream));
    const dim3 grid(grid_n, grid_m, static_cast<unsigned>(splits));
    kernel<<<grid, kMmaThreads, 0, stream>>>(qweight, w.scales, w.zeros, x, y, partial, static_cast<int>(m), n, k, group_shift, scale_bf16, per_split);
    QP_CHECK_LAUNCH("w4a16_mma_kernel");
    if (partial) {
        const std::int64_t count = m * w.n;
        finalize_kernel(act_type)<<<blocks_for(count, 256), 256, 0, stream>>>(partial, y, count);
        QP_CHECK_LAUNCH("w4a16_finalize_kernel");
    }
}

void w4a16_permute_activations(const std::uint16_t* x, const std::int32_t* k_perm, std::int64_t m, std::int64_t k, std::uint16_t* x_out,
                               cudaStream_t stream) {
    if (m < 1 || k < 1 || m > kMaxRows || k > (std::int64_t{1} << 20)) throw Error("w4a16_permute_activations: m/k", "out of range");
    if (!x || !k_perm || !x_out) throw Error("w4a16_permute_activations", "null device pointer");
    if (x == x_out) throw Error("w4a16_permute_activations: x_out", "must not alias x");
    w4a16_permute_kernel<<<blocks_for(m * k, 256), 256, 0, stream>>>(x, k_perm, x_out, m, k);
    QP_CHECK_LAUNCH("w4a16_permute_kernel");
}

void w4a16_dequantize(const W4DeviceWeights& w, Half16 out_type, std::uint16_t* w_out, cudaStream_t stream) {
    check_weights(w, "w4a16_dequantize");
    if (!w_out || !is_aligned(w_out, 16)) throw Error("w4a16_dequantize: w_out", "must be a non-null, 16-byte aligned device pointer");
    const std::int64_t chunks = w.n * (w.k / 32);
    w4a16_dequantize_kernel<<<blocks_for(chunks, 256), 256, 0, stream>>>(reinterpret_cast<const uint4*>(w.qweight), w.scales, w.zeros, w_out, w.n,
                                                                         static_cast<int>(w.k), log2_exact(w.group_size),
                                                                         w.scale_type == Half16::Bf16 ? 1 : 0, out_type);
    QP_CHECK_LAUNCH("w4a16_dequantize_kernel");
}

}  // namespace quantplan::kernels
