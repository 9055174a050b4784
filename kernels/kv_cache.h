#pragma once
// KV-cache kernels: quantize-on-write of new K/V rows (bf16 copy, FP8 E4M3 with per-tensor scales,
// INT8 with per-token-head scales) and decode attention over a bf16, FP8 or INT8 cache, split over
// the context for long sequences. Layout and semantics: kv_cache_reference.h (the host reference);
// algorithms and preconditions: kv_cache.cu.
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/kv_cache_reference.h"

namespace quantplan::kernels {

// One layer's cache on the device (pointers not owned).
struct KvCacheView {
    KvCacheType type = KvCacheType::Bf16;
    void* k = nullptr;                   // device [B][L][H_kv][D] elements, 16-byte aligned
    void* v = nullptr;
    std::uint16_t* k_scales = nullptr;   // INT8: device fp16 [B][L][H_kv]; null otherwise
    std::uint16_t* v_scales = nullptr;
    float k_scale = 1.0f;                // FP8 per-tensor scales
    float v_scale = 1.0f;
    std::int64_t batch = 0;
    std::int64_t max_tokens = 0;
    std::int64_t kv_heads = 0;
    std::int64_t head_dim = 0;
};

// Head dimensions the kernels are instantiated for.
inline constexpr std::int64_t kKvHeadDims[] = {64, 128};

// Largest number of query heads sharing one KV head (H_q / H_kv) the attention kernel takes.
inline constexpr std::int64_t kMaxQueryGroup = 8;

// Writes one new token per sequence: k_new / v_new device bf16 [B][H_kv][D] at positions[b]
// (device int32 [B], 0 <= position < L). Bit-exact with kv_cache_write_reference. Throws
// quantplan::Error for a head_dim not in kKvHeadDims, null pointers or a bad scale.
void kv_cache_write(const KvCacheView& cache, const std::uint16_t* k_new, const std::uint16_t* v_new, const std::int32_t* positions,
                    cudaStream_t stream);

// Bytes of fp32 workspace decode_attention uses for B sequences of up to max_seq_len tokens,
// q_heads query heads (0 when it needs none).
std::uint64_t decode_attention_workspace_bytes(const KvCacheView& cache, std::int64_t q_heads, std::int64_t max_seq_len);

// Decode attention: out bf16 [B][H_q][D] = softmax(softmax_scale q.k) v over the first
// seq_lens[b] tokens of each sequence (device int32 [B], 1 <= seq_lens[b] <= max_seq_len <= L;
// max_seq_len is the host-side bound that sizes the split over the context). q: device bf16
// [B][H_q][D]; H_q a multiple of H_kv with H_q / H_kv <= kMaxQueryGroup. workspace: device fp32 of
// decode_attention_workspace_bytes() bytes (may be null when that is 0). Matches
// decode_attention_reference within decode_attention_tolerance.
void decode_attention(const KvCacheView& cache, const std::uint16_t* q, std::int64_t q_heads, const std::int32_t* seq_lens, std::int64_t max_seq_len,
                      float softmax_scale, float* workspace, std::uint64_t workspace_bytes, std::uint16_t* out, cudaStream_t stream);

}  // namespace quantplan::kernels
