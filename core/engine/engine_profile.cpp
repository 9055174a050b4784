#include "core/engine/engine_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/text_file.h"

namespace quantplan::engine {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

const json& member(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) throw Error(path + "." + key, "missing");
    return *it;
}

std::string text_of(const json& j, const char* key, const std::string& path, bool required = true) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) throw Error(path + "." + key, "missing");
        return "";
    }
    if (!it->is_string()) throw Error(path + "." + key, std::string("must be a string, got a ") + it->type_name());
    return it->get<std::string>();
}

double number_of(const json& j, const char* key, const std::string& path, double fallback, double lo, double hi) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_number()) throw Error(path + "." + key, std::string("must be a number, got a ") + it->type_name());
    const double v = it->get<double>();
    if (!(v >= lo && v <= hi)) throw Error(path + "." + key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

bool flag_of(const json& j, const char* key, const std::string& path, bool fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw Error(path + "." + key, std::string("must be true or false, got a ") + it->type_name());
    return it->get<bool>();
}

std::int64_t count_of(const json& j, const char* key, const std::string& path, std::int64_t fallback) {
    return static_cast<std::int64_t>(number_of(j, key, path, static_cast<double>(fallback), 0, 1e15));
}

std::uint64_t bytes_of(const json& j, const char* key, const std::string& path, std::uint64_t fallback) {
    return static_cast<std::uint64_t>(number_of(j, key, path, static_cast<double>(fallback), 0, 1e15));
}

// Calls `each(entry, path)` for every entry of the list `key` of `d` (absent or null: none), the
// path naming the entry for errors ("<dp>.<key>[i]").
template <class Each>
void for_each_tier(const json& d, const char* key, const std::string& dp, Each each) {
    const auto t = d.find(key);
    if (t == d.end() || t->is_null()) return;
    if (!t->is_array() || t->size() > 64) throw Error(dp + "." + key, "must be a list of tiers");
    for (std::size_t i = 0; i < t->size(); ++i) each((*t)[i], dp + "." + key + "[" + std::to_string(i) + "]");
}

// An optional engine version `key` of `j` ("" when absent), checked to parse.
std::string version_of(const json& j, const char* key, const std::string& path) {
    std::string v = text_of(j, key, path, false);
    if (!v.empty()) parse_engine_version(v, path + "." + key);
    return v;
}

MemoryRules parse_memory_values(const json& j, const std::string& path, MemoryRules m) {
    m.activation_scale = number_of(j, "activation_scale", path, m.activation_scale, 0, 100);
    m.non_torch_bytes = bytes_of(j, "non_torch_bytes", path, m.non_torch_bytes);
    m.non_torch_bytes_per_extra_rank = bytes_of(j, "non_torch_bytes_per_extra_rank", path, m.non_torch_bytes_per_extra_rank);
    m.cuda_graph_bytes = bytes_of(j, "cuda_graph_bytes", path, m.cuda_graph_bytes);
    return m;
}

StepTerms parse_step_terms(const json& j, const std::string& path) {
    StepTerms s;
    s.fixed_step_s = number_of(j, "fixed_step_s", path, 0, 0, 10);
    s.per_layer_s = number_of(j, "per_layer_s", path, 0, 0, 1);
    s.eager_per_layer_s = number_of(j, "eager_per_layer_s", path, 0, 0, 1);
    s.ttft_overhead_s = number_of(j, "ttft_overhead_s", path, 0, 0, 100);
    s.ttft_overhead_in_process_s = number_of(j, "ttft_overhead_in_process_s", path, 0, 0, 100);
    s.eager_blend_exponent = number_of(j, "eager_blend_exponent", path, 0, 0, 64);
    if (const auto h = j.find("eager_host"); h != j.end()) {
        if (!h->is_array() || h->size() > 256) throw Error(path + ".eager_host", "must be an array of at most 256 versions");
        for (std::size_t i = 0; i < h->size(); ++i) {
            const std::string at = path + ".eager_host[" + std::to_string(i) + "]";
            EagerHostCost c;
            c.version = text_of((*h)[i], "version", at, true);
            const EngineVersion v = parse_engine_version(c.version, at + ".version");
            if (!s.eager_host.empty() && compare_versions(parse_engine_version(s.eager_host.back().version, at), v) >= 0)
                throw Error(at + ".version", "must be ascending");
            c.per_layer_s = number_of((*h)[i], "per_layer_s", at, 0, 0, 1);
            c.points = count_of((*h)[i], "points", at, 0);
            s.eager_host.push_back(std::move(c));
        }
    }
    if (const auto k = j.find("kernel_scale_by_family"); k != j.end()) {
        if (!k->is_object()) throw Error(path + ".kernel_scale_by_family", "must be an object");
        for (const auto& [family, v] : k->items()) s.kernel_scale_by_family[family] = number_of(*k, family.c_str(), path + ".kernel_scale_by_family", 1, 0.01, 100);
    }
    s.fitted_points = count_of(j, "fitted_points", path, 0);
    s.basis = text_of(j, "basis", path, false);
    return s;
}

std::map<KernelFamily, EfficiencyCurve> parse_curves(const json& j, const std::string& path) {
    if (!j.is_object()) throw Error(path, "must be an object of kernel families");
    std::map<KernelFamily, EfficiencyCurve> out;
    for (const auto& [name, c] : j.items()) {
        const std::string p = path + "." + name;
        EfficiencyCurve curve;
        const json& m = member(c, "m", p);
        const json& f = member(c, "fraction", p);
        if (!m.is_array() || !f.is_array() || m.size() != f.size() || m.empty() || m.size() > 4096)
            throw Error(p, "m and fraction must be arrays of the same, non-zero length");
        for (std::size_t i = 0; i < m.size(); ++i) {
            if (!m[i].is_number() || !f[i].is_number()) throw Error(p, "m and fraction hold numbers");
            const double mv = m[i].get<double>(), fv = f[i].get<double>();
            if (!(mv >= 1 && mv <= 1e9) || !(fv > 0 && fv <= 1.5)) throw Error(p, "m must be >= 1 and fraction in (0, 1.5]");
            if (!curve.m.empty() && static_cast<std::int64_t>(mv) <= curve.m.back()) throw Error(p + ".m", "must be ascending");
            curve.m.push_back(static_cast<std::int64_t>(mv));
            curve.fraction.push_back(fv);
        }
        curve.per_call_s = number_of(c, "per_call_s", p, 0, 0, 1);
        curve.measured_points = count_of(c, "measured_points", p, 0);
        curve.basis = text_of(c, "basis", p, false);
        out[parse_kernel_family(name, p)] = std::move(curve);
    }
    return out;
}

ojson curves_json(const std::map<KernelFamily, EfficiencyCurve>& curves) {
    ojson out = ojson::object();
    for (const auto& [family, c] : curves) {
        ojson e;
        e["m"] = c.m;
        e["fraction"] = c.fraction;
        if (c.per_call_s > 0) e["per_call_s"] = c.per_call_s;
        e["measured_points"] = c.measured_points;
        e["basis"] = c.basis;
        out[kernel_family_name(family)] = std::move(e);
    }
    return out;
}

}  // namespace

const char* figure_class_name(FigureClass c) {
    switch (c) {
        case FigureClass::Step: return "step";
        case FigureClass::Ttft: return "ttft";
        case FigureClass::KvTokens: return "kv_tokens";
        case FigureClass::Kernel: return "kernel";
        case FigureClass::Other: return "other";
    }
    return "?";
}

FigureClass parse_figure_class(std::string_view name, const std::string& field) {
    for (FigureClass c : {FigureClass::Step, FigureClass::Ttft, FigureClass::KvTokens, FigureClass::Kernel, FigureClass::Other})
        if (name == figure_class_name(c)) return c;
    throw Error(field, "unknown figure class '" + clip_text(name, 40) + "'");
}

std::optional<Band> find_band(const std::vector<Band>& bands, const std::string& engine, const std::string& family, FigureClass figure) {
    const auto find = [&](const std::string& e, const std::string& f) -> const Band* {
        for (const Band& b : bands)
            if (b.figure == figure && b.engine == e && b.family == f && b.points >= kMinBandPoints) return &b;
        return nullptr;
    };
    for (const auto& [e, f] : {std::pair{engine, family}, std::pair{engine, std::string("*")}, std::pair{std::string("*"), std::string("*")}})
        if (const Band* b = find(e, f)) return *b;
    return std::nullopt;  // fewer than kMinBandPoints points in the whole class: no band
}

EngineDefaults defaults_for_gpu(const EngineProfile& p, const std::string& gpu_id, std::uint64_t memory_bytes) {
    EngineDefaults d = p.defaults;
    if (d.large_gpu_min_bytes > 0 && memory_bytes >= d.large_gpu_min_bytes) {
        const bool excluded = std::any_of(d.large_gpu_exclude.begin(), d.large_gpu_exclude.end(),
                                          [&](const std::string& name) { return gpu_id.find(name) != std::string::npos; });
        if (!excluded) {
            d.max_num_seqs = d.large_gpu_max_num_seqs;
            d.max_num_batched_tokens = d.large_gpu_max_num_batched_tokens;
        }
    }
    return d;
}

namespace {

// Whether `version` comes before `bound`; false when either is empty or does not parse (a profile's
// rule for an older release never applies to a version that cannot be placed).
bool version_below(std::string_view version, const std::string& bound) {
    if (version.empty() || bound.empty()) return false;
    try {
        return compare_versions(parse_engine_version(version, "version"), parse_engine_version(bound, "version")) < 0;
    } catch (const Error&) {
        return false;
    }
}

}  // namespace

EngineDefaults defaults_for_run(const EngineProfile& p, const std::string& gpu_id, std::uint64_t memory_bytes, std::string_view version,
                                std::int64_t max_model_len) {
    EngineDefaults d = defaults_for_max_model_len(defaults_for_gpu(p, gpu_id, memory_bytes), version, max_model_len);
    if (d.host_overlaps_gpu && !d.host_overlaps_gpu_from.empty() && version_below(version, d.host_overlaps_gpu_from)) d.host_overlaps_gpu = false;
    for (const EngineDefaults::TokensTier& t : d.max_num_batched_tokens_tiers) {
        if (memory_bytes >= t.below_bytes || version_below(version, t.from_version)) continue;
        d.max_num_batched_tokens = t.tokens;
        break;
    }
    return d;
}

EngineDefaults defaults_for_max_model_len(EngineDefaults d, std::string_view version, std::int64_t max_model_len) {
    if (d.auto_chunked_above_max_model_len <= 0) return d;
    d.chunked_prefill = max_model_len > d.auto_chunked_above_max_model_len;
    if (!d.chunked_prefill) {
        d.max_num_batched_tokens = std::max(d.max_num_batched_tokens, max_model_len);
        return d;
    }
    const std::int64_t tokens = d.chunked_prefill_tokens_before > 0 && version_below(version, d.chunked_prefill_tokens_from)
                                    ? d.chunked_prefill_tokens_before
                                    : d.chunked_prefill_tokens;
    if (tokens > 0) d.max_num_batched_tokens = tokens;
    return d;
}

std::vector<EvidencePoint> nearest_points(const std::vector<EvidencePoint>& points, const std::string& model,
                                          const std::string& model_type, const std::string& gpu_id, const std::string& arch,
                                          const std::string& family, const std::string& engine, std::size_t max_points) {
    std::vector<std::pair<int, const EvidencePoint*>> scored;
    for (const EvidencePoint& p : points) {
        const int model_distance = p.model == model ? 0 : (!model_type.empty() && p.model_type == model_type) ? 1 : 9;
        const int gpu_distance = p.gpu == gpu_id ? 0 : (!arch.empty() && p.arch == arch) ? 1 : 9;
        if (model_distance == 9 && gpu_distance == 9) continue;
        const int score = 4 * model_distance + 4 * gpu_distance + (p.family == family ? 0 : 3) + (p.engine == engine ? 0 : 1);
        scored.emplace_back(score, &p);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<EvidencePoint> out;
    std::vector<std::string> seen;  // one point per setup and metric (a run's mean and median are twins)
    for (std::size_t i = 0; i < scored.size() && out.size() < max_points; ++i) {
        const EvidencePoint& p = *scored[i].second;
        const std::string key = p.model + "|" + p.gpu + "|" + p.scheme + "|" + p.engine + p.engine_version + "|" + p.metric + "|" +
                                std::to_string(p.batch) + "|" + std::to_string(p.input_tokens) + "|" + std::to_string(p.output_tokens);
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        out.push_back(p);
    }
    return out;
}

namespace {

// A version's numeric parts without allocating: at most 8, read as parse_engine_version reads them.
// Returns false for text that has no leading number.
struct VersionParts {
    std::int64_t part[8] = {};
    std::size_t count = 0;
};

bool read_version_parts(std::string_view text, VersionParts& v) {
    std::string_view rest = text;
    if (!rest.empty() && (rest[0] == 'v' || rest[0] == 'V')) rest.remove_prefix(1);
    if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) return false;
    std::size_t i = 0;
    while (i < rest.size() && v.count < 8) {
        if (std::isdigit(static_cast<unsigned char>(rest[i]))) {
            std::int64_t n = 0;
            std::size_t digits = 0;
            while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])) && digits < 9) n = n * 10 + (rest[i++] - '0'), ++digits;
            v.part[v.count++] = n;
        } else if (rest.substr(i, 5) == ".post" || rest.substr(i, 4) == "post") {
            i += rest[i] == '.' ? 5 : 4;  // the post number follows as the next part
        } else if (rest[i] == '.') {
            ++i;
        } else {
            break;  // rc, dev, +cu121 ...: not ordered here
        }
    }
    return true;
}

// Negative, zero or positive as parts a are older than, equal to or newer than parts b (missing
// parts are 0): compare_versions and eager_host_for.
int compare_parts(const std::int64_t* a, std::size_t na, const std::int64_t* b, std::size_t nb) {
    const std::size_t n = std::max(na, nb);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t x = i < na ? a[i] : 0, y = i < nb ? b[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

}  // namespace

EngineVersion parse_engine_version(std::string_view text, const std::string& field) {
    VersionParts parts;
    if (!read_version_parts(text, parts)) throw Error(field, "'" + clip_text(text, 40) + "' is not a version (expected e.g. 0.6.3)");
    EngineVersion v;
    v.text = std::string(text);
    v.parts.assign(parts.part, parts.part + parts.count);
    return v;
}

int compare_versions(const EngineVersion& a, const EngineVersion& b) {
    return compare_parts(a.parts.data(), a.parts.size(), b.parts.data(), b.parts.size());
}

const char* kernel_family_name(KernelFamily f) {
    switch (f) {
        case KernelFamily::Bf16Gemm: return "bf16_gemm";
        case KernelFamily::W4A16: return "w4a16";
        case KernelFamily::W8A16: return "w8a16";
        case KernelFamily::Fp8W8A8: return "fp8_w8a8";
        case KernelFamily::Fp8BlockW8A8: return "fp8_block_w8a8";
        case KernelFamily::Int8W8A8: return "int8_w8a8";
        case KernelFamily::GenericDequant: return "generic_dequant";
        case KernelFamily::AttentionBf16: return "attention_bf16";
        case KernelFamily::AttentionFp8: return "attention_fp8";
        case KernelFamily::W4A16Moe: return "w4a16_moe";
        case KernelFamily::Mxfp4Moe: return "mxfp4_moe";
    }
    return "?";
}

MatmulType family_matmul(KernelFamily f) {
    switch (f) {
        case KernelFamily::Fp8W8A8:
        case KernelFamily::Fp8BlockW8A8: return MatmulType::Fp8;
        case KernelFamily::Int8W8A8: return MatmulType::Int8;
        default: return MatmulType::Bf16;
    }
}

KernelFamily parse_kernel_family(std::string_view name, const std::string& field) {
    for (KernelFamily f : {KernelFamily::Bf16Gemm, KernelFamily::W4A16, KernelFamily::W8A16, KernelFamily::Fp8W8A8, KernelFamily::Fp8BlockW8A8,
                           KernelFamily::Int8W8A8, KernelFamily::GenericDequant, KernelFamily::AttentionBf16, KernelFamily::AttentionFp8, KernelFamily::W4A16Moe,
                           KernelFamily::Mxfp4Moe})
        if (name == kernel_family_name(f)) return f;
    throw Error(field, "unknown kernel family '" + clip_text(name, 40) + "'");
}

KernelFamily linear_family(const Scheme& scheme, bool gpu_has_matmul_type) {
    if (!scheme.weights.is_quantized()) return KernelFamily::Bf16Gemm;
    const int bits = dtype_bits(scheme.weights.storage);
    if (scheme.activations && gpu_has_matmul_type) {
        // Block-scaled FP8 (128x128 weight blocks) runs other kernels than per-channel FP8: vLLM's
        // W8A8BlockFp8LinearOp (DeepGEMM, FlashInfer or Triton) against CUTLASS scaled_mm, SGLang's
        // DeepGEMM against sgl-kernel's fp8_scaled_mm; aiconfigurator's tables time them apart.
        if (scheme.matmul_type() == MatmulType::Fp8) return scheme.weights.scale && scheme.weights.scale->group.is_block() ? KernelFamily::Fp8BlockW8A8 : KernelFamily::Fp8W8A8;
        if (scheme.matmul_type() == MatmulType::Int8) return KernelFamily::Int8W8A8;
    }
    return bits <= 4 ? KernelFamily::W4A16 : KernelFamily::W8A16;
}

std::string scheme_family(const Scheme& scheme) {
    if (!scheme.weights.is_quantized()) return "bf16";
    // FP4 weights (MXFP4, NVFP4) run other kernels than int4's GPTQ/AWQ ones (vLLM and SGLang serve
    // gpt-oss's MXFP4 experts with triton_kernels or Marlin's MXFP4 path on Hopper and Ampere), so
    // an int4 scale is no evidence for them: their own key, unfitted until the corpus has points.
    if (scheme.weights.storage == DType::Fp4E2M1) return "fp4";
    return dtype_bits(scheme.weights.storage) <= 4 ? "4bit" : "8bit";
}

std::string kernel_scale_key(const Scheme& scheme, bool moe, bool generic) {
    return scheme_family(scheme) + (generic ? "-generic" : "") + (moe ? "-moe" : "");
}

bool awq_without_marlin(const EngineDefaults& d, std::string_view version) { return version_below(version, d.awq_marlin_from_version); }

bool decode_uses_cuda_graphs(const EngineDefaults& d, std::int64_t seq_len) {
    return d.cuda_graphs && (d.cuda_graph_max_seq_len <= 0 || seq_len <= d.cuda_graph_max_seq_len);
}

std::string multi_step_refusal(const EngineProfile& profile, std::string_view version, std::int64_t steps) {
    if (steps < 1 || steps > 64) return "must be 1 to 64";
    if (steps == 1) return "";
    const bool v0 = profile.engine == "vllm" && profile.id.rfind("vllm-v0", 0) == 0;
    bool within = false;
    try {
        const EngineVersion at = parse_engine_version(version, "version");
        within = compare_versions(at, parse_engine_version("0.5.5", "version")) >= 0 && compare_versions(at, parse_engine_version("0.10.0", "version")) <= 0;
    } catch (const Error&) {
        within = false;
    }
    if (!v0 || version.empty() || !within)
        return "is vLLM V0's multi-step scheduling (0.5.5 to 0.10.0; quantplan prices V0 from 0.5.5 to 0.7.x): give --engine vllm@0.6.0 or "
               "another such version, not " + profile.title;
    if (profile.defaults.chunked_prefill)
        return "multi-step scheduling with chunked prefill (vLLM V0 turns it on above a 32,768-token context) is not modelled";
    return "";
}

std::int64_t eager_decode_steps(const EngineDefaults& d, std::int64_t first_seq_len, std::int64_t steps) {
    if (steps <= 0) return 0;
    if (!decode_uses_cuda_graphs(d, first_seq_len)) return steps;
    if (d.cuda_graph_max_seq_len <= 0) return 0;
    return std::clamp<std::int64_t>(first_seq_len + steps - 1 - d.cuda_graph_max_seq_len, 0, steps);
}

std::int64_t cuda_graph_max_batch_for(const EngineDefaults& d, std::uint64_t memory_bytes, std::int64_t tensor_parallel,
                                      std::string_view version, std::int64_t max_num_batched_tokens) {
    std::int64_t max_batch = d.cuda_graph_max_batch;
    for (const EngineDefaults::GraphBatchTier& t : d.cuda_graph_max_batch_tiers) {
        if (memory_bytes >= t.below_bytes || version_below(version, t.from_version)) continue;
        max_batch = tensor_parallel >= 4 && t.max_batch_tp4 > 0 ? t.max_batch_tp4 : t.max_batch;
        break;
    }
    if (d.cuda_graph_sizes_in_tokens && max_num_batched_tokens > 0) max_batch = std::min(max_batch, max_num_batched_tokens);
    return std::max<std::int64_t>(max_batch, 0);
}

std::int64_t cuda_graph_padded_batch(const EngineDefaults& d, std::int64_t batch, std::int64_t max_batch) {
    if (batch > max_batch || batch <= 2) return batch;  // eager, or a captured 1 or 2
    if (batch <= 4) return std::min<std::int64_t>(4, max_batch);
    std::int64_t size = 4;
    for (const auto& [to, step] : d.cuda_graph_size_steps) {
        if (step <= 0) continue;
        while (size < batch && (size / step + 1) * step <= to) size = (size / step + 1) * step;
        if (size >= batch) return std::min(size, max_batch);
    }
    return max_batch;  // past the listed sizes: the largest captured batch itself (SGLang appends it)
}

namespace {
// x^p for x in [0, 1]; the fit's exponents (1.5, 2, 3, ...) without libm's general pow.
double unit_power(double x, double p) {
    if (p == 1.5) return x * std::sqrt(x);
    if (p == std::floor(p) && p >= 1 && p <= 16) {
        double r = 1;
        for (int i = 0; i < static_cast<int>(p); ++i) r *= x;
        return r;
    }
    return std::pow(x, p);
}
double unit_root(double x, double p) {
    if (p == 2) return std::sqrt(x);
    if (p == 3) return std::cbrt(x);
    if (p == 4) return std::sqrt(std::sqrt(x));
    return std::pow(x, 1.0 / p);
}
}  // namespace

bool EngineProfile::covers(const EngineVersion& v) const {
    return compare_versions(v, min_version) >= 0 && (!below_version || compare_versions(v, *below_version) < 0);
}

double eager_step_s(double gpu_s, double host_s, double exponent) {
    if (!(exponent > 0) || !(host_s > 0)) return gpu_s;
    const double m = std::max(gpu_s, host_s);
    if (!(m > 0)) return gpu_s;
    return m * unit_root(unit_power(gpu_s / m, exponent) + unit_power(host_s / m, exponent), exponent);
}

const EagerHostCost* StepTerms::eager_host_for(std::string_view version) const {
    if (eager_host.empty()) return nullptr;
    if (version.empty()) return &eager_host.back();
    // The fit calls this for every point at every trial of its terms: the versions are compared
    // without allocating. A version that does not parse (asked or stored) takes the newest cost.
    VersionParts asked;
    if (!read_version_parts(version, asked)) return &eager_host.back();
    const EagerHostCost* best = nullptr;
    for (const EagerHostCost& c : eager_host) {
        VersionParts stored;
        if (!read_version_parts(c.version, stored)) return &eager_host.back();
        if (compare_parts(stored.part, stored.count, asked.part, asked.count) <= 0) best = &c;
    }
    return best ? best : &eager_host.front();
}

bool native_sampler_in_profile(const MemoryRules& m, std::string_view version) {
    if (m.native_sampler_bytes_per_logit <= 0) return false;
    if (m.native_sampler) return *m.native_sampler;
    if (m.native_sampler_from_version.empty()) return false;
    // The newest version asked ("") is past any bound.
    if (version.empty()) return m.native_sampler_below_version.empty();
    return !version_below(version, m.native_sampler_from_version) &&
           (m.native_sampler_below_version.empty() || version_below(version, m.native_sampler_below_version));
}

bool hybrid_allocator_at(const EngineDefaults& d, std::string_view version) {
    return !d.hybrid_allocator_from_version.empty() && !version_below(version, d.hybrid_allocator_from_version);
}

bool kv_tokens_logged_as_concurrency(const MemoryRules& m, std::string_view version) {
    if (m.kv_tokens_logged_as_concurrency_from.empty()) return false;
    return version.empty() || !version_below(version, m.kv_tokens_logged_as_concurrency_from);
}

bool kv_auto_follows_modelopt(const EngineDefaults& d, std::string_view version) {
    return !d.modelopt_kv_auto_from_version.empty() && !version_below(version, d.modelopt_kv_auto_from_version);
}

double EfficiencyCurve::at(std::int64_t rows) const {
    if (m.empty()) return 0.0;
    if (rows <= m.front()) return fraction.front();
    if (rows >= m.back()) return fraction.back();
    const auto hi = std::upper_bound(m.begin(), m.end(), rows);
    const std::size_t j = static_cast<std::size_t>(hi - m.begin()), i = j - 1;
    const double t = (std::log(static_cast<double>(rows)) - std::log(static_cast<double>(m[i]))) /
                     (std::log(static_cast<double>(m[j])) - std::log(static_cast<double>(m[i])));
    return fraction[i] + t * (fraction[j] - fraction[i]);
}

CurveLookup find_all_gpus_curve(const KernelEfficiencies& k, KernelFamily family) {
    if (const auto c = k.any_gpu.find(family); c != k.any_gpu.end() && !c->second.empty()) return {&c->second, "other_gpus"};
    return {nullptr, "none"};
}

CurveLookup find_curve(const KernelEfficiencies& k, const std::string& gpu_id, const std::string& cc, KernelFamily family) {
    if (const auto g = k.by_gpu.find(gpu_id); g != k.by_gpu.end())
        if (const auto c = g->second.find(family); c != g->second.end() && !c->second.empty()) return {&c->second, "gpu"};
    if (const auto a = k.by_arch.find(cc); a != k.by_arch.end())
        if (const auto c = a->second.find(family); c != a->second.end() && !c->second.empty()) return {&c->second, "architecture"};
    if (const auto c = k.any_gpu.find(family); c != k.any_gpu.end() && !c->second.empty()) return {&c->second, "other_gpus"};
    return {nullptr, "none"};
}

EngineProfile parse_engine_profile(std::string_view text, const std::string& source) {
    const json j = parse_untrusted_json(text, source);
    if (!j.is_object()) throw Error(source, "an engine profile is a JSON object");
    if (text_of(j, "format", source) != "quantplan-engine-profile/1")
        throw Error(source + ".format", "expected \"quantplan-engine-profile/1\"");
    EngineProfile p;
    p.id = text_of(j, "id", source);
    p.engine = text_of(j, "engine", source);
    if (p.engine != "vllm" && p.engine != "sglang") throw Error(source + ".engine", "must be \"vllm\" or \"sglang\"");
    p.title = text_of(j, "title", source);
    const json& versions = member(j, "versions", source);
    p.min_version = parse_engine_version(text_of(versions, "from", source + ".versions"), source + ".versions.from");
    if (const std::string below = text_of(versions, "below", source + ".versions", false); !below.empty())
        p.below_version = parse_engine_version(below, source + ".versions.below");
    const json& sources = member(j, "sources", source);
    if (!sources.is_array() || sources.empty()) throw Error(source + ".sources", "must list the engine source each rule encodes");
    for (std::size_t i = 0; i < sources.size(); ++i) {
        const std::string path = source + ".sources[" + std::to_string(i) + "]";
        p.sources.push_back({text_of(sources[i], "repository", path), text_of(sources[i], "file", path), text_of(sources[i], "function", path),
                             text_of(sources[i], "version", path), text_of(sources[i], "what", path)});
    }
    p.step_terms_from = text_of(j, "step_terms_from", source, false);
    p.step_terms_reason = text_of(j, "step_terms_reason", source, false);
    if (!p.step_terms_from.empty() && p.step_terms_reason.empty())
        throw Error(source + ".step_terms_reason", "must say why the profile steps as " + clip_text(p.step_terms_from, 40) + " does");
    const json& d = member(j, "defaults", source);
    const std::string dp = source + ".defaults";
    p.defaults.gpu_memory_utilization = number_of(d, "gpu_memory_utilization", dp, 0.9, 0.01, 1.0);
    p.defaults.mem_fraction_static = number_of(d, "mem_fraction_static", dp, 0.0, 0.0, 1.0);
    p.defaults.max_num_seqs = count_of(d, "max_num_seqs", dp, 256);
    p.defaults.max_num_batched_tokens = count_of(d, "max_num_batched_tokens", dp, 8192);
    p.defaults.chunked_prefill = flag_of(d, "chunked_prefill", dp, true);
    p.defaults.cuda_graphs = flag_of(d, "cuda_graphs", dp, true);
    p.defaults.block_size_tokens = count_of(d, "block_size_tokens", dp, 16);
    p.defaults.cuda_graph_max_batch = count_of(d, "cuda_graph_max_batch", dp, 512);
    p.defaults.cuda_graph_sizes_in_tokens = flag_of(d, "cuda_graph_sizes_in_tokens", dp, false);
    for_each_tier(d, "cuda_graph_max_batch_tiers", dp, [&](const json& e, const std::string& tp) {
        EngineDefaults::GraphBatchTier tier;
        tier.below_bytes = bytes_of(e, "below_memory_bytes", tp, 0);
        tier.max_batch = count_of(e, "max_batch", tp, 0);
        tier.max_batch_tp4 = count_of(e, "max_batch_tp4", tp, tier.max_batch);
        tier.from_version = version_of(e, "from_version", tp);
        if (tier.below_bytes == 0 || tier.max_batch <= 0 || tier.max_batch_tp4 <= 0) throw Error(tp, "needs below_memory_bytes and a positive max_batch");
        p.defaults.cuda_graph_max_batch_tiers.push_back(tier);
    });
    for_each_tier(d, "max_num_batched_tokens_tiers", dp, [&](const json& e, const std::string& tp) {
        EngineDefaults::TokensTier tier;
        tier.below_bytes = bytes_of(e, "below_memory_bytes", tp, 0);
        tier.tokens = count_of(e, "tokens", tp, 0);
        tier.from_version = version_of(e, "from_version", tp);
        if (tier.below_bytes == 0 || tier.tokens <= 0) throw Error(tp, "needs below_memory_bytes and a positive tokens");
        p.defaults.max_num_batched_tokens_tiers.push_back(tier);
    });
    if (const auto t = d.find("cuda_graph_size_steps"); t != d.end() && !t->is_null()) {
        if (!t->is_array() || t->empty() || t->size() > 16) throw Error(dp + ".cuda_graph_size_steps", "must be a list of [to, step] pairs");
        p.defaults.cuda_graph_size_steps.clear();
        for (const json& e : *t) {
            if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer() || e[1].get<std::int64_t>() <= 0 ||
                e[0].get<std::int64_t>() <= 4 || e[0].get<std::int64_t>() > (std::int64_t{1} << 20))
                throw Error(dp + ".cuda_graph_size_steps", "each entry is [to, step] with to above 4 and a positive step");
            p.defaults.cuda_graph_size_steps.emplace_back(e[0].get<std::int64_t>(), e[1].get<std::int64_t>());
        }
    }
    p.defaults.host_overlaps_gpu = flag_of(d, "host_overlaps_gpu", dp, false);
    p.defaults.host_overlaps_gpu_from = text_of(d, "host_overlaps_gpu_from", dp, false);
    p.defaults.cuda_graph_max_seq_len = count_of(d, "cuda_graph_max_seq_len", dp, 0);
    p.defaults.awq_marlin_from_version = version_of(d, "awq_marlin_from_version", dp);
    p.defaults.modelopt_kv_auto_from_version = version_of(d, "modelopt_kv_auto_from_version", dp);
    // Absent: vLLM applies the window, SGLang does not (as every bundled profile says).
    p.defaults.model_wide_sliding_window = flag_of(d, "model_wide_sliding_window", dp, p.engine == "vllm");
    p.defaults.hybrid_allocator_from_version = version_of(d, "hybrid_allocator_from_version", dp);
    if (const auto c = d.find("auto_chunked_prefill"); c != d.end() && !c->is_null()) {
        const std::string cp = dp + ".auto_chunked_prefill";
        p.defaults.auto_chunked_above_max_model_len = count_of(*c, "above_max_model_len", cp, 0);
        p.defaults.chunked_prefill_tokens = count_of(*c, "max_num_batched_tokens", cp, 0);
        p.defaults.chunked_prefill_tokens_before = count_of(*c, "max_num_batched_tokens_before", cp, 0);
        p.defaults.chunked_prefill_tokens_from = version_of(*c, "from_version", cp);
    }
    if (const auto t = d.find("mem_fraction_static_by_tp"); t != d.end()) {
        if (!t->is_array() || t->size() > 64) throw Error(dp + ".mem_fraction_static_by_tp", "must be a list of [min_tp, fraction] pairs");
        for (const json& e : *t) {
            if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() || !(e[1].get<double>() > 0 && e[1].get<double>() <= 1))
                throw Error(dp + ".mem_fraction_static_by_tp", "each entry is [min_tp, fraction in (0, 1]]");
            p.defaults.mem_fraction_static_by_tp.emplace_back(e[0].get<std::int64_t>(), e[1].get<double>());
        }
        std::sort(p.defaults.mem_fraction_static_by_tp.begin(), p.defaults.mem_fraction_static_by_tp.end(),
                  [](const auto& a, const auto& b) { return a.first > b.first; });
    }
    if (const auto l = d.find("large_gpu"); l != d.end() && !l->is_null()) {
        const std::string lp = dp + ".large_gpu";
        p.defaults.large_gpu_min_bytes = bytes_of(*l, "min_memory_bytes", lp, 0);
        p.defaults.large_gpu_max_num_seqs = count_of(*l, "max_num_seqs", lp, p.defaults.max_num_seqs);
        p.defaults.large_gpu_max_num_batched_tokens = count_of(*l, "max_num_batched_tokens", lp, p.defaults.max_num_batched_tokens);
        if (const auto e = l->find("exclude_gpu_ids_containing"); e != l->end() && e->is_array())
            for (const json& name : *e)
                if (name.is_string()) p.defaults.large_gpu_exclude.push_back(name.get<std::string>());
    }
    p.defaults.by_tp_max_memory_bytes = bytes_of(d, "mem_fraction_by_tp_max_memory_bytes", dp, 0);
    p.defaults.above_reserve_bytes = bytes_of(d, "mem_fraction_above_reserve_bytes", dp, 0);
    for_each_tier(d, "mem_fraction_reserve_tiers", dp, [&](const json& e, const std::string& tp) {
        EngineDefaults::ReserveTier tier;
        tier.below_bytes = bytes_of(e, "below_memory_bytes", tp, 0);
        tier.base_bytes = bytes_of(e, "reserve_bytes", tp, 0);
        tier.per_tp_bytes = bytes_of(e, "reserve_bytes_per_tp", tp, 0);
        tier.min_bytes = bytes_of(e, "min_reserve_bytes", tp, 0);
        if (!p.defaults.reserve_tiers.empty() && tier.below_bytes <= p.defaults.reserve_tiers.back().below_bytes)
            throw Error(tp + ".below_memory_bytes", "tiers must be in ascending order");
        p.defaults.reserve_tiers.push_back(tier);
    });
    if (p.defaults.max_num_seqs < 1 || p.defaults.max_num_batched_tokens < 1 || p.defaults.block_size_tokens < 1)
        throw Error(dp, "max_num_seqs, max_num_batched_tokens and block_size_tokens must be positive");
    const json& m = member(j, "memory", source);
    const std::string mp = source + ".memory";
    const std::string rule = text_of(m, "rule", mp);
    if (rule == "utilization_of_total") p.memory.rule = BudgetRule::UtilizationOfTotal;
    else if (rule == "static_fraction") p.memory.rule = BudgetRule::StaticFraction;
    else throw Error(mp + ".rule", "must be \"utilization_of_total\" or \"static_fraction\"");
    p.memory.profile_covers_max_model_len_without_chunking = flag_of(m, "profile_covers_max_model_len_without_chunking", mp, false);
    p.memory.sampler_in_profile = flag_of(m, "sampler_in_profile", mp, true);
    p.memory.cuda_graph_counted = flag_of(m, "cuda_graph_counted", mp, false);
    p.memory.native_sampler_bytes_per_logit = number_of(m, "native_sampler_bytes_per_logit", mp, 0.0, 0, 1000);
    p.memory.native_sampler_from_version = version_of(m, "native_sampler_from_version", mp);
    p.memory.native_sampler_below_version = version_of(m, "native_sampler_below_version", mp);
    p.memory.kv_tokens_logged_as_concurrency_from = version_of(m, "kv_tokens_logged_as_concurrency_from", mp);
    // Starting values before any fit (the fit file replaces them).
    p.memory = parse_memory_values(m, mp, p.memory);
    return p;
}

FittedParameters parse_fitted_parameters(std::string_view text, const std::string& source) {
    const json j = parse_untrusted_json(text, source);
    if (!j.is_object()) throw Error(source, "a fitted parameter file is a JSON object");
    if (text_of(j, "format", source) != "quantplan-engine-fit/1") throw Error(source + ".format", "expected \"quantplan-engine-fit/1\"");
    FittedParameters f;
    f.corpus_checksum = text_of(j, "corpus_checksum", source);
    f.corpus_records = count_of(j, "corpus_records", source, 0);
    const json& profiles = member(j, "profiles", source);
    if (!profiles.is_object()) throw Error(source + ".profiles", "must be an object keyed by profile id");
    for (const auto& [id, p] : profiles.items()) {
        const std::string path = source + ".profiles." + id;
        if (const auto s = p.find("step"); s != p.end()) f.step[id] = parse_step_terms(*s, path + ".step");
        if (const auto m = p.find("memory"); m != p.end()) f.memory[id] = parse_memory_values(*m, path + ".memory", MemoryRules{});
    }
    if (const auto k = j.find("kernels"); k != j.end()) {
        if (const auto a = k->find("any_gpu"); a != k->end()) f.kernels.any_gpu = parse_curves(*a, source + ".kernels.any_gpu");
        for (const char* level : {"by_gpu", "by_arch"}) {
            const auto l = k->find(level);
            if (l == k->end()) continue;
            if (!l->is_object()) throw Error(source + ".kernels." + level, "must be an object");
            auto& target = std::string(level) == "by_gpu" ? f.kernels.by_gpu : f.kernels.by_arch;
            for (const auto& [key, curves] : l->items())
                target[key] = parse_curves(curves, source + ".kernels." + level + "." + key);
        }
    }
    if (const auto b = j.find("bands"); b != j.end()) {
        if (!b->is_array()) throw Error(source + ".bands", "must be an array");
        for (std::size_t i = 0; i < b->size(); ++i) {
            const json& e = (*b)[i];
            const std::string path = source + ".bands[" + std::to_string(i) + "]";
            Band band;
            band.engine = text_of(e, "engine", path);
            band.family = text_of(e, "family", path);
            band.figure = parse_figure_class(text_of(e, "figure", path), path + ".figure");
            band.p10 = number_of(e, "p10", path, 0, -1, 100);
            band.p90 = number_of(e, "p90", path, 0, -1, 100);
            band.points = count_of(e, "points", path, 0);
            band.basis = text_of(e, "basis", path, false);
            if (band.p10 > band.p90) throw Error(path, "p10 must not exceed p90");
            f.bands.push_back(std::move(band));
        }
    }
    if (const auto pts = j.find("points"); pts != j.end()) {
        if (!pts->is_array() || pts->size() > 100000) throw Error(source + ".points", "must be an array");
        for (std::size_t i = 0; i < pts->size(); ++i) {
            const json& e = (*pts)[i];
            const std::string path = source + ".points[" + std::to_string(i) + "]";
            EvidencePoint p;
            p.id = text_of(e, "id", path);
            p.metric = text_of(e, "metric", path);
            p.engine = text_of(e, "engine", path);
            p.engine_version = text_of(e, "engine_version", path, false);
            p.family = text_of(e, "family", path);
            p.gpu = text_of(e, "gpu", path);
            p.arch = text_of(e, "arch", path, false);
            p.model = text_of(e, "model", path);
            p.model_type = text_of(e, "model_type", path, false);
            p.scheme = text_of(e, "scheme", path, false);
            p.batch = count_of(e, "batch", path, 1);
            p.input_tokens = count_of(e, "input_tokens", path, 0);
            p.output_tokens = count_of(e, "output_tokens", path, 0);
            p.measured = number_of(e, "measured", path, 0, 0, 1e15);
            p.fitted = number_of(e, "fitted", path, 0, 0, 1e15);
            p.loo = number_of(e, "loo", path, 0, 0, 1e15);
            f.points.push_back(std::move(p));
        }
    }
    return f;
}

std::string fitted_parameters_json(const FittedParameters& f) {
    ojson j;
    j["format"] = "quantplan-engine-fit/1";
    j["_comment"] = "Written by quantplan --fit-engines from the corpus under assets/measurements/ (docs/fidelity.md); do not edit by hand.";
    j["corpus_checksum"] = f.corpus_checksum;
    j["corpus_records"] = f.corpus_records;
    ojson profiles = ojson::object();
    std::vector<std::string> ids;
    for (const auto& [id, s] : f.step) ids.push_back(id);
    for (const auto& [id, m] : f.memory)
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (const std::string& id : ids) {
        ojson p;
        if (const auto s = f.step.find(id); s != f.step.end()) {
            p["step"]["fixed_step_s"] = s->second.fixed_step_s;
            p["step"]["per_layer_s"] = s->second.per_layer_s;
            p["step"]["eager_per_layer_s"] = s->second.eager_per_layer_s;
            p["step"]["ttft_overhead_s"] = s->second.ttft_overhead_s;
            p["step"]["ttft_overhead_in_process_s"] = s->second.ttft_overhead_in_process_s;
            p["step"]["eager_blend_exponent"] = s->second.eager_blend_exponent;
            ojson host = ojson::array();
            for (const EagerHostCost& c : s->second.eager_host)
                host.push_back(ojson{{"version", c.version}, {"per_layer_s", c.per_layer_s}, {"points", c.points}});
            p["step"]["eager_host"] = std::move(host);
            ojson scales = ojson::object();
            for (const auto& [family, v] : s->second.kernel_scale_by_family) scales[family] = v;
            p["step"]["kernel_scale_by_family"] = std::move(scales);
            p["step"]["fitted_points"] = s->second.fitted_points;
            p["step"]["basis"] = s->second.basis;
        }
        if (const auto m = f.memory.find(id); m != f.memory.end()) {
            p["memory"]["activation_scale"] = m->second.activation_scale;
            p["memory"]["non_torch_bytes"] = m->second.non_torch_bytes;
            p["memory"]["non_torch_bytes_per_extra_rank"] = m->second.non_torch_bytes_per_extra_rank;
            p["memory"]["cuda_graph_bytes"] = m->second.cuda_graph_bytes;
        }
        profiles[id] = std::move(p);
    }
    j["profiles"] = std::move(profiles);
    ojson by_gpu = ojson::object(), by_arch = ojson::object();
    for (const auto& [key, curves] : f.kernels.by_gpu) by_gpu[key] = curves_json(curves);
    for (const auto& [key, curves] : f.kernels.by_arch) by_arch[key] = curves_json(curves);
    j["kernels"]["by_gpu"] = std::move(by_gpu);
    j["kernels"]["by_arch"] = std::move(by_arch);
    j["kernels"]["any_gpu"] = curves_json(f.kernels.any_gpu);
    ojson bands = ojson::array();
    for (const Band& b : f.bands)
        bands.push_back({{"engine", b.engine}, {"family", b.family}, {"figure", figure_class_name(b.figure)}, {"p10", b.p10},
                         {"p90", b.p90}, {"points", b.points}, {"basis", b.basis}});
    j["bands"] = std::move(bands);
    ojson points = ojson::array();
    for (const EvidencePoint& p : f.points)
        points.push_back({{"id", p.id}, {"metric", p.metric}, {"engine", p.engine}, {"engine_version", p.engine_version},
                          {"family", p.family}, {"gpu", p.gpu}, {"arch", p.arch}, {"model", p.model}, {"model_type", p.model_type},
                          {"scheme", p.scheme}, {"batch", p.batch}, {"input_tokens", p.input_tokens}, {"output_tokens", p.output_tokens},
                          {"measured", p.measured}, {"fitted", p.fitted}, {"loo", p.loo}});
    j["points"] = std::move(points);
    return j.dump(1) + "\n";
}

void apply_fit(EngineCatalog& catalog, const FittedParameters& fit) {
    for (EngineProfile& p : catalog.profiles) {
        if (const auto s = fit.step.find(p.id); s != fit.step.end()) {
            p.step = s->second;
            p.fitted = true;
        }
        if (const auto m = fit.memory.find(p.id); m != fit.memory.end()) {
            // The terms the fit estimates; the others (0 in the fit file) keep the profile's values.
            p.memory.activation_scale = m->second.activation_scale;
            p.memory.non_torch_bytes = m->second.non_torch_bytes;
            if (m->second.non_torch_bytes_per_extra_rank > 0) p.memory.non_torch_bytes_per_extra_rank = m->second.non_torch_bytes_per_extra_rank;
            if (m->second.cuda_graph_bytes > 0) p.memory.cuda_graph_bytes = m->second.cuda_graph_bytes;
            p.fitted = true;
        }
    }
    catalog.kernels = fit.kernels;
    catalog.corpus_checksum = fit.corpus_checksum;
    catalog.bands = fit.bands;
    catalog.points = fit.points;
}

ServingFit parse_serving_fit(std::string_view text, const std::string& source) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Error(source, "is not a JSON object");
    if (text_of(j, "format", source) != "quantplan-serving-fit/1") throw Error(source + ".format", "must be quantplan-serving-fit/1");
    ServingFit f;
    f.corpus_checksum = text_of(j, "corpus_checksum", source);
    f.runs = count_of(j, "runs", source, 0);
    const json& profiles = member(j, "profiles", source);
    if (!profiles.is_object() || profiles.size() > 256) throw Error(source + ".profiles", "must be an object of at most 256 profiles");
    for (const auto& [id, t] : profiles.items()) {
        const std::string path = source + ".profiles." + id;
        if (!t.is_object()) throw Error(path, "must be an object");
        ServingTerms s;
        s.host_per_sequence_s = number_of(t, "host_per_sequence_s", path, 0, 0, 1);
        s.host_per_prefill_sequence_s = number_of(t, "host_per_prefill_sequence_s", path, 0, 0, 10);
        s.frontend_latency_s = number_of(t, "frontend_latency_s", path, 0, 0, 100);
        s.frontend_serial_s = number_of(t, "frontend_serial_s", path, 0, 0, 10);
        s.runs = count_of(t, "runs", path, 0);
        s.basis = text_of(t, "basis", path, false);
        s.fitted = true;
        f.terms[id] = s;
    }
    if (const auto b = j.find("bands"); b != j.end()) {
        if (!b->is_array() || b->size() > 4096) throw Error(source + ".bands", "must be an array");
        for (std::size_t i = 0; i < b->size(); ++i) {
            const std::string path = source + ".bands[" + std::to_string(i) + "]";
            ServingBand band;
            band.engine = text_of((*b)[i], "engine", path);
            band.figure = text_of((*b)[i], "figure", path);
            band.p10 = number_of((*b)[i], "p10", path, 0, -10, 100);
            band.p90 = number_of((*b)[i], "p90", path, 0, -10, 100);
            if (band.p90 < band.p10) throw Error(path, "p90 is below p10");
            band.points = count_of((*b)[i], "points", path, 0);
            band.basis = text_of((*b)[i], "basis", path, false);
            f.bands.push_back(std::move(band));
        }
    }
    if (const auto m = j.find("medians"); m != j.end()) {
        if (!m->is_object() || m->size() > 64) throw Error(source + ".medians", "must be an object");
        for (const auto& [figure, v] : m->items()) {
            const std::string path = source + ".medians." + figure;
            f.medians[figure] = {number_of(v, "loo", path, 0, 0, 100), number_of(v, "loso", path, 0, 0, 100)};
        }
    }
    return f;
}

std::string serving_fit_json(const ServingFit& f) {
    ojson j;
    j["format"] = "quantplan-serving-fit/1";
    j["_comment"] = "Written by quantplan --fit-serving from the serving runs under assets/serving-runs/ (docs/capacity.md); do not edit by hand.";
    j["corpus_checksum"] = f.corpus_checksum;
    j["runs"] = f.runs;
    ojson profiles = ojson::object();
    for (const auto& [id, t] : f.terms)
        profiles[id] = ojson{{"host_per_sequence_s", t.host_per_sequence_s}, {"host_per_prefill_sequence_s", t.host_per_prefill_sequence_s},
                             {"frontend_latency_s", t.frontend_latency_s}, {"frontend_serial_s", t.frontend_serial_s}, {"runs", t.runs},
                             {"basis", t.basis}};
    j["profiles"] = std::move(profiles);
    ojson bands = ojson::array();
    for (const ServingBand& b : f.bands)
        bands.push_back(ojson{{"engine", b.engine}, {"figure", b.figure}, {"p10", b.p10}, {"p90", b.p90}, {"points", b.points}, {"basis", b.basis}});
    j["bands"] = std::move(bands);
    ojson medians = ojson::object();
    for (const auto& [figure, v] : f.medians) medians[figure] = ojson{{"loo", v.first}, {"loso", v.second}};
    j["medians"] = std::move(medians);
    return j.dump(1) + "\n";
}

void apply_serving_fit(EngineCatalog& catalog, const ServingFit& fit) {
    for (EngineProfile& p : catalog.profiles)
        if (const auto t = fit.terms.find(p.id); t != fit.terms.end()) p.serving = t->second;
    catalog.serving_bands = fit.bands;
    catalog.serving_checksum = fit.corpus_checksum;
}

const ServingBand* find_serving_band(const std::vector<ServingBand>& bands, const std::string& engine, const std::string& figure) {
    const ServingBand* any = nullptr;
    for (const ServingBand& b : bands) {
        if (b.figure != figure) continue;
        if (b.engine == engine) return &b;
        if (b.engine == "*") any = &b;
    }
    return any;
}

EngineCatalog load_engine_catalog(const std::filesystem::path& profiles_dir, const std::filesystem::path& fit_file) {
    EngineCatalog c;
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(profiles_dir, ec))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    if (ec) throw Error(profiles_dir.string(), "cannot list the engine profiles: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) c.profiles.push_back(parse_engine_profile(read_text_file(f, "engine profile"), f.filename().string()));
    std::sort(c.profiles.begin(), c.profiles.end(), [](const EngineProfile& a, const EngineProfile& b) {
        return a.engine != b.engine ? a.engine < b.engine : compare_versions(a.min_version, b.min_version) < 0;
    });
    for (const EngineProfile& p : c.profiles) {
        if (p.step_terms_from.empty()) continue;
        const auto from = std::find_if(c.profiles.begin(), c.profiles.end(), [&](const EngineProfile& q) { return q.id == p.step_terms_from; });
        if (from == c.profiles.end() || from->engine != p.engine || from->id == p.id)
            throw Error(p.id + ".step_terms_from", "names no other " + p.engine + " profile ('" + clip_text(p.step_terms_from, 40) + "')");
    }
    if (std::filesystem::exists(fit_file, ec)) apply_fit(c, parse_fitted_parameters(read_text_file(fit_file, "fitted parameter file"), fit_file.filename().string()));
    return c;
}

EngineChoice resolve_engine_profile(const EngineCatalog& catalog, std::string_view argument) {
    EngineChoice choice;
    choice.asked = std::string(argument);
    const std::size_t at = argument.find('@');
    choice.engine = std::string(argument.substr(0, at));
    for (char& ch : choice.engine) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (at != std::string_view::npos) choice.version_asked = std::string(argument.substr(at + 1));
    std::vector<const EngineProfile*> of_engine;
    for (const EngineProfile& p : catalog.profiles)
        if (p.engine == choice.engine) of_engine.push_back(&p);
    if (of_engine.empty()) throw Error("--engine", "unknown engine '" + clip_text(choice.engine, 40) + "' (expected vllm or sglang, optionally @VERSION)");
    if (choice.version_asked.empty()) {
        choice.profile = of_engine.back();  // ordered by min_version: the newest
        return choice;
    }
    const EngineVersion v = parse_engine_version(choice.version_asked, "--engine");
    for (const EngineProfile* p : of_engine)
        if (p->covers(v)) {
            choice.profile = p;
            return choice;
        }
    std::string ranges;
    for (const EngineProfile* p : of_engine)
        ranges += (ranges.empty() ? "" : ", ") + p->min_version.text + (p->below_version ? " to before " + p->below_version->text : " on");
    throw Error("--engine", choice.engine + " " + choice.version_asked + " is covered by no profile (profiles cover " + ranges + ")");
}

}  // namespace quantplan::engine
