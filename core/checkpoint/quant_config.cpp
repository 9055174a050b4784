#include "core/checkpoint/quant_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"

namespace quantplan {
namespace {

using Json = nlohmann::ordered_json;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A JSON object's member, or nullptr when absent or null.
const Json* member(const Json& j, std::string_view key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(std::string(key));
    if (it == j.end() || it->is_null()) return nullptr;
    return &*it;
}

// Reads fields of one JSON object, naming "<where>.<key>" in errors.
class Fields {
public:
    Fields(const Json& j, std::string where) : j_(j), where_(std::move(where)) {
        if (!j_.is_object()) throw Error(where_, "must be a JSON object");
    }

    const Json* find(std::string_view key) const { return member(j_, key); }
    bool has(std::string_view key) const { return find(key) != nullptr; }
    std::string path(std::string_view key) const { return where_ + "." + std::string(key); }
    const std::string& where() const { return where_; }

    // An integer (integral floats such as 4.0 accepted); `fallback` when absent.
    std::int64_t integer(std::string_view key, std::int64_t fallback) const {
        const Json* v = find(key);
        if (!v) return fallback;
        if (v->is_number_integer()) return v->get<std::int64_t>();
        if (v->is_number_unsigned()) {
            if (v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT32_MAX)) throw Error(path(key), "too large");
            return v->get<std::int64_t>();
        }
        if (v->is_number_float()) {
            const double d = v->get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e9) return static_cast<std::int64_t>(d);
        }
        throw Error(path(key), "must be an integer, got " + clip_text(v->dump(), 40));
    }

    bool boolean(std::string_view key, bool fallback) const {
        const Json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) throw Error(path(key), "must be true or false, got " + clip_text(v->dump(), 40));
        return v->get<bool>();
    }

    // A string, lower-cased; `fallback` when absent.
    std::string text(std::string_view key, std::string_view fallback) const {
        const Json* v = find(key);
        if (!v) return std::string(fallback);
        if (!v->is_string()) throw Error(path(key), "must be a string, got " + clip_text(v->dump(), 40));
        return lower(v->get<std::string>());
    }

    // A list of strings (a lone string is a list of one); empty when absent.
    std::vector<std::string> strings(std::string_view key) const {
        std::vector<std::string> out;
        const Json* v = find(key);
        if (!v) return out;
        if (v->is_string()) return {v->get<std::string>()};
        if (!v->is_array()) throw Error(path(key), "must be a list of strings");
        for (const Json& e : *v) {
            if (!e.is_string()) throw Error(path(key), "must be a list of strings, holds " + clip_text(e.dump(), 40));
            out.push_back(e.get<std::string>());
        }
        return out;
    }

private:
    const Json& j_;
    std::string where_;
};

// Largest number of entries read from one target or ignore list.
constexpr std::size_t kMaxListEntries = 100000;

ModuleMatcher matcher(MatchKind kind, const std::string& text, const std::string& field) {
    ModuleMatcher m;
    m.kind = kind;
    m.text = text;
    if (kind == MatchKind::Regex) m.regex = NamePattern::compile(text, field);
    return m;
}

// compressed-tensors targets and ignore entries: "re:<regex>", a class name, or a module name.
ModuleMatcher ct_matcher(const std::string& entry, const std::string& field) {
    if (entry.rfind("re:", 0) == 0) return matcher(MatchKind::Regex, entry.substr(3), field);
    const bool class_like = !entry.empty() && std::isupper(static_cast<unsigned char>(entry[0])) && entry.find('.') == std::string::npos;
    return matcher(class_like ? MatchKind::ClassName : MatchKind::Exact, entry, field);
}

std::vector<ModuleMatcher> matchers(const std::vector<std::string>& entries, MatchKind kind, const std::string& field) {
    if (entries.size() > kMaxListEntries) throw Error(field, "lists more than " + std::to_string(kMaxListEntries) + " modules");
    std::vector<ModuleMatcher> out;
    for (const std::string& e : entries) out.push_back(matcher(kind, e, field));
    return out;
}

void set_eligible(QuantizationConfig& c, std::initializer_list<TensorRole> roles) {
    c.eligible.fill(false);
    for (TensorRole r : roles) c.eligible[static_cast<std::size_t>(r)] = true;
    // A Mamba2 mixer's in/out projections are token-mixer linears, quantized where attention's are.
    c.eligible[static_cast<std::size_t>(TensorRole::MambaLinear)] = c.eligible[static_cast<std::size_t>(TensorRole::AttentionLinear)];
}

LayerCoverage coverage_of(const QuantizationConfig& c) {
    const auto e = [&](TensorRole r) { return c.eligible[static_cast<std::size_t>(r)]; };
    LayerCoverage cov;
    cov.attention = e(TensorRole::AttentionLinear);
    cov.mlp = e(TensorRole::MlpLinear);
    cov.moe_experts = e(TensorRole::ExpertLinear);
    cov.lm_head = e(TensorRole::LmHead);
    cov.embeddings = e(TensorRole::Embedding);
    cov.routers = e(TensorRole::Router);
    return cov;
}

GroupShape group_of(std::int64_t group_size) { return group_size < 0 ? GroupShape::per_row() : GroupShape::per_group(group_size); }

std::string group_words(std::int64_t group_size) { return group_size < 0 ? "per channel" : "g" + std::to_string(group_size); }

// A weight-only integer scheme (AWQ, GPTQ, compressed-tensors W<b>A16).
Scheme int_weight_only(int bits, std::int64_t group_size, bool symmetric, DType scale_dtype, DType model_dtype, CheckpointLayout layout,
                       const std::string& field) {
    const auto storage = int_dtype_with_bits(bits);
    if (!storage || bits > 8) throw Error(field, "integer weights of " + std::to_string(bits) + " bits are not a format quantplan knows (2 to 8)");
    Scheme s;
    s.weights.storage = *storage;
    s.weights.scale = ScaleDesc{scale_dtype, true, group_of(group_size)};
    s.weights.symmetric = symmetric;
    s.weights.zero_point_dtype = *storage;
    s.activation_dtype = model_dtype;
    s.layout = layout;
    return s;
}

void check_group_size(std::int64_t g, const std::string& field) {
    if (g == 0 || g < -1) throw Error(field, "group size must be positive or -1 (one group per row), got " + std::to_string(g));
    if (g > (std::int64_t{1} << 24)) throw Error(field, "group size " + std::to_string(g) + " is larger than any layer");
}

// ---------------------------------------------------------------- AWQ (reference §1)
void parse_awq(QuantizationConfig& c, const Fields& f) {
    const std::int64_t bits = f.integer("bits", f.integer("w_bit", 4));
    if (bits != 4) throw Error(f.path("bits"), "AutoAWQ packs 4-bit weights only, got " + std::to_string(bits));
    const std::int64_t group = f.integer("group_size", f.integer("q_group_size", 128));
    check_group_size(group, f.path("group_size"));
    const bool zero_point = f.boolean("zero_point", true);
    std::string version = f.text("version", "gemm");
    CheckpointLayout layout = CheckpointLayout::AutoAwqGemm;
    if (version == "gemv") {
        layout = CheckpointLayout::AutoAwqGemv;
        if (group >= 0 && group < 32) throw Error(f.path("group_size"), "AutoAWQ GEMV supports group sizes 32, 64 and >= 128, got " + std::to_string(group));
    } else if (version != "gemm") {
        c.notes.push_back("AWQ version '" + version + "' packs differently from GEMM; its bytes are predicted with the GEMM packing");
    }
    set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear, TensorRole::Router});
    c.ignore = matchers(f.strings("modules_to_not_convert"), MatchKind::Substring, f.path("modules_to_not_convert"));
    QuantRule r;
    r.name = "default";
    r.format = version;
    r.scheme = int_weight_only(4, group, !zero_point, DType::Fp16, c.model_dtype, layout, f.path("bits"));
    r.scheme.covers = coverage_of(c);
    r.description = "int4 " + group_words(group) + (zero_point ? " with zero points" : " symmetric") + ", AutoAWQ " + version;
    c.rules.push_back(std::move(r));
    c.facts.bits = 4;
    c.facts.group_size = group;
    c.facts.zero_point = zero_point;
    c.facts.symmetric = !zero_point;
    c.facts.version = version;
}

// ---------------------------------------------------------------- GPTQ (reference §2)
void parse_gptq(QuantizationConfig& c, const Fields& f) {
    const std::int64_t bits = f.integer("bits", 4);
    if (bits != 2 && bits != 3 && bits != 4 && bits != 8) throw Error(f.path("bits"), "GPTQ packs 2, 3, 4 or 8 bits, got " + std::to_string(bits));
    const std::int64_t group = f.integer("group_size", 128);
    check_group_size(group, f.path("group_size"));
    const bool sym = f.boolean("sym", true);
    const bool desc_act = f.boolean("desc_act", false);
    std::string format = f.text("checkpoint_format", f.boolean("is_marlin_format", false) ? "marlin" : "gptq");
    if (format != "gptq" && format != "gptq_v2")
        c.notes.push_back("GPTQ checkpoint_format '" + format + "' repacks the weights; bytes are predicted with the GPTQ packing");
    const std::string pack = f.text("pack_dtype", "int32");
    if (pack != "int32" && pack != "torch.int32")
        c.notes.push_back("GPTQ pack_dtype '" + pack + "': bytes are predicted with int32 packing words");
    const bool lm_head = f.boolean("lm_head", false);
    if (lm_head)
        set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear, TensorRole::LmHead});
    else
        set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear});
    const auto make = [&](std::int64_t b, std::int64_t g, bool s, bool act, const std::string& field) {
        QuantRule r;
        r.format = format;
        r.scheme = int_weight_only(static_cast<int>(b), g, s, DType::Fp16, c.model_dtype, CheckpointLayout::Gptq, field);
        r.scheme.covers = coverage_of(c);
        r.description = "int" + std::to_string(b) + " " + group_words(g) + (s ? " symmetric" : " with zero points") + (act ? ", act-order" : "") + ", GPTQ";
        return r;
    };
    // GPTQModel "dynamic": per-module overrides ("+:" or bare regex) and exclusions ("-:"), first match wins.
    if (const Json* dyn = f.find("dynamic")) {
        if (!dyn->is_object()) throw Error(f.path("dynamic"), "must be an object of regex -> overrides");
        if (dyn->size() > kMaxListEntries) throw Error(f.path("dynamic"), "has too many entries");
        for (auto it = dyn->begin(); it != dyn->end(); ++it) {
            const std::string key = it.key();
            const std::string field = f.path("dynamic") + "[" + clip_text(key, 60) + "]";
            if (key.rfind("-:", 0) == 0) {
                QuantRule r;
                r.name = "dynamic " + key;
                r.skip = true;
                r.targets.push_back(matcher(MatchKind::Regex, key.substr(2), field));
                r.description = "left unquantized (GPTQModel dynamic)";
                c.rules.push_back(std::move(r));
                continue;
            }
            const Fields o(*it, field);
            const std::int64_t b = o.integer("bits", bits);
            const std::int64_t g = o.integer("group_size", group);
            check_group_size(g, o.path("group_size"));
            if (b != 2 && b != 3 && b != 4 && b != 8) throw Error(o.path("bits"), "GPTQ packs 2, 3, 4 or 8 bits, got " + std::to_string(b));
            QuantRule r = make(b, g, o.boolean("sym", sym), o.boolean("desc_act", desc_act), o.path("bits"));
            r.name = "dynamic " + key;
            r.targets.push_back(matcher(MatchKind::Regex, key.rfind("+:", 0) == 0 ? key.substr(2) : key, field));
            c.rules.push_back(std::move(r));
        }
    }
    QuantRule r = make(bits, group, sym, desc_act, f.path("bits"));
    r.name = "default";
    c.rules.push_back(std::move(r));
    c.facts.bits = static_cast<int>(bits);
    c.facts.group_size = group;
    c.facts.symmetric = sym;
    c.facts.zero_point = !sym;
    c.facts.desc_act = desc_act;
    c.facts.checkpoint_format = format;
}

// ---------------------------------------------------------------- compressed-tensors (reference §3)

// A dtype string of compressed-tensors ("torch.float8_e4m3fn", "bfloat16"), or nullopt.
std::optional<DType> torch_dtype(std::string s) {
    s = lower(s);
    if (s.rfind("torch.", 0) == 0) s = s.substr(6);
    if (s == "uint8") return DType::Fp8E8M0;  // MX scales are stored as uint8 exponents
    return parse_dtype(s);
}

// One quantizer (weights or activations) of a config group.
struct CtArgs {
    bool is_float = false;
    int bits = 8;
    std::string strategy;
    std::int64_t group_size = 0;
    std::int64_t block_rows = 0, block_cols = 0;
    bool symmetric = true;
    bool dynamic = false;       // computed at run time
    bool dynamic_local = false; // "local": per-group scales dynamic, global scale static (NVFP4 activations)
    std::string actorder;
    std::optional<DType> scale_dtype;
};

CtArgs parse_ct_args(const Fields& f) {
    CtArgs a;
    a.is_float = f.text("type", "int") == "float";
    a.bits = static_cast<int>(f.integer("num_bits", 8));
    a.group_size = f.integer("group_size", 0);
    a.strategy = f.text("strategy", a.group_size > 0 ? "group" : "tensor");
    a.symmetric = f.boolean("symmetric", true);
    if (const Json* d = f.find("dynamic")) {
        if (d->is_boolean()) a.dynamic = d->get<bool>();
        else if (d->is_string() && lower(d->get<std::string>()) == "local") a.dynamic_local = true;
        else throw Error(f.path("dynamic"), "must be true, false or \"local\"");
    }
    if (const Json* o = f.find("actorder")) {
        if (o->is_string()) a.actorder = lower(o->get<std::string>());
        else if (o->is_boolean()) a.actorder = o->get<bool>() ? "group" : "";
        else throw Error(f.path("actorder"), "must be a string or a boolean");
    }
    if (const Json* b = f.find("block_structure")) {
        if (b->is_array() && b->size() == 2 && (*b)[0].is_number_integer() && (*b)[1].is_number_integer()) {
            a.block_rows = (*b)[0].get<std::int64_t>();
            a.block_cols = (*b)[1].get<std::int64_t>();
        } else if (b->is_string()) {
            const std::string s = lower(b->get<std::string>());
            const std::size_t x = s.find('x');
            try {
                if (x == std::string::npos) throw std::invalid_argument("no x");
                a.block_rows = std::stoll(s.substr(0, x));
                a.block_cols = std::stoll(s.substr(x + 1));
            } catch (const std::logic_error&) {
                throw Error(f.path("block_structure"), "must be [rows, cols] or \"RxC\"");
            }
        } else {
            throw Error(f.path("block_structure"), "must be [rows, cols] or \"RxC\"");
        }
        if (a.block_rows <= 0 || a.block_cols <= 0 || a.block_rows > (1 << 24) || a.block_cols > (1 << 24))
            throw Error(f.path("block_structure"), "block sides must be positive");
    }
    if (const Json* s = f.find("scale_dtype"); s && s->is_string()) a.scale_dtype = torch_dtype(s->get<std::string>());
    if (a.bits < 1 || a.bits > 16) throw Error(f.path("num_bits"), "must be 1 to 16, got " + std::to_string(a.bits));
    if ((a.strategy == "group" || a.strategy == "tensor_group") && a.group_size <= 0)
        throw Error(f.path("group_size"), "strategy '" + a.strategy + "' needs a positive group_size");
    if (a.group_size > (std::int64_t{1} << 24)) throw Error(f.path("group_size"), "larger than any layer");
    if (a.strategy == "block" && a.block_rows == 0) throw Error(f.path("block_structure"), "strategy 'block' needs block_structure");
    return a;
}

GroupShape ct_group(const CtArgs& a, const std::string& field) {
    if (a.strategy == "tensor") return GroupShape::per_tensor();
    if (a.strategy == "channel" || a.strategy == "token") return GroupShape::per_row();
    if (a.strategy == "group" || a.strategy == "tensor_group") return GroupShape::per_group(a.group_size);
    if (a.strategy == "block") return GroupShape::block(a.block_rows, a.block_cols);
    throw Error(field, "strategy '" + a.strategy + "' is not one quantplan models (tensor, channel, group, tensor_group, block, token)");
}

Scheme ct_scheme(const CtArgs& w, const std::optional<CtArgs>& act, const std::string& format, DType model_dtype, const std::string& field,
                 std::vector<std::string>& notes) {
    Scheme s;
    s.activation_dtype = model_dtype;
    const GroupShape group = ct_group(w, field + ".weights.strategy");
    if (w.is_float) {
        if (w.bits == 8) {
            s.weights.storage = DType::Fp8E4M3;
            s.weights.scale = ScaleDesc{w.scale_dtype.value_or(model_dtype), true, group};
        } else if (w.bits == 4) {
            s.weights.storage = DType::Fp4E2M1;
            const bool mx = group.is_per_group() && group.cols == 32;
            s.weights.scale = ScaleDesc{w.scale_dtype.value_or(mx ? DType::Fp8E8M0 : DType::Fp8E4M3), true, group};
            if (w.strategy == "tensor_group") s.weights.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};  // weight_global_scale
        } else {
            throw Error(field + ".weights.num_bits", "float weights are 8 or 4 bits, got " + std::to_string(w.bits));
        }
        if (!w.symmetric) throw Error(field + ".weights.symmetric", "float weights carry no zero point");
        s.weights.symmetric = true;
    } else {
        const auto storage = int_dtype_with_bits(w.bits);
        if (!storage || w.bits > 8) throw Error(field + ".weights.num_bits", "integer weights are 2 to 8 bits, got " + std::to_string(w.bits));
        s.weights.storage = *storage;
        s.weights.scale = ScaleDesc{w.scale_dtype.value_or(model_dtype), true, group};
        s.weights.symmetric = w.symmetric;
        s.weights.zero_point_dtype = *storage;
    }
    // Layout of the format (reference §3 table).
    if (format == "pack-quantized") {
        if (w.is_float || 32 % w.bits != 0) throw Error(field + ".format", "pack-quantized packs 2, 4 or 8-bit integers, got " + std::string(w.is_float ? "float " : "int") + std::to_string(w.bits));
        s.layout = w.actorder == "group" ? CheckpointLayout::CompressedTensorsPackedGIdx : CheckpointLayout::CompressedTensorsPacked;
    } else if (format == "naive-quantized" || (format == "int-quantized" && !w.is_float && w.bits < 8)) {
        s.layout = CheckpointLayout::UnpackedBytes;
    } else if (format == "int-quantized" || format == "float-quantized" || format == "nvfp4-pack-quantized" || format == "mxfp4-pack-quantized") {
        s.layout = CheckpointLayout::Generic;
    } else {
        notes.push_back("compressed-tensors format '" + format + "' is not modelled; bytes are predicted with dense packing");
        s.layout = CheckpointLayout::Generic;
    }
    if (w.actorder == "group" && s.layout != CheckpointLayout::CompressedTensorsPackedGIdx)
        notes.push_back("actorder 'group' outside pack-quantized: weight_g_idx is not predicted");
    if (act) {
        const CtArgs& a = *act;
        TensorQuant q;
        if (a.is_float && a.bits == 8) q.storage = DType::Fp8E4M3;
        else if (a.is_float && a.bits == 4) q.storage = DType::Fp4E2M1;
        else if (!a.is_float && a.bits == 8) q.storage = DType::Int8;
        else if (!a.is_float && a.bits == 4) q.storage = DType::Int4;
        else throw Error(field + ".input_activations.num_bits", "activations of " + std::to_string(a.bits) + " bits are not modelled");
        if (q.storage == DType::Fp4E2M1) {
            // NVFP4 activations: per-16 e4m3 scales computed at run time, a calibrated fp32 global scale.
            q.scale = ScaleDesc{DType::Fp8E4M3, false, GroupShape::per_group(a.group_size > 0 ? a.group_size : 16)};
            if (!a.dynamic) q.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
        } else if (a.dynamic || a.dynamic_local) {
            q.scale = ScaleDesc{DType::Fp32, false, a.strategy == "tensor" ? GroupShape::per_tensor() : ct_group(a, field + ".input_activations.strategy")};
        } else {
            q.scale = ScaleDesc{a.scale_dtype.value_or(model_dtype), true, GroupShape::per_tensor()};  // input_scale [1]
            if (a.strategy != "tensor") notes.push_back("static activation strategy '" + a.strategy + "' is predicted as one scale per tensor");
        }
        q.symmetric = a.symmetric;
        q.zero_point_dtype = DType::Int8;  // input_zero_point
        s.activations = q;
        s.accumulation = dtype_is_integer(q.storage) ? DType::Int32 : DType::Fp32;
    }
    return s;
}

std::string ct_description(const Scheme& s, const std::string& format, const CtArgs& w) {
    std::string d = std::string(dtype_name(s.weights.storage)) + " weights";
    const GroupShape& g = s.weights.scale->group;
    d += g.is_per_tensor() ? " per tensor" : g.is_per_row() ? " per channel" : g.is_block() ? " block " + std::to_string(g.rows) + "x" + std::to_string(g.cols) : " g" + std::to_string(g.cols);
    if (!s.weights.symmetric) d += " with zero points";
    if (w.actorder == "group") d += ", act-order group";
    if (s.activations) {
        d += ", " + std::string(dtype_name(s.activations->storage)) + " activations";
        d += (s.activations->scale && s.activations->scale->is_static) ? " (static)" : " (dynamic)";
    }
    return d + ", " + format;
}

// A compressed-tensors style kv_cache_scheme (llm-compressor; ModelOpt's config.json form too).
KvCacheDeclaration kv_cache_scheme_of(const Fields& k, DType model_dtype) {
    KvCacheDeclaration d;
    d.type = k.text("type", "int");
    d.num_bits = static_cast<int>(k.integer("num_bits", 8));
    d.strategy = k.text("strategy", "tensor");
    d.symmetric = k.boolean("symmetric", true);
    if (const Json* dyn = k.find("dynamic"); dyn && dyn->is_boolean()) d.dynamic = dyn->get<bool>();
    d.scale_dtype = model_dtype;  // k_scale / v_scale follow the layer dtype
    if (d.type == "float" && d.num_bits == 8) d.format = parse_kv_format("fp8");
    return d;
}

void parse_compressed_tensors(QuantizationConfig& c, const Fields& f) {
    const std::string global_format = f.text("format", "dense");
    set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear,
                     TensorRole::Router, TensorRole::LmHead, TensorRole::Embedding});
    for (const std::string& e : f.strings("ignore")) c.ignore.push_back(ct_matcher(e, f.path("ignore")));
    if (c.ignore.size() > kMaxListEntries) throw Error(f.path("ignore"), "lists too many modules");
    const Json* groups = f.find("config_groups");
    if (groups && !groups->is_object()) throw Error(f.path("config_groups"), "must be an object of groups");
    bool first = true;
    if (groups) {
        for (auto it = groups->begin(); it != groups->end(); ++it) {
            const std::string gpath = f.path("config_groups") + "." + clip_text(it.key(), 60);
            const Fields g(*it, gpath);
            const Json* weights = g.find("weights");
            if (!weights) {
                c.notes.push_back("config group '" + it.key() + "' quantizes no weights: its modules are predicted unquantized");
                continue;
            }
            const CtArgs w = parse_ct_args(Fields(*weights, gpath + ".weights"));
            std::optional<CtArgs> act;
            if (const Json* a = g.find("input_activations")) act = parse_ct_args(Fields(*a, gpath + ".input_activations"));
            const std::string format = g.text("format", global_format);
            QuantRule r;
            r.name = it.key();
            r.format = format;
            r.scheme = ct_scheme(w, act, format, c.model_dtype, gpath, c.notes);
            r.scheme.covers = coverage_of(c);
            r.description = ct_description(r.scheme, format, w);
            const std::vector<std::string> targets = g.strings("targets");
            if (targets.empty()) r.targets.push_back(matcher(MatchKind::ClassName, "Linear", gpath));
            for (const std::string& t : targets) r.targets.push_back(ct_matcher(t, gpath + ".targets"));
            if (first) {
                c.facts.bits = w.bits;
                c.facts.group_size = r.scheme.weights.scale->group.is_per_group() ? r.scheme.weights.scale->group.cols : r.scheme.weights.scale->group.is_per_row() ? -1 : 0;
                c.facts.symmetric = w.symmetric;
                c.facts.zero_point = !w.symmetric;
                c.facts.weight_float = w.is_float;
                c.facts.block = w.strategy == "block";
                c.facts.desc_act = w.actorder == "group";
                c.facts.format = format;
                if (r.scheme.activations) {
                    const DType a = r.scheme.activations->storage;
                    c.facts.activation = a == DType::Int8 ? "int8" : a == DType::Fp4E2M1 ? "fp4" : a == DType::Int4 ? "int4" : "fp8";
                    c.facts.activation_static = r.scheme.activations->scale && r.scheme.activations->scale->is_static;
                }
                first = false;
            }
            c.rules.push_back(std::move(r));
        }
    }
    if (c.rules.empty()) c.notes.push_back("compressed-tensors config without weight groups: every module is predicted unquantized");
    if (const Json* kv = f.find("kv_cache_scheme")) c.kv_cache = kv_cache_scheme_of(Fields(*kv, f.path("kv_cache_scheme")), c.model_dtype);
}

// ---------------------------------------------------------------- fp8 (reference §4)
void parse_fp8(QuantizationConfig& c, const Fields& f) {
    const std::string act = f.text("activation_scheme", "dynamic");
    if (act != "dynamic" && act != "static") throw Error(f.path("activation_scheme"), "must be \"dynamic\" or \"static\", got '" + act + "'");
    const std::string fmt = f.text("fmt", "e4m3");
    std::optional<std::pair<std::int64_t, std::int64_t>> block;
    if (const Json* b = f.find("weight_block_size")) {
        if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_integer() || !(*b)[1].is_number_integer())
            throw Error(f.path("weight_block_size"), "must be [rows, cols]");
        const std::int64_t r = (*b)[0].get<std::int64_t>(), k = (*b)[1].get<std::int64_t>();
        if (r <= 0 || k <= 0 || r > (1 << 24) || k > (1 << 24)) throw Error(f.path("weight_block_size"), "block sides must be positive");
        block = {r, k};
    }
    if (block && act == "static")
        throw Error(f.path("activation_scheme"), "static activation scales do not pair with weight_block_size (vLLM fp8.py rejects the combination)");
    set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear, TensorRole::Router});
    c.ignore = matchers(f.strings("ignored_layers"), MatchKind::Exact, f.path("ignored_layers"));
    for (ModuleMatcher& m : matchers(f.strings("modules_to_not_convert"), MatchKind::Substring, f.path("modules_to_not_convert")))
        c.ignore.push_back(std::move(m));
    Scheme s;
    s.weights.storage = fmt == "e5m2" ? DType::Fp8E5M2 : DType::Fp8E4M3;
    if (block) {
        // weight_scale_inv [cdiv(N,bn), cdiv(K,bk)]; its dtype is not declared (DeepSeek-V3 F32, Qwen3-FP8 BF16).
        const bool deepseek = c.model_type == "deepseek_v3" || c.model_type == "kimi_k2";
        const DType scale_dtype = deepseek ? DType::Fp32 : c.model_dtype;
        s.weights.scale = ScaleDesc{scale_dtype, true, GroupShape::block(block->first, block->second)};
        c.notes.push_back(deepseek ? "fp8 block scales (weight_scale_inv) are predicted in F32, as DeepSeek-V3's own checkpoint stores them (reference §4)"
                                   : "fp8 block scales (weight_scale_inv) are predicted in the model dtype " + std::string(dtype_name(c.model_dtype)) +
                                         "; DeepSeek-V3 stores F32, Qwen3-FP8 BF16 (reference §4)");
    } else {
        s.weights.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
    }
    TensorQuant a;
    a.storage = s.weights.storage;
    if (act == "static") a.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
    else if (block) a.scale = ScaleDesc{DType::Fp32, false, GroupShape::per_group(block->second)};
    else a.scale = ScaleDesc{DType::Fp32, false, GroupShape::per_row()};
    s.activations = a;
    s.activation_dtype = c.model_dtype;
    s.covers = coverage_of(c);
    QuantRule r;
    r.name = "default";
    r.format = block ? "block" : "per-tensor";
    r.scheme = s;
    r.description = std::string(dtype_name(s.weights.storage)) + " weights " +
                    (block ? "block " + std::to_string(block->first) + "x" + std::to_string(block->second) : std::string("per tensor")) + ", " + act +
                    " fp8 activations";
    c.rules.push_back(std::move(r));
    c.facts.bits = 8;
    c.facts.weight_float = true;
    c.facts.block = block.has_value();
    c.facts.group_size = block ? block->second : 0;
    c.facts.activation = "fp8";
    c.facts.activation_static = act == "static";
}

// ---------------------------------------------------------------- ModelOpt (reference §5)
void parse_modelopt(QuantizationConfig& c, const Json& root, const std::string& where) {
    // hf_quant_config.json nests the fields under "quantization"; config.json writes them flat.
    const Json* nested = member(root, "quantization");
    const Fields f(nested ? *nested : root, nested ? where + ".quantization" : where);
    std::string algo = f.text("quant_algo", c.declared_method == "modelopt_fp4" ? "nvfp4" : "");
    if (algo.empty()) throw Error(f.path("quant_algo"), "missing (FP8 or NVFP4)");
    // Routers stay in the model dtype whatever the exclusion list says: ModelOpt's default
    // configuration disables "*router*" and "*mlp.gate.*" without writing them into the list
    // (nvidia/Qwen3.5-122B-A10B-NVFP4's names no router, and its published size counts them in
    // bf16: tests/core/roofline/tst_roofline.cpp).
    set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear,
                     TensorRole::LmHead});
    // hf_quant_config.json names the exclusions exclude_modules; config.json's flat form, ignore
    // (vLLM 0.20.1 modelopt.py ModelOptQuantConfigBase.from_config).
    const char* exclusions = nested || f.has("exclude_modules") ? "exclude_modules" : "ignore";
    if (f.has(exclusions)) {
        c.ignore = matchers(f.strings(exclusions), MatchKind::Glob, f.path(exclusions));
    } else {
        for (const char* d : {"*lm_head*", "*proj_out.*", "*block_sparse_moe.gate*", "*router*", "*mlp.gate.*", "*mlp.shared_expert_gate.*", "*output_layer*"})
            c.ignore.push_back(matcher(MatchKind::Glob, d, f.path("exclude_modules")));
        c.notes.push_back("no exclude_modules: ModelOpt's default exclusions assumed (lm_head, routers, output layers)");
    }
    Scheme s;
    s.activation_dtype = c.model_dtype;
    TensorQuant a;
    if (algo == "fp8") {
        // weight F8_E4M3 [N,K], weight_scale F32 0-d, input_scale F32 0-d.
        s.weights.storage = DType::Fp8E4M3;
        s.weights.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
        a.storage = DType::Fp8E4M3;
        a.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
        c.facts.bits = 8;
        c.facts.activation = "fp8";
        c.facts.activation_static = true;
    } else if (algo == "nvfp4") {
        const std::int64_t group = f.integer("group_size", 16);
        if (group != 16) throw Error(f.path("group_size"), "NVFP4 uses one scale per 16 values, got " + std::to_string(group));
        // weight U8 [N,K/2], weight_scale F8_E4M3 [N,K/16], weight_scale_2 F32 0-d, input_scale F32 0-d.
        s.weights.storage = DType::Fp4E2M1;
        s.weights.scale = ScaleDesc{DType::Fp8E4M3, true, GroupShape::per_group(16)};
        s.weights.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
        a.storage = DType::Fp4E2M1;
        a.scale = ScaleDesc{DType::Fp8E4M3, false, GroupShape::per_group(16)};
        a.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_tensor()};
        c.facts.bits = 4;
        c.facts.group_size = 16;
        c.facts.activation = "fp4";
        c.facts.activation_static = true;
    } else {
        throw Error(f.path("quant_algo"), "ModelOpt algorithm '" + algo + "' is not modelled (FP8, NVFP4)");
    }
    s.activations = a;
    s.covers = coverage_of(c);
    c.facts.weight_float = true;
    c.facts.quant_algo = algo == "fp8" ? "FP8" : "NVFP4";
    QuantRule r;
    r.name = "default";
    r.format = c.facts.quant_algo;
    r.scheme = s;
    r.description = algo == "fp8" ? "fp8_e4m3 weights per tensor, static fp8 activations, ModelOpt FP8" : "NVFP4 weights and activations (e4m3 per 16, fp32 global), ModelOpt NVFP4";
    c.rules.push_back(std::move(r));
    const std::string kv = f.text("kv_cache_quant_algo", "");
    if (kv.empty() && f.has("kv_cache_scheme")) {
        // ModelOpt's config.json form may state the KV cache as a kv_cache_scheme instead.
        c.kv_cache = kv_cache_scheme_of(Fields(*f.find("kv_cache_scheme"), f.path("kv_cache_scheme")), DType::Fp32);
    } else if (kv == "fp8") {
        KvCacheDeclaration d;
        d.type = "float";
        d.num_bits = 8;
        d.strategy = "tensor";
        d.scale_dtype = DType::Fp32;
        d.format = parse_kv_format("fp8");
        c.kv_cache = d;
    } else if (!kv.empty() && kv != "none") {
        c.notes.push_back("ModelOpt kv_cache_quant_algo '" + kv + "' is not modelled");
    }
}

// ---------------------------------------------------------------- bitsandbytes (reference §6)
void parse_bitsandbytes(QuantizationConfig& c, const Fields& f) {
    const bool four = f.boolean("load_in_4bit", false);
    const bool eight = f.boolean("load_in_8bit", false);
    if (four == eight) throw Error(f.path("load_in_4bit"), "exactly one of load_in_4bit and load_in_8bit must be true");
    set_eligible(c, {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::ExpertLinear, TensorRole::SharedExpertLinear, TensorRole::Router});
    c.ignore = matchers(f.strings("llm_int8_skip_modules"), MatchKind::PathPrefix, f.path("llm_int8_skip_modules"));
    QuantRule r;
    r.name = "default";
    Scheme& s = r.scheme;
    s.activation_dtype = c.model_dtype;
    if (four) {
        const std::string type = f.text("bnb_4bit_quant_type", "fp4");
        if (type != "nf4" && type != "fp4") throw Error(f.path("bnb_4bit_quant_type"), "must be nf4 or fp4, got '" + type + "'");
        const bool dq = f.boolean("bnb_4bit_use_double_quant", false);
        const std::string storage = f.text("bnb_4bit_quant_storage", "uint8");
        if (storage != "uint8") c.notes.push_back("bnb_4bit_quant_storage '" + storage + "': bytes are predicted with uint8 storage");
        constexpr std::int64_t kBnbBlocksize = 64;  // transformers' 4-bit default blocksize
        s.weights.storage = DType::Int4;
        s.weights.scale = ScaleDesc{dq ? DType::Int8 : DType::Fp32, true, GroupShape::per_group(kBnbBlocksize)};
        if (dq) s.weights.scale2 = ScaleDesc{DType::Fp32, true, GroupShape::per_group(256)};
        s.layout = CheckpointLayout::Bitsandbytes4bit;
        r.format = type;
        r.description = type + " 4-bit, blocks of 64" + std::string(dq ? ", double quantization" : "") + ", bitsandbytes";
        c.facts.bits = 4;
        c.facts.group_size = kBnbBlocksize;
        c.facts.weight_float = true;
        c.notes.push_back("bitsandbytes quant_state JSON length is predicted" + std::string(dq ? " with an estimated nested_offset" : ""));
    } else {
        s.weights.storage = DType::Int8;
        s.weights.scale = ScaleDesc{DType::Fp32, true, GroupShape::per_row()};  // SCB
        s.layout = CheckpointLayout::Bitsandbytes8bit;
        r.format = "int8";
        r.description = "LLM.int8 per channel, bitsandbytes";
        c.facts.bits = 8;
        c.facts.group_size = -1;
    }
    s.covers = coverage_of(c);
    c.rules.push_back(std::move(r));
}

// ---------------------------------------------------------------- mxfp4 (reference §7)
void parse_mxfp4(QuantizationConfig& c, const Fields& f) {
    set_eligible(c, {TensorRole::ExpertLinear});
    c.ignore = matchers(f.strings("modules_to_not_convert"), MatchKind::Glob, f.path("modules_to_not_convert"));
    QuantRule r;
    r.name = "default";
    r.format = "mxfp4";
    r.scheme.weights.storage = DType::Fp4E2M1;
    r.scheme.weights.scale = ScaleDesc{DType::Fp8E8M0, true, GroupShape::per_group(32)};
    r.scheme.activation_dtype = c.model_dtype;
    r.scheme.covers = coverage_of(c);
    r.description = "MXFP4 experts (e8m0 per 32 values), blocks/scales tensors";
    c.rules.push_back(std::move(r));
    c.facts.bits = 4;
    c.facts.group_size = 32;
    c.facts.weight_float = true;
}

QuantMethod method_of(const std::string& m) {
    if (m == "awq" || m == "auto_awq" || m == "awq_marlin") return QuantMethod::Awq;
    if (m == "gptq" || m == "auto_gptq" || m == "gptq_marlin") return QuantMethod::Gptq;
    if (m == "compressed-tensors" || m == "compressed_tensors" || m == "sparseml") return QuantMethod::CompressedTensors;
    if (m == "fp8") return QuantMethod::Fp8;
    if (m == "modelopt" || m == "modelopt_fp4" || m == "modelopt_fp8") return QuantMethod::ModelOpt;
    if (m == "bitsandbytes") return QuantMethod::Bitsandbytes;
    if (m == "mxfp4") return QuantMethod::Mxfp4;
    return QuantMethod::Unknown;
}

void dispatch(QuantizationConfig& c, const Json& q, const std::string& where) {
    c.method = method_of(c.declared_method);
    const Fields f(q, where);
    switch (c.method) {
        case QuantMethod::Awq: parse_awq(c, f); break;
        case QuantMethod::Gptq: parse_gptq(c, f); break;
        case QuantMethod::CompressedTensors: parse_compressed_tensors(c, f); break;
        case QuantMethod::Fp8: parse_fp8(c, f); break;
        case QuantMethod::ModelOpt: parse_modelopt(c, q, where); break;
        case QuantMethod::Bitsandbytes: parse_bitsandbytes(c, f); break;
        case QuantMethod::Mxfp4: parse_mxfp4(c, f); break;
        case QuantMethod::None: break;
        case QuantMethod::Unknown:
            c.problem = "quantization method '" + clip_text(c.declared_method, 60) +
                        "' is not modelled by quantplan (it reads awq, gptq, compressed-tensors, fp8, modelopt, bitsandbytes, mxfp4): every tensor is "
                        "predicted in the model dtype";
            break;
    }
}

DType dtype_from_root(const Json& root) {
    for (const Json* j : {&root, member(root, "text_config")}) {
        if (!j) continue;
        for (const char* key : {"torch_dtype", "dtype"}) {
            const Json* v = member(*j, key);
            if (v && v->is_string())
                if (const auto d = parse_dtype(v->get<std::string>()); d && (*d == DType::Bf16 || *d == DType::Fp16 || *d == DType::Fp32)) return *d;
        }
    }
    return DType::Bf16;
}

}  // namespace

const char* quant_method_name(QuantMethod method) {
    switch (method) {
        case QuantMethod::None: return "none";
        case QuantMethod::Awq: return "awq";
        case QuantMethod::Gptq: return "gptq";
        case QuantMethod::CompressedTensors: return "compressed-tensors";
        case QuantMethod::Fp8: return "fp8";
        case QuantMethod::ModelOpt: return "modelopt";
        case QuantMethod::Bitsandbytes: return "bitsandbytes";
        case QuantMethod::Mxfp4: return "mxfp4";
        case QuantMethod::Unknown: return "unknown";
    }
    return "unknown";
}

bool ModuleMatcher::matches(std::string_view module, std::string_view class_name) const {
    switch (kind) {
        case MatchKind::Exact: return module == text;
        case MatchKind::Substring: return !text.empty() && module.find(text) != std::string_view::npos;
        case MatchKind::PathPrefix: return module == text || (!text.empty() && module.find(text + ".") != std::string_view::npos);
        case MatchKind::Regex: return regex && regex->match_prefix(module);
        case MatchKind::ClassName: return !text.empty() && lower(class_name).find(lower(text)) != std::string::npos;
        case MatchKind::Glob: {
            if (glob_match(text, module) || glob_match(text, std::string(module) + ".")) return true;
            for (std::size_t dot = module.find('.'); dot != std::string_view::npos; dot = module.find('.', dot + 1))
                if (glob_match(text, module.substr(0, dot))) return true;
            return false;
        }
    }
    return false;
}

const QuantRule* tensor_rule(const QuantizationConfig& config, const TensorInfo& t) {
    if (t.never_quantized || t.fixed_dtype || !t.is_linear() || t.shape.size() != 2 || !t.name.ends_with(".weight")) return nullptr;
    return module_rule(config, std::string_view(t.name).substr(0, t.name.size() - 7), t.role);
}

std::string_view module_class_name(TensorRole role) {
    switch (role) {
        case TensorRole::Embedding: return "Embedding";
        case TensorRole::Norm: return "RMSNorm";
        case TensorRole::Bias: return "Parameter";
        default: return "Linear";
    }
}

DType declared_model_dtype(std::string_view config_json_text) {
    try {
        return dtype_from_root(parse_untrusted_ordered_json(null_python_literals(config_json_text), "config.json"));
    } catch (const Error&) {
        return DType::Bf16;
    }
}

QuantizationConfig parse_quantization_config(const QuantConfigTexts& texts) {
    QuantizationConfig c;
    if (texts.config_json) {
        // config.json as Python writes it may hold NaN and Infinity (Nemotron-H's time_step_limit).
        const Json root = parse_untrusted_ordered_json(null_python_literals(*texts.config_json), "config.json");
        if (!root.is_object()) throw Error("config.json", "must be a JSON object");
        c.model_dtype = dtype_from_root(root);
        if (const Json* t = member(root, "model_type"); t && t->is_string()) c.model_type = t->get<std::string>();
        const Json* q = member(root, "quantization_config");
        std::string where = "config.json: quantization_config";
        if (!q) {
            // compressed-tensors <= 0.5 wrote compression_config, sometimes with the quantization nested.
            if (const Json* cc = member(root, "compression_config")) {
                where = "config.json: compression_config";
                q = cc;
                if (const Json* inner = member(*cc, "quantization_config")) {
                    q = inner;
                    where += ".quantization_config";
                }
                if (!q->is_object()) throw Error(where, "must be a JSON object");
                if (!member(*q, "quant_method")) {
                    c.declared_method = "compressed-tensors";
                    c.source = where;
                    dispatch(c, *q, where);
                    return c;
                }
            }
        }
        if (q) {
            if (!q->is_object()) throw Error(where, "must be a JSON object");
            c.source = where;
            const Fields f(*q, where);
            c.declared_method = f.text("quant_method", "");
            if (c.declared_method.empty()) {
                // transformers' BitsAndBytesConfig and a few exporters omit quant_method.
                if (f.has("load_in_4bit") || f.has("load_in_8bit")) c.declared_method = "bitsandbytes";
                else throw Error(f.path("quant_method"), "missing: cannot tell which quantization method wrote the checkpoint");
            }
            dispatch(c, *q, where);
            return c;
        }
    }
    if (texts.hf_quant_config) {
        const Json root = parse_untrusted_ordered_json(*texts.hf_quant_config, "hf_quant_config.json");
        c.source = "hf_quant_config.json";
        c.declared_method = "modelopt";
        dispatch(c, root, c.source);
        return c;
    }
    if (texts.quant_config) {
        const Json root = parse_untrusted_ordered_json(*texts.quant_config, "quant_config.json");
        c.source = "quant_config.json";
        c.declared_method = member(root, "quant_method") && member(root, "quant_method")->is_string()
                                ? lower(member(root, "quant_method")->get<std::string>())
                                : "awq";
        dispatch(c, root, c.source);
        return c;
    }
    if (texts.quantize_config) {
        const Json root = parse_untrusted_ordered_json(*texts.quantize_config, "quantize_config.json");
        c.source = "quantize_config.json";
        c.declared_method = member(root, "quant_method") && member(root, "quant_method")->is_string()
                                ? lower(member(root, "quant_method")->get<std::string>())
                                : "gptq";
        dispatch(c, root, c.source);
        return c;
    }
    return c;
}

const QuantRule* module_rule(const QuantizationConfig& c, std::string_view module, TensorRole role) {
    if (c.method == QuantMethod::None || c.method == QuantMethod::Unknown) return nullptr;
    if (!c.eligible[static_cast<std::size_t>(role)]) return nullptr;
    const std::string_view cls = module_class_name(role);
    for (const ModuleMatcher& m : c.ignore)
        if (m.matches(module, cls)) return nullptr;
    // Names and regexes first, in rule order; rules without targets take every eligible module.
    for (const QuantRule& r : c.rules) {
        if (r.targets.empty()) return r.skip ? nullptr : &r;
        for (const ModuleMatcher& m : r.targets)
            if (m.kind != MatchKind::ClassName && m.matches(module, cls)) return r.skip ? nullptr : &r;
    }
    // Then class names (compressed-tensors "Linear").
    for (const QuantRule& r : c.rules)
        for (const ModuleMatcher& m : r.targets)
            if (m.kind == MatchKind::ClassName && m.matches(module, cls)) return r.skip ? nullptr : &r;
    return nullptr;
}

}  // namespace quantplan
