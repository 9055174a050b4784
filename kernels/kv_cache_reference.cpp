#include "kernels/kv_cache_reference.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/error.h"

namespace quantplan::kernels {
namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

// Largest extent of one cache dimension accepted by the host helpers.
constexpr std::int64_t kMaxCacheExtent = std::int64_t{1} << 22;

void check_positions(const KvCacheHost& c, const std::vector<std::int32_t>& values, const char* what, std::int64_t lo) {
    if (values.size() != sz(c.batch)) throw Error(what, "needs one entry per sequence");
    for (const std::int32_t v : values)
        if (v < lo || v > c.max_tokens - 1 + lo)
            throw Error(what, "entry " + std::to_string(v) + " outside " + std::to_string(lo) + ".." + std::to_string(c.max_tokens - 1 + lo));
}

}  // namespace

const char* kv_cache_type_name(KvCacheType type) {
    switch (type) {
        case KvCacheType::Bf16: return "bf16";
        case KvCacheType::Fp8E4M3: return "fp8";
        case KvCacheType::Int8: return "int8";
    }
    return "?";
}

KvCacheHost make_kv_cache_host(KvCacheType type, std::int64_t batch, std::int64_t max_tokens, std::int64_t kv_heads,
                               std::int64_t head_dim, float k_scale, float v_scale) {
    for (const std::int64_t e : {batch, max_tokens, kv_heads, head_dim})
        if (e < 1 || e > kMaxCacheExtent) throw Error("kv cache", "extents must be in 1.." + std::to_string(kMaxCacheExtent));
    if (!(k_scale > 0.0f) || !(v_scale > 0.0f)) throw Error("kv cache: k_scale/v_scale", "must be positive");
    KvCacheHost c;
    c.type = type;
    c.batch = batch;
    c.max_tokens = max_tokens;
    c.kv_heads = kv_heads;
    c.head_dim = head_dim;
    c.k_scale = type == KvCacheType::Fp8E4M3 ? k_scale : 1.0f;
    c.v_scale = type == KvCacheType::Fp8E4M3 ? v_scale : 1.0f;
    const std::size_t bytes = sz(c.elements() * kv_element_bytes(type));
    c.k.assign(bytes, 0);
    c.v.assign(bytes, 0);
    if (type == KvCacheType::Int8) {
        c.k_scales.assign(sz(batch * max_tokens * kv_heads), 0x3C00);  // 1.0
        c.v_scales.assign(sz(batch * max_tokens * kv_heads), 0x3C00);
    }
    return c;
}

void kv_cache_write_reference(KvCacheHost& c, const std::vector<std::uint16_t>& k_new, const std::vector<std::uint16_t>& v_new,
                              const std::vector<std::int32_t>& positions) {
    const std::int64_t row = c.kv_heads * c.head_dim;
    if (k_new.size() != sz(c.batch * row) || v_new.size() != sz(c.batch * row))
        throw Error("kv_cache_write: k_new/v_new", "must hold B x H_kv x D elements");
    check_positions(c, positions, "kv_cache_write: positions", 0);
    for (int which = 0; which < 2; ++which) {
        const std::vector<std::uint16_t>& src = which == 0 ? k_new : v_new;
        std::vector<std::uint8_t>& dst = which == 0 ? c.k : c.v;
        std::vector<std::uint16_t>& scales = which == 0 ? c.k_scales : c.v_scales;
        const float tensor_scale = which == 0 ? c.k_scale : c.v_scale;
        for (std::int64_t b = 0; b < c.batch; ++b) {
            const std::int64_t t = positions[sz(b)];
            for (std::int64_t h = 0; h < c.kv_heads; ++h) {
                const std::uint16_t* in = src.data() + (b * c.kv_heads + h) * c.head_dim;
                const std::int64_t base = ((b * c.max_tokens + t) * c.kv_heads + h) * c.head_dim;
                switch (c.type) {
                    case KvCacheType::Bf16:
                        for (std::int64_t d = 0; d < c.head_dim; ++d) {
                            dst[sz(2 * (base + d))] = static_cast<std::uint8_t>(in[d] & 0xFF);
                            dst[sz(2 * (base + d) + 1)] = static_cast<std::uint8_t>(in[d] >> 8);
                        }
                        break;
                    case KvCacheType::Fp8E4M3:
                        for (std::int64_t d = 0; d < c.head_dim; ++d) dst[sz(base + d)] = quantize_fp8_e4m3(bf16_to_float(in[d]), tensor_scale);
                        break;
                    case KvCacheType::Int8: {
                        float amax = 0.0f;
                        for (std::int64_t d = 0; d < c.head_dim; ++d) amax = std::fmax(amax, std::fabs(bf16_to_float(in[d])));
                        const std::uint16_t s = kv_int8_scale_fp16(amax);
                        scales[sz((b * c.max_tokens + t) * c.kv_heads + h)] = s;
                        const float scale = fp16_to_float(s);
                        for (std::int64_t d = 0; d < c.head_dim; ++d)
                            dst[sz(base + d)] = static_cast<std::uint8_t>(quantize_int8(bf16_to_float(in[d]), scale));
                        break;
                    }
                }
            }
        }
    }
}

float kv_cache_value(const KvCacheHost& c, bool is_value, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t d) {
    const std::vector<std::uint8_t>& data = is_value ? c.v : c.k;
    const std::int64_t i = ((b * c.max_tokens + t) * c.kv_heads + h) * c.head_dim + d;
    switch (c.type) {
        case KvCacheType::Bf16:
            return bf16_to_float(static_cast<std::uint16_t>(data[sz(2 * i)] | (data[sz(2 * i + 1)] << 8)));
        case KvCacheType::Fp8E4M3:
            return fp8_e4m3_to_float(data[sz(i)]) * (is_value ? c.v_scale : c.k_scale);
        case KvCacheType::Int8: {
            const std::vector<std::uint16_t>& scales = is_value ? c.v_scales : c.k_scales;
            return static_cast<float>(static_cast<std::int8_t>(data[sz(i)])) * fp16_to_float(scales[sz((b * c.max_tokens + t) * c.kv_heads + h)]);
        }
    }
    return 0.0f;
}

std::vector<double> decode_attention_reference(const KvCacheHost& c, const std::vector<std::uint16_t>& q, std::int64_t q_heads,
                                               const std::vector<std::int32_t>& seq_lens, float softmax_scale) {
    if (q_heads < c.kv_heads || q_heads % c.kv_heads != 0) throw Error("decode_attention: q_heads", "must be a multiple of the KV heads");
    if (q.size() != sz(c.batch * q_heads * c.head_dim)) throw Error("decode_attention: q", "must hold B x H_q x D elements");
    check_positions(c, seq_lens, "decode_attention: seq_lens", 1);
    const std::int64_t group = q_heads / c.kv_heads;
    std::vector<double> out(sz(c.batch * q_heads * c.head_dim), 0.0);
    std::vector<double> scores;
    for (std::int64_t b = 0; b < c.batch; ++b) {
        const std::int64_t len = seq_lens[sz(b)];
        for (std::int64_t hq = 0; hq < q_heads; ++hq) {
            const std::int64_t h = hq / group;
            const std::uint16_t* qv = q.data() + (b * q_heads + hq) * c.head_dim;
            scores.assign(sz(len), 0.0);
            double top = -INFINITY;
            for (std::int64_t t = 0; t < len; ++t) {
                double dot = 0;
                for (std::int64_t d = 0; d < c.head_dim; ++d) dot += static_cast<double>(bf16_to_float(qv[d])) * kv_cache_value(c, false, b, t, h, d);
                scores[sz(t)] = dot * softmax_scale;
                top = std::max(top, scores[sz(t)]);
            }
            double total = 0;
            for (double& s : scores) total += (s = std::exp(s - top));
            double* o = out.data() + (b * q_heads + hq) * c.head_dim;
            for (std::int64_t t = 0; t < len; ++t) {
                const double p = scores[sz(t)] / total;
                for (std::int64_t d = 0; d < c.head_dim; ++d) o[d] += p * kv_cache_value(c, true, b, t, h, d);
            }
        }
    }
    return out;
}

double kv_cache_max_abs_value(const KvCacheHost& c, const std::vector<std::int32_t>& seq_lens) {
    check_positions(c, seq_lens, "kv_cache_max_abs_value: seq_lens", 1);
    double top = 0;
    for (std::int64_t b = 0; b < c.batch; ++b)
        for (std::int64_t t = 0; t < seq_lens[sz(b)]; ++t)
            for (std::int64_t h = 0; h < c.kv_heads; ++h)
                for (std::int64_t d = 0; d < c.head_dim; ++d) top = std::max(top, std::fabs(static_cast<double>(kv_cache_value(c, true, b, t, h, d))));
    return top;
}

Tolerance decode_attention_tolerance(double max_abs_value) {
    Tolerance t;
    t.relative = 2.0 * kUnitRoundoffBf16;
    t.absolute = 2.44140625e-4 * max_abs_value;  // 2^-12 of max|v|
    t.source = "bf16 output rounding; fp32 softmax and accumulation within 2^-12 of max|v|";
    return t;
}

}  // namespace quantplan::kernels
