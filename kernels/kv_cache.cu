// KV-cache quantize-on-write and decode attention.
//
// Layout (kv_cache_reference.h): K and V [B][L][H_kv][D] (bf16, E4M3 or int8 elements), INT8
// per-token-head fp16 scales [B][L][H_kv], FP8 per-tensor k_scale / v_scale; q and out bf16
// [B][H_q][D]; query head i reads KV head i / (H_q / H_kv).
//
// kv_cache_write: one warp per (sequence, KV head, K or V); each lane converts D/32 consecutive
// elements. INT8 takes max|x| over the head with warp shuffles (exact, order-free) and stores
// the fp16 scale kv_int8_scale_fp16(amax); every element goes through the same helpers as
// kv_cache_write_reference (quantize_fp8_e4m3, quantize_int8), so the cache is bit-identical.
//
// decode_attention (flash-decoding): grid (B x H_kv, splits); a block of 4 warps owns one KV head
// of one sequence and one slice ("partition") of its context, and serves all H_q / H_kv query
// heads of that KV head, so each cache byte is read once per step. Per 32-token tile a warp
//   1. scores: lane j takes token j and computes its dot product with every query head against q
//      in shared memory (pre-multiplied by softmax_scale x log2 e and the FP8 k_scale), reading
//      its K row with 16-byte loads, 2 or 4 issued before the first is decoded, and decoding in
//      registers (bf16: shifts; FP8: cvt.f16x2.e4m3x2 on sm_89+, the bit-level helper below;
//      INT8: the 2^23 trick, then the token's scale);
//   2. online softmax in base 2: tile max and sum by warp shuffles, running max/sum per head;
//   3. values: lanes split D, walk the tile's tokens with the probabilities from shared memory
//      (INT8's per-token V scale folded into them; 4 or 8 tokens' loads issued at once) and
//      accumulate in fp32, token by token in order.
// The 4 warps merge through shared memory; with one split the block writes the normalised output,
// otherwise (max, sum, unnormalised acc) go to an fp32 workspace and a second kernel merges the
// splits. FP8's v_scale is applied once at the end. The per-head state lives in registers sized
// by the instantiation's group capacity (4 or 8 query heads per KV head); the context is split
// into as many partitions as one wave of blocks holds (occupancy calculator).
//
// Preconditions (checked): D in {64, 128}; H_q a multiple of H_kv with H_q / H_kv <= 8;
// 1 <= seq_lens[b] <= max_seq_len <= L (device values are trusted to respect the host bound);
// 16-byte aligned cache pointers. Configurations: D {64, 128} x cache {bf16, fp8, int8} x group
// capacity {4, 8}.
#include "kernels/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "core/base/error.h"
#include "kernels/cuda_check.h"
#include "kernels/numeric.h"

namespace quantplan::kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kAttnWarps = 4;
constexpr int kAttnThreads = kAttnWarps * kWarp;
constexpr int kTile = 32;                       // tokens per warp step (one per lane)
constexpr int kMinPartition = 128;              // tokens per split at least: one tile per warp
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// Two E4M3 values (low byte first) -> floats. sm_89+ has a conversion instruction; older
// devices use the shared bit-level helper, which yields value x 2^-8 (kFp8DecodeFactor undoes it).
__device__ __forceinline__ void fp8x2_to_float2(std::uint32_t pair, float& lo, float& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(pair & 0xFFFFu), __NV_E4M3);
    const float2 f = __half22float2(__half2(raw));
#else
    const std::uint32_t h2 = fp8x2_e4m3_to_fp16x2_scaled(static_cast<std::uint16_t>(pair & 0xFFFFu));
    const float2 f = make_float2(__half2float(__ushort_as_half(static_cast<unsigned short>(h2 & 0xFFFFu))),
                                 __half2float(__ushort_as_half(static_cast<unsigned short>(h2 >> 16))));
#endif
    lo = f.x;
    hi = f.y;
}

// What fp8x2_to_float2 must be multiplied by to give the E4M3 value.
__device__ __forceinline__ float fp8_decode_factor() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return 1.0f;
#else
    return 256.0f;
#endif
}

// Decodes one 32-bit word of cache elements: 2 bf16 or 4 fp8/int8 values.
template <KvCacheType CT>
__device__ __forceinline__ void decode_word(std::uint32_t w, float* out) {
    if constexpr (CT == KvCacheType::Bf16) {
        out[0] = __uint_as_float(w << 16);
        out[1] = __uint_as_float(w & 0xFFFF0000u);
    } else if constexpr (CT == KvCacheType::Fp8E4M3) {
        fp8x2_to_float2(w & 0xFFFFu, out[0], out[1]);
        fp8x2_to_float2(w >> 16, out[2], out[3]);
    } else {
        out[0] = int8_byte_to_float(w);
        out[1] = int8_byte_to_float(w >> 8);
        out[2] = int8_byte_to_float(w >> 16);
        out[3] = int8_byte_to_float(w >> 24);
    }
}

template <KvCacheType CT>
constexpr int kElementBytes = CT == KvCacheType::Bf16 ? 2 : 1;

// Loads the raw bytes of E consecutive elements (E * element bytes: 2 to 8 bytes; the unused high
// part of the uint2 is zero). Split from decode_elements so that several tokens' loads can be in
// flight before the first is decoded.
template <KvCacheType CT, int E>
__device__ __forceinline__ uint2 load_raw_elements(const std::uint8_t* p) {
    constexpr int kBytes = E * kElementBytes<CT>;
    if constexpr (kBytes == 8) {
        return __ldg(reinterpret_cast<const uint2*>(p));
    } else if constexpr (kBytes == 4) {
        return make_uint2(__ldg(reinterpret_cast<const std::uint32_t*>(p)), 0u);
    } else {
        static_assert(kBytes == 2, "V loads are 2, 4 or 8 bytes");
        return make_uint2(__ldg(reinterpret_cast<const unsigned short*>(p)), 0u);
    }
}

// Decodes what load_raw_elements loaded into E floats.
template <KvCacheType CT, int E>
__device__ __forceinline__ void decode_elements(uint2 w, float (&v)[E]) {
    constexpr int kBytes = E * kElementBytes<CT>;
    if constexpr (kBytes == 8) {
        decode_word<CT>(w.x, v);
        decode_word<CT>(w.y, v + (CT == KvCacheType::Bf16 ? 2 : 4));
    } else if constexpr (kBytes == 4) {
        decode_word<CT>(w.x, v);
    } else {
        float tmp[4];
        decode_word<CT>(w.x, tmp);
        v[0] = tmp[0];
        v[1] = tmp[1];
    }
}

// Register budget of the attention kernel per group capacity g (query heads per KV head it holds
// state for) and head dimension d, chosen with -Xptxas -v so that no configuration spills:
//   k_load_batch: 16-byte K loads a lane issues before decoding any of them (a token's K row is
//                 4 to 16 such loads); the original loop had at most 2 in flight.
//   v_load_batch: V tokens whose loads a warp issues before accumulating the first of them.
//   attention_min_blocks: blocks of 128 threads per SM the kernel is register-capped for.
// sm_90 registers (bf16 / fp8 / int8): g 4, d 128: 78 / 94 / 90 (5-6 blocks); g 4, d 64:
// 66 / 80 / 80 (6-7 blocks); g 8, d 128: 100 / 116 / 114 (4 blocks); g 8, d 64: 86 / 100 / 96
// (4-5 blocks). With every kernel sized for 8 heads before: 95 / 120 / 96 (d 128, 4-5 blocks).
__host__ __device__ constexpr int k_load_batch(int g) { return g <= 4 ? 4 : 2; }
__host__ __device__ constexpr int v_load_batch(int g) { return g <= 4 ? 8 : 4; }
__host__ __device__ constexpr int attention_min_blocks(int d, int g) { return g <= 4 ? (d <= 64 ? 6 : 5) : 4; }

template <int D, KvCacheType CT, int G>
__global__ void __launch_bounds__(kAttnThreads, attention_min_blocks(D, G))
    decode_attention_kernel(KvCacheView cache, const std::uint16_t* __restrict__ q, int q_heads,
                            const std::int32_t* __restrict__ seq_lens, float softmax_scale, int partition,
                            int splits, float* __restrict__ ws_ml, float* __restrict__ ws_acc,
                            std::uint16_t* __restrict__ out) {
    constexpr int E = D / kWarp;                       // V elements per lane
    constexpr int kChunkElems = 16 / kElementBytes<CT>;  // elements per 16-byte K load
    __shared__ __align__(16) float q_s[G][D];
    __shared__ __align__(16) float p_s[kAttnWarps][kTile][G];
    __shared__ float red_m[kAttnWarps][G];
    __shared__ float red_l[kAttnWarps][G];
    __shared__ float red_acc[kAttnWarps][G][D];

    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / kWarp, lane = tid % kWarp;
    const int kv_heads = static_cast<int>(cache.kv_heads);
    const int group = q_heads / kv_heads;
    const std::int64_t b = blockIdx.x / kv_heads;
    const int h = static_cast<int>(blockIdx.x % kv_heads);
    const int split = static_cast<int>(blockIdx.y);
    const int len = seq_lens[b];
    const int t_begin = split * partition;
    const int t_end = min(len, t_begin + partition);
    const std::int64_t L = cache.max_tokens;
    const std::int64_t row_elems = static_cast<std::int64_t>(kv_heads) * D;

    float k_mult = softmax_scale * kLog2e;
    float v_mult = 1.0f;
    if constexpr (CT == KvCacheType::Fp8E4M3) {
        k_mult *= cache.k_scale * fp8_decode_factor();
        v_mult = cache.v_scale * fp8_decode_factor();
    }
    for (int i = tid; i < group * D; i += kAttnThreads) {
        const int g = i / D, d = i % D;
        q_s[g][d] = bf16_to_float(q[(b * q_heads + static_cast<std::int64_t>(h) * group + g) * D + d]) * k_mult;
    }
    __syncthreads();

    float m_run[G], l_run[G], acc[G][E];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        m_run[g] = -INFINITY;
        l_run[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < E; ++e) acc[g][e] = 0.0f;
    }

    const std::uint8_t* k_base = static_cast<const std::uint8_t*>(cache.k);
    const std::uint8_t* v_base = static_cast<const std::uint8_t*>(cache.v);
    for (int tile = t_begin + warp * kTile; tile < t_end; tile += kAttnWarps * kTile) {
        const int t = tile + lane;
        const bool valid = t < t_end;
        float s[G];
#pragma unroll
        for (int g = 0; g < G; ++g) s[g] = 0.0f;
        float v_token_scale = 1.0f;
        if (valid) {
            const std::int64_t row = (b * L + t) * row_elems + static_cast<std::int64_t>(h) * D;
            const uint4* kp = reinterpret_cast<const uint4*>(k_base + row * kElementBytes<CT>);
            // The row in batches of k_load_batch(G) 16-byte loads, all issued before the batch's first
            // FMA; the FMAs run in the same order as one chunk at a time.
            constexpr int kChunks = D / kChunkElems;
            constexpr int kBatch = kChunks < k_load_batch(G) ? kChunks : k_load_batch(G);
            static_assert(kChunks % kBatch == 0, "K row chunks split into whole batches");
#pragma unroll 1
            for (int c0 = 0; c0 < kChunks; c0 += kBatch) {
                uint4 chunks[kBatch];
#pragma unroll
                for (int u = 0; u < kBatch; ++u) chunks[u] = __ldg(kp + c0 + u);
#pragma unroll
                for (int u = 0; u < kBatch; ++u) {
                    const int c = c0 + u;
                    float kv[kChunkElems];
                    constexpr int kPerWord = kChunkElems / 4;
                    decode_word<CT>(chunks[u].x, kv);
                    decode_word<CT>(chunks[u].y, kv + kPerWord);
                    decode_word<CT>(chunks[u].z, kv + 2 * kPerWord);
                    decode_word<CT>(chunks[u].w, kv + 3 * kPerWord);
#pragma unroll
                    for (int g = 0; g < G; ++g) {
                        if (g < group) {
                            const float4* qv = reinterpret_cast<const float4*>(&q_s[g][c * kChunkElems]);
#pragma unroll
                            for (int j = 0; j < kChunkElems / 4; ++j) {
                                const float4 qq = qv[j];
                                s[g] = fmaf(qq.x, kv[4 * j], s[g]);
                                s[g] = fmaf(qq.y, kv[4 * j + 1], s[g]);
                                s[g] = fmaf(qq.z, kv[4 * j + 2], s[g]);
                                s[g] = fmaf(qq.w, kv[4 * j + 3], s[g]);
                            }
                        }
                    }
                }
            }
            if constexpr (CT == KvCacheType::Int8) {
                const std::int64_t si = (b * L + t) * kv_heads + h;
                const float ks = fp16_to_float(cache.k_scales[si]);
#pragma unroll
                for (int g = 0; g < G; ++g) s[g] *= ks;
                v_token_scale = fp16_to_float(cache.v_scales[si]);
            }
        }
#pragma unroll
        for (int g = 0; g < G; ++g) {
            if (g >= group) break;
            const float sg = valid ? s[g] : -INFINITY;
            const float m_new = fmaxf(m_run[g], warp_max(sg));  // lane 0's token is always valid
            const float corr = exp2f(m_run[g] - m_new);
            const float p = valid ? exp2f(sg - m_new) : 0.0f;
            l_run[g] = l_run[g] * corr + warp_sum(p);
            m_run[g] = m_new;
#pragma unroll
            for (int e = 0; e < E; ++e) acc[g][e] *= corr;
            p_s[warp][lane][g] = p * v_token_scale;
        }
        __syncwarp();
        const int ntok = min(kTile, t_end - tile);
        // V in batches of kVBatch tokens: the batch's loads first (tokens past ntok are not
        // read: they may lie past the cache), then the FMAs token by token in order, as before.
        const std::uint8_t* v_tile = v_base + ((b * L + tile) * row_elems + static_cast<std::int64_t>(h) * D + lane * E) * kElementBytes<CT>;
        const std::int64_t v_token_bytes = row_elems * kElementBytes<CT>;
        constexpr int kVBatch = v_load_batch(G);
#pragma unroll 1
        for (int j0 = 0; j0 < ntok; j0 += kVBatch) {
            uint2 raw[kVBatch];
#pragma unroll
            for (int u = 0; u < kVBatch; ++u)
                raw[u] = j0 + u < ntok ? load_raw_elements<CT, E>(v_tile + (j0 + u) * v_token_bytes) : make_uint2(0u, 0u);
#pragma unroll
            for (int u = 0; u < kVBatch; ++u) {
                if (j0 + u < ntok) {
                    float v[E];
                    decode_elements<CT, E>(raw[u], v);
#pragma unroll
                    for (int g = 0; g < G; ++g) {
                        if (g < group) {
                            const float pj = p_s[warp][j0 + u][g];
#pragma unroll
                            for (int e = 0; e < E; ++e) acc[g][e] = fmaf(pj, v[e], acc[g][e]);
                        }
                    }
                }
            }
        }
        __syncwarp();
    }

#pragma unroll
    for (int g = 0; g < G; ++g) {
        if (g >= group) break;
        if (lane == 0) {
            red_m[warp][g] = m_run[g];
            red_l[warp][g] = l_run[g];
        }
#pragma unroll
        for (int e = 0; e < E; ++e) red_acc[warp][g][lane * E + e] = acc[g][e];
    }
    __syncthreads();
    for (int i = tid; i < group * D; i += kAttnThreads) {
        const int g = i / D, d = i % D;
        float m = -INFINITY;
        for (int w = 0; w < kAttnWarps; ++w) m = fmaxf(m, red_m[w][g]);
        float l = 0.0f, a = 0.0f;
        if (m != -INFINITY) {
            for (int w = 0; w < kAttnWarps; ++w) {
                const float f = exp2f(red_m[w][g] - m);
                l += red_l[w][g] * f;
                a += red_acc[w][g][d] * f;
            }
        }
        a *= v_mult;
        const std::int64_t hq = static_cast<std::int64_t>(h) * group + g;
        if (splits == 1) {
            out[(b * q_heads + hq) * D + d] = float_to_bf16(a / l);
        } else {
            const std::int64_t slot = (b * q_heads + hq) * splits + split;
            ws_acc[slot * D + d] = a;
            if (d == 0) {
                ws_ml[2 * slot] = m;
                ws_ml[2 * slot + 1] = l;
            }
        }
    }
}

// Merges the splits of one (sequence, query head): one thread per dim.
__global__ void decode_attention_combine_kernel(const float* __restrict__ ws_ml, const float* __restrict__ ws_acc, int splits, int head_dim,
                                                std::uint16_t* __restrict__ out) {
    const std::int64_t bh = blockIdx.x;
    const float* ml = ws_ml + bh * splits * 2;
    float m = -INFINITY;
    for (int s = 0; s < splits; ++s) m = fmaxf(m, ml[2 * s]);
    for (int d = static_cast<int>(threadIdx.x); d < head_dim; d += static_cast<int>(blockDim.x)) {
        float l = 0.0f, a = 0.0f;
        for (int s = 0; s < splits; ++s) {
            if (ml[2 * s] == -INFINITY) continue;  // an empty split (beyond this sequence's length)
            const float f = exp2f(ml[2 * s] - m);
            l += ml[2 * s + 1] * f;
            a += ws_acc[(bh * splits + s) * head_dim + d] * f;
        }
        out[bh * head_dim + d] = float_to_bf16(a / l);
    }
}

template <int D>
__global__ void kv_cache_write_kernel(KvCacheView cache, const std::uint16_t* __restrict__ k_new, const std::uint16_t* __restrict__ v_new,
                                      const std::int32_t* __restrict__ positions) {
    constexpr int E = D / kWarp;
    const std::int64_t item = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const std::int64_t heads = cache.kv_heads;
    if (item >= cache.batch * heads * 2) return;  // whole warps exit together
    const std::int64_t b = item / (heads * 2);
    const std::int64_t h = (item / 2) % heads;
    const bool is_v = item % 2 == 1;
    const std::int64_t t = positions[b];
    const std::uint16_t* src = (is_v ? v_new : k_new) + (b * heads + h) * D + lane * E;
    const std::int64_t dst = ((b * cache.max_tokens + t) * heads + h) * D + lane * E;
    float x[E];
#pragma unroll
    for (int e = 0; e < E; ++e) x[e] = bf16_to_float(src[e]);
    switch (cache.type) {
        case KvCacheType::Bf16: {
            std::uint16_t* d = static_cast<std::uint16_t*>(is_v ? cache.v : cache.k) + dst;
#pragma unroll
            for (int e = 0; e < E; ++e) d[e] = src[e];
            break;
        }
        case KvCacheType::Fp8E4M3: {
            std::uint8_t* d = static_cast<std::uint8_t*>(is_v ? cache.v : cache.k) + dst;
            const float scale = is_v ? cache.v_scale : cache.k_scale;
#pragma unroll
            for (int e = 0; e < E; ++e) d[e] = quantize_fp8_e4m3(x[e], scale);
            break;
        }
        case KvCacheType::Int8: {
            float amax = 0.0f;
#pragma unroll
            for (int e = 0; e < E; ++e) amax = fmaxf(amax, fabsf(x[e]));
            amax = warp_max(amax);
            const std::uint16_t s16 = kv_int8_scale_fp16(amax);
            if (lane == 0) (is_v ? cache.v_scales : cache.k_scales)[(b * cache.max_tokens + t) * heads + h] = s16;
            const float scale = fp16_to_float(s16);
            std::int8_t* d = static_cast<std::int8_t*>(is_v ? cache.v : cache.k) + dst;
#pragma unroll
            for (int e = 0; e < E; ++e) d[e] = quantize_int8(x[e], scale);
            break;
        }
    }
}

// ---- Dispatch tables ----

using AttnKernel = void (*)(KvCacheView, const std::uint16_t*, int, const std::int32_t*, float, int, int, float*, float*, std::uint16_t*);
using WriteKernel = void (*)(KvCacheView, const std::uint16_t*, const std::uint16_t*, const std::int32_t*);

struct AttnEntry {
    std::int64_t head_dim;
    KvCacheType type;
    int group_capacity;  // query heads per KV head up to which this instantiation serves
    AttnKernel kernel;
};
constexpr AttnEntry kAttnTable[] = {
    {64, KvCacheType::Bf16, 4, decode_attention_kernel<64, KvCacheType::Bf16, 4>},
    {64, KvCacheType::Fp8E4M3, 4, decode_attention_kernel<64, KvCacheType::Fp8E4M3, 4>},
    {64, KvCacheType::Int8, 4, decode_attention_kernel<64, KvCacheType::Int8, 4>},
    {128, KvCacheType::Bf16, 4, decode_attention_kernel<128, KvCacheType::Bf16, 4>},
    {128, KvCacheType::Fp8E4M3, 4, decode_attention_kernel<128, KvCacheType::Fp8E4M3, 4>},
    {128, KvCacheType::Int8, 4, decode_attention_kernel<128, KvCacheType::Int8, 4>},
    {64, KvCacheType::Bf16, 8, decode_attention_kernel<64, KvCacheType::Bf16, 8>},
    {64, KvCacheType::Fp8E4M3, 8, decode_attention_kernel<64, KvCacheType::Fp8E4M3, 8>},
    {64, KvCacheType::Int8, 8, decode_attention_kernel<64, KvCacheType::Int8, 8>},
    {128, KvCacheType::Bf16, 8, decode_attention_kernel<128, KvCacheType::Bf16, 8>},
    {128, KvCacheType::Fp8E4M3, 8, decode_attention_kernel<128, KvCacheType::Fp8E4M3, 8>},
    {128, KvCacheType::Int8, 8, decode_attention_kernel<128, KvCacheType::Int8, 8>},
};
static_assert(kMaxQueryGroup == 8, "the table's largest group capacity is kMaxQueryGroup");

struct WriteEntry {
    std::int64_t head_dim;
    WriteKernel kernel;
};
constexpr WriteEntry kWriteTable[] = {{64, kv_cache_write_kernel<64>}, {128, kv_cache_write_kernel<128>}};

// How decode_attention splits the context.
struct AttnPlan {
    int partition = 0;  // tokens per split
    int splits = 1;
};

// The attention kernel for this cache and group (H_q / H_kv): the instantiation with the smallest
// group capacity that holds the group; null when none does.
AttnKernel find_attention_kernel(const KvCacheView& c, std::int64_t group) {
    const AttnEntry* best = nullptr;
    for (const AttnEntry& e : kAttnTable)
        if (e.head_dim == c.head_dim && e.type == c.type && group <= e.group_capacity && (!best || e.group_capacity < best->group_capacity)) best = &e;
    return best ? best->kernel : nullptr;
}

AttnPlan plan_attention(const KvCacheView& c, std::int64_t q_heads, std::int64_t max_seq_len) {
    const std::int64_t base = c.batch * c.kv_heads;
    // One wave: the blocks every SM holds at once for this kernel (occupancy calculator; 4 per SM
    // for a configuration without a kernel, which decode_attention refuses anyway).
    const AttnKernel kernel = find_attention_kernel(c, q_heads / c.kv_heads);
    const int per_sm = kernel ? max_active_blocks_per_sm(reinterpret_cast<const void*>(kernel), kAttnThreads, 0) : 4;
    const std::int64_t wave = std::int64_t{per_sm} * current_sm_count();
    // As many splits as that wave holds, so the B x H_kv x splits blocks run in one wave (rounding
    // up, as before, could start a second, mostly empty one), at most one per kMinPartition tokens.
    const std::int64_t most = (max_seq_len + kMinPartition - 1) / kMinPartition;
    const std::int64_t splits = std::clamp<std::int64_t>(wave / base, 1, std::max<std::int64_t>(1, most));
    AttnPlan p;
    p.partition = static_cast<int>(((max_seq_len + splits - 1) / splits + kTile - 1) / kTile * kTile);
    p.splits = static_cast<int>((max_seq_len + p.partition - 1) / p.partition);
    return p;
}

void check_view(const KvCacheView& c, const char* op) {
    const std::string o(op);
    bool dim_ok = false;
    for (const std::int64_t d : kKvHeadDims) dim_ok = dim_ok || d == c.head_dim;
    if (!dim_ok) throw Error(o + ": head_dim", "must be 64 or 128, got " + std::to_string(c.head_dim));
    if (c.batch < 1 || c.max_tokens < 1 || c.kv_heads < 1 || c.batch > (1 << 20) || c.max_tokens > (1 << 23) || c.kv_heads > 1024)
        throw Error(o + ": cache", "extents out of range (batch 1..2^20, tokens 1..2^23, heads 1..1024)");
    if (!c.k || !c.v || !is_aligned(c.k, 16) || !is_aligned(c.v, 16)) throw Error(o + ": k/v", "must be non-null, 16-byte aligned device pointers");
    if (c.type == KvCacheType::Int8 && (!c.k_scales || !c.v_scales)) throw Error(o + ": k_scales/v_scales", "an INT8 cache needs its scale arrays");
    if (c.type == KvCacheType::Fp8E4M3 && (!(c.k_scale > 0.0f) || !(c.v_scale > 0.0f) || !std::isfinite(c.k_scale) || !std::isfinite(c.v_scale)))
        throw Error(o + ": k_scale/v_scale", "must be positive and finite");
}

}  // namespace

void kv_cache_write(const KvCacheView& cache, const std::uint16_t* k_new, const std::uint16_t* v_new, const std::int32_t* positions,
                    cudaStream_t stream) {
    check_view(cache, "kv_cache_write");
    if (!k_new || !v_new || !positions) throw Error("kv_cache_write", "null device pointer");
    WriteKernel kernel = nullptr;
    for (const WriteEntry& e : kWriteTable)
        if (e.head_dim == cache.head_dim) kernel = e.kernel;
    const std::int64_t warps = cache.batch * cache.kv_heads * 2;
    const std::int64_t blocks = (warps * kWarp + 127) / 128;
    kernel<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(cache, k_new, v_new, positions);
    QP_CHECK_LAUNCH("kv_cache_write_kernel");
}

std::uint64_t decode_attention_workspace_bytes(const KvCacheView& cache, std::int64_t q_heads, std::int64_t max_seq_len) {
    if (cache.batch < 1 || cache.kv_heads < 1 || q_heads < 1 || max_seq_len < 1) return 0;
    const AttnPlan p = plan_attention(cache, q_heads, max_seq_len);
    if (p.splits == 1) return 0;
    return static_cast<std::uint64_t>(cache.batch) * static_cast<std::uint64_t>(q_heads) * static_cast<std::uint64_t>(p.splits) *
           static_cast<std::uint64_t>(cache.head_dim + 2) * sizeof(float);
}

void decode_attention(const KvCacheView& cache, const std::uint16_t* q, std::int64_t q_heads, const std::int32_t* seq_lens, std::int64_t max_seq_len,
                      float softmax_scale, float* workspace, std::uint64_t workspace_bytes, std::uint16_t* out, cudaStream_t stream) {
    check_view(cache, "decode_attention");
    if (q_heads < cache.kv_heads || q_heads % cache.kv_heads != 0 || q_heads / cache.kv_heads > kMaxQueryGroup)
        throw Error("decode_attention: q_heads", "must be a multiple of the KV heads, at most " + std::to_string(kMaxQueryGroup) + " per KV head");
    if (max_seq_len < 1 || max_seq_len > cache.max_tokens)
        throw Error("decode_attention: max_seq_len", "must be in 1..max_tokens (" + std::to_string(cache.max_tokens) + ")");
    if (!q || !seq_lens || !out) throw Error("decode_attention", "null device pointer");
    if (!(softmax_scale > 0.0f) || !std::isfinite(softmax_scale)) throw Error("decode_attention: softmax_scale", "must be positive and finite");
    const AttnKernel kernel = find_attention_kernel(cache, q_heads / cache.kv_heads);
    if (!kernel) throw Error("decode_attention", "no kernel for this head_dim and cache type");
    const AttnPlan p = plan_attention(cache, q_heads, max_seq_len);
    const std::uint64_t need = decode_attention_workspace_bytes(cache, q_heads, max_seq_len);
    if (need > 0 && (!workspace || workspace_bytes < need))
        throw Error("decode_attention: workspace", "needs " + std::to_string(need) + " bytes (decode_attention_workspace_bytes)");
    const std::uint64_t slots = static_cast<std::uint64_t>(cache.batch) * static_cast<std::uint64_t>(q_heads) * static_cast<std::uint64_t>(p.splits);
    float* ws_ml = need > 0 ? workspace : nullptr;
    float* ws_acc = need > 0 ? workspace + 2 * slots : nullptr;
    const dim3 grid(static_cast<unsigned>(cache.batch * cache.kv_heads), static_cast<unsigned>(p.splits));
    kernel<<<grid, kAttnThreads, 0, stream>>>(cache, q, static_cast<int>(q_heads), seq_lens, softmax_scale, p.partition, p.splits, ws_ml, ws_acc, out);
    QP_CHECK_LAUNCH("decode_attention_kernel");
    if (p.splits > 1) {
        decode_attention_combine_kernel<<<static_cast<unsigned>(cache.batch * q_heads), static_cast<unsigned>(cache.head_dim), 0, stream>>>(
            ws_ml, ws_acc, p.splits, static_cast<int>(cache.head_dim), out);
        QP_CHECK_LAUNCH("decode_attention_combine_kernel");
    }
}

}  // namespace quantplan::kernels
