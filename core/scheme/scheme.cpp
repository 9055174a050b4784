#include "core/scheme/scheme.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "core/base/error.h"

namespace quantplan {
namespace {

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(sep, start);
        parts.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return parts;
}

// Parses a positive decimal integer that fits in int64; nullopt otherwise.
std::optional<std::int64_t> parse_positive(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

// The weight storage families the grammar names.
enum class WeightFamily { Int, Fp8E4M3, Fp8E5M2, Nvfp4, Mxfp4 };

std::string family_token(WeightFamily f, int bits) {
    switch (f) {
        case WeightFamily::Int: return bits == 8 ? "int8" : "int" + std::to_string(bits);
        case WeightFamily::Fp8E4M3: return "fp8";
        case WeightFamily::Fp8E5M2: return "fp8e5m2";
        case WeightFamily::Nvfp4: return "nvfp4";
        case WeightFamily::Mxfp4: return "mxfp4";
    }
    return "int";
}

WeightFamily family_of(const TensorQuant& w) {
    if (w.storage == DType::Fp8E4M3) return WeightFamily::Fp8E4M3;
    if (w.storage == DType::Fp8E5M2) return WeightFamily::Fp8E5M2;
    if (w.storage == DType::Fp4E2M1)
        return (w.scale && w.scale->dtype == DType::Fp8E8M0) ? WeightFamily::Mxfp4 : WeightFamily::Nvfp4;
    return WeightFamily::Int;
}

// The default granularity of a weight family at `bits` (weight-only sub-8-bit ints: g128).
GroupShape default_group(WeightFamily f, int bits) {
    switch (f) {
        case WeightFamily::Nvfp4: return GroupShape::per_group(16);
        case WeightFamily::Mxfp4: return GroupShape::per_group(32);
        case WeightFamily::Int: return bits < 8 ? GroupShape::per_group(128) : GroupShape::per_row();
        default: return GroupShape::per_row();
    }
}

bool default_symmetric(WeightFamily f, int bits, bool weight_only) {
    // Sub-8-bit weight-only integers default to AWQ's asymmetric groups; everything else symmetric.
    return !(f == WeightFamily::Int && bits < 8 && weight_only);
}

std::string group_token(const GroupShape& g) {
    if (g.is_per_tensor()) return "tensor";
    if (g.is_per_row()) return "ch";
    if (g.is_per_group()) return "g" + std::to_string(g.cols);
    if (g.rows == g.cols) return "block" + std::to_string(g.rows);
    return "block" + std::to_string(g.rows) + "x" + std::to_string(g.cols);
}

// Builds the weight quantizer of a family.
TensorQuant make_weights(WeightFamily f, int bits, GroupShape group, bool symmetric) {
    TensorQuant w;
    switch (f) {
        case WeightFamily::Int:
            w.storage = *int_dtype_with_bits(bits);
            // AWQ/GPTQ group scales are fp16; per-channel int8 scales follow the layer dtype (bf16).
            w.scale = ScaleDesc{bits < 8 || group.is_per_group() ? DType::Fp16 : DType::Bf16, true, group};
            break;
        case WeightFamily::Fp8E4M3:
        case WeightFamily::Fp8E5M2:
            w.storage = f == WeightFamily::Fp8E4M3 ? DType::Fp8E4M3 : DType::Fp8E5M2;
            // Per-tensor FP8 scales are fp32 (one number); channel/block scales follow the layer
            // dtype, which fits Qwen3-8B-FP8's BF16 block scales to the byte (reference §4).
            w.scale = ScaleDesc{group.is_per_tensor() ? DType::Fp32 : DType::Bf16, true, group};
            break;
        case WeightFamily::Nvfp4:
            w.storage = DType::Fp4E2M1;
            w.scale = ScaleDesc{DType::Fp8E4M3, true, group};
            w.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
            break;
        case WeightFamily::Mxfp4:
            w.storage = DType::Fp4E2M1;
            w.scale = ScaleDesc{DType::Fp8E8M0, true, group};
            break;
    }
    w.symmetric = symmetric;
    // Zero points are stored at the payload width (AWQ: 4-bit zeros for 4-bit weights). For a
    // symmetric quantizer the field is unused and fixed so that equality stays structural.
    w.zero_point_dtype = symmetric ? DType::Int4 : *int_dtype_with_bits(bits);
    return w;
}

// Builds the activation quantizer matching the weights of a W<b>A<a> scheme.
TensorQuant make_activations(WeightFamily f, int act_bits, const GroupShape& weight_group, bool is_static) {
    TensorQuant a;
    if (f == WeightFamily::Nvfp4) {
        a.storage = DType::Fp4E2M1;
        a.scale = ScaleDesc{DType::Fp8E4M3, false, GroupShape::per_group(16)};
        a.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};  // calibrated global scale
        return a;
    }
    a.storage = (f == WeightFamily::Int) ? *int_dtype_with_bits(act_bits) : (f == WeightFamily::Fp8E5M2 ? DType::Fp8E5M2 : DType::Fp8E4M3);
    if (is_static) {
        a.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
    } else if (weight_group.is_block()) {
        // A 128x128 weight block pairs with a 1x128 activation group (vLLM fp8.py).
        a.scale = ScaleDesc{DType::Fp32, false, GroupShape::per_group(weight_group.cols)};
    } else {
        a.scale = ScaleDesc{DType::Fp32, false, GroupShape::per_row()};  // dynamic per token
    }
    return a;
}

[[noreturn]] void reject(std::string_view name, const std::string& why) {
    throw Error("scheme '" + std::string(name) + "'", why);
}

}  // namespace

std::int64_t GroupShape::group_count(std::int64_t tensor_rows, std::int64_t tensor_cols) const {
    const std::int64_t r = rows < 0 ? tensor_rows : rows;
    const std::int64_t c = cols < 0 ? tensor_cols : cols;
    return cdiv(tensor_rows, r) * cdiv(tensor_cols, c);
}

MatmulType Scheme::matmul_type() const {
    if (!activations) return activation_dtype == DType::Fp16 ? MatmulType::Fp16 : MatmulType::Bf16;
    switch (activations->storage) {
        case DType::Fp8E4M3:
        case DType::Fp8E5M2: return MatmulType::Fp8;
        case DType::Fp4E2M1: return MatmulType::Fp4;
        case DType::Int8: return MatmulType::Int8;
        case DType::Int4: return MatmulType::Int4;
        case DType::Fp16: return MatmulType::Fp16;
        default: return MatmulType::Bf16;
    }
}

void validate_scheme(const Scheme& s) {
    const std::string name = scheme_name(s);
    const auto check_group = [&](const GroupShape& g, const char* what) {
        if (g.rows == 0 || g.cols == 0 || g.rows < -1 || g.cols < -1)
            reject(name, std::string(what) + " group size must be positive or -1 (whole extent)");
    };
    if (s.weights.scale) check_group(s.weights.scale->group, "weight");
    if (s.weights.scale2) check_group(s.weights.scale2->group, "second-level weight");
    if (s.activations && s.activations->scale) check_group(s.activations->scale->group, "activation");

    const bool w_float = !dtype_is_integer(s.weights.storage);
    if (s.weights.is_quantized() && w_float && !s.weights.symmetric)
        reject(name, "float formats carry no zero point: asymmetric " + std::string(dtype_name(s.weights.storage)) + " weights are not a format any engine loads");
    if (s.weights.scale && !s.weights.scale->is_static)
        reject(name, "weight scales are always static: weights are known at load time");
    if (s.activations) {
        const auto& a = *s.activations;
        if (!a.scale) reject(name, "quantized activations need a scale");
        if (s.weights.scale && s.weights.scale->group.is_block() && a.scale->is_static)
            reject(name, "static activation scales do not pair with 2-D weight blocks: a 128x128 weight block needs dynamic 1x128 activation groups (vLLM fp8.py rejects it)");
        if (s.weights.is_quantized() && dtype_is_integer(s.weights.storage) && dtype_bits(s.weights.storage) == 8 && !s.weights.symmetric)
            reject(name, "W8A8 kernels take only symmetric weights (vLLM compressed-tensors: 'Only symmetric weight quantization supported')");
        if (dtype_is_integer(a.storage) != dtype_is_integer(s.weights.storage) && s.weights.storage != DType::Fp4E2M1)
            reject(name, "weights and activations must both be integer or both float for a W8A8 GEMM");
    }
    if (s.weights.storage == DType::Fp4E2M1 && s.weights.scale) {
        const auto& g = s.weights.scale->group;
        const bool mx = s.weights.scale->dtype == DType::Fp8E8M0;
        if (!(g.is_per_group() && g.cols == (mx ? 32 : 16)))
            reject(name, mx ? "MXFP4 uses one e8m0 scale per 32 elements" : "NVFP4 uses one e4m3 scale per 16 elements");
    }
}

Scheme parse_scheme(std::string_view raw) {
    const std::string name = lower(raw);
    Scheme s;
    if (name == "native") {
        s.native = true;
        return s;
    }
    if (name == "bf16" || name == "fp16" || name == "fp32") {
        s.weights.storage = *parse_dtype(name);
        s.activation_dtype = s.weights.storage == DType::Fp32 ? DType::Fp32 : s.weights.storage;
        return s;
    }
    const std::vector<std::string> parts = split(name, '-');
    const std::string& head = parts[0];
    const std::size_t apos = head.find('a');
    if (head.size() < 4 || head[0] != 'w' || apos == std::string::npos)
        reject(raw, "not a scheme name (expected native, bf16, fp16, fp32 or w<bits>a<bits>[-...], see docs/schemes.md)");
    const auto wb = parse_positive(std::string_view(head).substr(1, apos - 1));
    const auto ab = parse_positive(std::string_view(head).substr(apos + 1));
    if (!wb || *wb < 2 || *wb > 8) reject(raw, "weight bits must be 2 to 8");
    if (!ab || (*ab != 4 && *ab != 8 && *ab != 16)) reject(raw, "activation bits must be 4, 8 or 16");
    const int bits = static_cast<int>(*wb);
    const bool weight_only = *ab == 16;

    WeightFamily family = WeightFamily::Int;
    std::optional<GroupShape> group;
    std::optional<bool> symmetric;
    bool act_static = false;
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::string& p = parts[i];
        if (p.empty()) reject(raw, "empty part between '-'");
        if (p == "int" || p == "int" + std::to_string(bits)) family = WeightFamily::Int;
        else if (p == "fp8" || p == "fp8e4m3") family = WeightFamily::Fp8E4M3;
        else if (p == "fp8e5m2") family = WeightFamily::Fp8E5M2;
        else if (p == "nvfp4") family = WeightFamily::Nvfp4;
        else if (p == "mxfp4") family = WeightFamily::Mxfp4;
        else if (p == "ch") group = GroupShape::per_row();
        else if (p == "tensor") group = GroupShape::per_tensor();
        else if (p == "sym") symmetric = true;
        else if (p == "asym") symmetric = false;
        else if (p == "static") act_static = true;
        else if (p[0] == 'g') {
            const auto g = parse_positive(std::string_view(p).substr(1));
            if (!g || *g <= 0) reject(raw, "group size must be a positive integer, got '" + p.substr(1) + "'");
            group = GroupShape::per_group(*g);
        } else if (p.rfind("block", 0) == 0) {
            const std::string dims = p.substr(5);
            const std::size_t x = dims.find('x');
            const auto r = parse_positive(dims.substr(0, x));
            const auto c = x == std::string::npos ? r : parse_positive(dims.substr(x + 1));
            if (!r || !c || *r <= 0 || *c <= 0) reject(raw, "block size must be positive, got '" + dims + "'");
            group = GroupShape::block(*r, *c);
        } else {
            reject(raw, "unknown part '" + p + "' (formats int, fp8, fp8e5m2, nvfp4, mxfp4; granularity g<N>, block<N>, ch, tensor; sym, asym, static)");
        }
    }
    if ((family == WeightFamily::Fp8E4M3 || family == WeightFamily::Fp8E5M2) && bits != 8)
        reject(raw, "fp8 weights are 8 bits");
    if ((family == WeightFamily::Nvfp4 || family == WeightFamily::Mxfp4) && bits != 4)
        reject(raw, "fp4 weights are 4 bits");
    if (family == WeightFamily::Nvfp4 && *ab != 4 && *ab != 16) reject(raw, "nvfp4 pairs with 4-bit or 16-bit activations");
    if (family != WeightFamily::Nvfp4 && *ab == 4) reject(raw, "4-bit activations exist only as nvfp4 (w4a4-nvfp4)");
    if (!weight_only && family == WeightFamily::Int && (bits != 8 || *ab != 8) && family != WeightFamily::Nvfp4)
        reject(raw, "integer W+A schemes are w8a8 (W4A8 mixed kernels are not modelled)");
    if (family == WeightFamily::Mxfp4 && !weight_only) reject(raw, "mxfp4 is modelled weight-only (w4a16-mxfp4)");
    if (act_static && weight_only) reject(raw, "'static' describes activation scales; a16 has none");

    const GroupShape g = group.value_or(default_group(family, bits));
    const bool sym = symmetric.value_or(default_symmetric(family, bits, weight_only));
    s.weights = make_weights(family, bits, g, sym);
    if (!weight_only) {
        s.activations = make_activations(family, static_cast<int>(*ab), g, act_static);
        s.accumulation = family == WeightFamily::Int ? DType::Int32 : DType::Fp32;
    }
    // Group-wise integer weight-only checkpoints: AutoAWQ (4-bit, zero points) or compressed-tensors
    // pack-quantized (symmetric); other widths are priced with dense packing.
    if (family == WeightFamily::Int && bits < 8 && weight_only && g.is_per_group()) {
        if (sym) s.layout = CheckpointLayout::CompressedTensorsPacked;
        else if (bits == 4) s.layout = CheckpointLayout::AutoAwqGemm;
    }
    validate_scheme(s);
    return s;
}

std::string stored_scheme_name(const Scheme& s) {
    Scheme stored = s;
    stored.native = false;
    return scheme_name(stored);
}

std::string scheme_name(const Scheme& s) {
    if (s.native) return "native";
    if (!s.weights.is_quantized()) return std::string(dtype_name(s.weights.storage));
    const WeightFamily family = family_of(s.weights);
    const int bits = dtype_bits(s.weights.storage);
    const bool weight_only = !s.activations;
    const int act_bits = weight_only ? 16 : dtype_bits(s.activations->storage);
    std::string name = "w" + std::to_string(bits) + "a" + std::to_string(act_bits);
    const GroupShape& g = s.weights.scale->group;
    if (family == WeightFamily::Int && bits < 8) {
        name += "-" + group_token(g);
    } else {
        name += "-" + family_token(family, bits);
        if (!(g == default_group(family, bits))) name += "-" + group_token(g);
    }
    if (s.weights.symmetric != default_symmetric(family, bits, weight_only)) name += s.weights.symmetric ? "-sym" : "-asym";
    if (s.activations && s.activations->scale && s.activations->scale->is_static && family != WeightFamily::Nvfp4) name += "-static";
    return name;
}

std::vector<Scheme> parse_scheme_list(std::string_view names) {
    std::vector<Scheme> out;
    for (const std::string& n : split(names, ',')) {
        if (n.empty()) throw Error("--schemes", "empty scheme name in list '" + std::string(names) + "'");
        out.push_back(parse_scheme(n));
    }
    return out;
}

const std::vector<std::string>& canonical_scheme_names() {
    static const std::vector<std::string> names{
        "bf16", "fp16", "w8a16-int8", "w4a16-g128", "w4a16-g32", "w8a8-int8", "w8a8-fp8",
        "w8a8-fp8-block128", "w4a4-nvfp4", "w4a16-mxfp4"};
    return names;
}

const std::vector<std::string>& default_serving_scheme_names() {
    static const std::vector<std::string> names{"bf16", "w8a16-int8", "w4a16-g128", "w4a16-g32", "w8a8-int8", "w8a8-fp8"};
    return names;
}

KvFormat parse_kv_format(std::string_view raw) {
    const std::string n = lower(raw);
    KvFormat kv;
    if (n == "bf16" || n == "auto" || n == "bfloat16") {
        kv.quant.storage = DType::Bf16;
    } else if (n == "fp16" || n == "float16") {
        kv.quant.storage = DType::Fp16;
    } else if (n == "fp8" || n == "fp8_e4m3" || n == "fp8_e5m2") {
        // vLLM: stored = sat(x / scale), one k_scale and one v_scale per layer (fp32).
        kv.quant.storage = n == "fp8_e5m2" ? DType::Fp8E5M2 : DType::Fp8E4M3;
        kv.quant.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
    } else if (n == "int8") {
        // INT8 KV needs per-token-head scales (kernels.md (d)); fp16 scale per token and head.
        kv.quant.storage = DType::Int8;
        kv.quant.scale = ScaleDesc{DType::Fp16, false, GroupShape::per_row()};
    } else if (n == "int4") {
        kv.quant.storage = DType::Int4;
        kv.quant.scale = ScaleDesc{DType::Fp16, false, GroupShape::per_row()};
        kv.quant.symmetric = false;
        kv.quant.zero_point_dtype = DType::Fp16;  // asymmetric per token-head: fp16 scale and zero
    } else {
        throw Error("--kv", "unknown KV-cache format '" + std::string(raw) + "' (bf16, fp16, fp8, fp8_e5m2, int8, int4)");
    }
    return kv;
}

std::string kv_format_name(const KvFormat& kv) {
    switch (kv.quant.storage) {
        case DType::Fp8E4M3: return "fp8";
        case DType::Fp8E5M2: return "fp8_e5m2";
        default: return std::string(dtype_name(kv.quant.storage));
    }
}

std::uint64_t kv_bytes_per_token_per_layer(const KvFormat& kv, std::int64_t num_kv_heads, std::int64_t head_dim) {
    const auto heads = static_cast<std::uint64_t>(num_kv_heads);
    const auto dim = static_cast<std::uint64_t>(head_dim);
    const auto bits = static_cast<std::uint64_t>(dtype_bits(kv.quant.storage));
    std::uint64_t per_head = (dim * bits + 7) / 8;  // one token's K (or V) for one head
    if (kv.quant.scale && kv.quant.scale->group.is_per_row()) {
        per_head += static_cast<std::uint64_t>(dtype_bits(kv.quant.scale->dtype)) / 8;
        if (!kv.quant.symmetric) per_head += static_cast<std::uint64_t>(dtype_bits(kv.quant.zero_point_dtype)) / 8;
    }
    return 2 * heads * per_head;  // K and V
}

std::uint64_t latent_cache_bytes_per_token_per_layer(const KvFormat& kv, std::int64_t kv_lora_rank, std::int64_t qk_rope_head_dim) {
    const auto values = static_cast<std::uint64_t>(kv_lora_rank + qk_rope_head_dim);
    const auto bits = static_cast<std::uint64_t>(dtype_bits(kv.quant.storage));
    std::uint64_t bytes = (values * bits + 7) / 8;
    if (kv.quant.scale && kv.quant.scale->group.is_per_row()) {
        bytes += static_cast<std::uint64_t>(dtype_bits(kv.quant.scale->dtype)) / 8;
        if (!kv.quant.symmetric) bytes += static_cast<std::uint64_t>(dtype_bits(kv.quant.zero_point_dtype)) / 8;
    }
    return bytes;
}

std::uint64_t kv_fixed_bytes_per_layer(const KvFormat& kv) {
    if (kv.quant.scale && kv.quant.scale->group.is_per_tensor())
        return 2 * static_cast<std::uint64_t>(dtype_bits(kv.quant.scale->dtype)) / 8;  // k_scale, v_scale
    return 0;
}

bool kv_name_is_auto(std::string_view name) { return lower(name) == "auto"; }

const std::vector<std::string>& kv_format_names() {
    static const std::vector<std::string> names{"bf16", "fp16", "fp8", "fp8_e5m2", "int8", "int4"};
    return names;
}

}  // namespace quantplan
