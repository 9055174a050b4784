#pragma once
// Host references of the KV-cache ops (kv_cache.h): quantize-on-write of new K/V rows and the
// decode-attention kernel, over the same cache layout the kernels use.
//
// Cache layout (one layer): K and V each [B][L][H_kv][D] elements, B sequences of capacity L
// tokens, H_kv key/value heads of D dims; element type by KvCacheType:
//   Bf16     bf16 bits, stored as is.
//   Fp8E4M3  E4M3 bits, stored = sat(x / k_scale) with one per-tensor scale for K and one for V
//            (vLLM's convention; scales default 1.0 when not calibrated; kernels.md (d)).
//   Int8     int8, stored = clamp(rint(x / s)) with s = fp16(max|x| / 127) per token and head,
//            held in k_scales / v_scales fp16 [B][L][H_kv] (the format core prices:
//            parse_kv_format("int8")).
#include <cstdint>
#include <vector>

#include "kernels/numeric.h"
#include "kernels/reference.h"

namespace quantplan::kernels {

// Element type of a KV cache.
enum class KvCacheType : std::uint8_t { Bf16, Fp8E4M3, Int8 };

// Name of a cache type ("bf16", "fp8", "int8").
const char* kv_cache_type_name(KvCacheType type);

// Bytes of one cache element.
inline std::int64_t kv_element_bytes(KvCacheType type) { return type == KvCacheType::Bf16 ? 2 : 1; }

// The fp16 bits of the INT8 scale for one token and head whose largest magnitude is `amax`:
// fp16(amax / 127), at least the smallest fp16 subnormal and at most 65504, so that
// x / scale is always finite. Shared by kv_cache_write() and its reference.
QP_HD std::uint16_t kv_int8_scale_fp16(float amax) {
    std::uint16_t s = float_to_fp16(amax > 0.0f ? amax / kInt8Max : 1.0f);
    if ((s & 0x7FFFu) == 0) s = 0x0001;
    if ((s & 0x7FFFu) >= 0x7C00u) s = 0x7BFF;
    return s;
}

// A KV cache held on the host.
struct KvCacheHost {
    KvCacheType type = KvCacheType::Bf16;
    std::int64_t batch = 0;        // B sequences
    std::int64_t max_tokens = 0;   // L tokens of capacity per sequence
    std::int64_t kv_heads = 0;     // H_kv
    std::int64_t head_dim = 0;     // D
    float k_scale = 1.0f;          // Fp8E4M3 per-tensor scales
    float v_scale = 1.0f;
    std::vector<std::uint8_t> k;   // [B][L][H_kv][D] elements, raw bytes
    std::vector<std::uint8_t> v;
    std::vector<std::uint16_t> k_scales;  // Int8: fp16 [B][L][H_kv]; empty otherwise
    std::vector<std::uint16_t> v_scales;

    std::int64_t elements() const { return batch * max_tokens * kv_heads * head_dim; }
};

// A zero-filled cache (Int8 scales 1.0). Throws quantplan::Error for non-positive extents or a
// non-positive FP8 scale.
KvCacheHost make_kv_cache_host(KvCacheType type, std::int64_t batch, std::int64_t max_tokens, std::int64_t kv_heads,
                               std::int64_t head_dim, float k_scale = 1.0f, float v_scale = 1.0f);

// Writes one new token per sequence: k_new / v_new bf16 [B][H_kv][D] go to position
// positions[b] (0 <= position < L) of sequence b, quantized as the cache type says. Bit-exact
// contract of kv_cache_write().
void kv_cache_write_reference(KvCacheHost& cache, const std::vector<std::uint16_t>& k_new, const std::vector<std::uint16_t>& v_new,
                              const std::vector<std::int32_t>& positions);

// The dequantized value of K (is_value false) or V at sequence b, token t, head h, dim d.
float kv_cache_value(const KvCacheHost& cache, bool is_value, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t d);

// Decode attention for one new query token per sequence: q bf16 [B][H_q][D], H_q a multiple of
// H_kv (query head i reads KV head i / (H_q / H_kv)); sequence b attends to its first seq_lens[b]
// cache tokens (1 <= seq_lens[b] <= L) with softmax(scale q.k) v. Returns out [B][H_q][D] in double.
std::vector<double> decode_attention_reference(const KvCacheHost& cache, const std::vector<std::uint16_t>& q, std::int64_t q_heads,
                                               const std::vector<std::int32_t>& seq_lens, float softmax_scale);

// Largest |V| in the first seq_lens[b] tokens of every sequence (dequantized).
double kv_cache_max_abs_value(const KvCacheHost& cache, const std::vector<std::int32_t>& seq_lens);

// The accepted error of decode attention against the reference: the output is a convex
// combination of V rows, so the absolute part of the bound scales with max|v| (`max_abs_value`):
// 2^-12 of it covers fp32 exp and reciprocal error and a few thousand fp32 adds; the relative
// part is the bf16 output rounding (2 u_bf16).
Tolerance decode_attention_tolerance(double max_abs_value);

}  // namespace quantplan::kernels
