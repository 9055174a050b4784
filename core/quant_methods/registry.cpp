#include "core/quant_methods/registry.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace quantplan {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Replaces each {key} of `text` with its value.
std::string fill(std::string text, const std::map<std::string, std::string>& values) {
    for (const auto& [k, v] : values) {
        const std::string token = "{" + k + "}";
        for (std::size_t p = text.find(token); p != std::string::npos; p = text.find(token, p + v.size())) text.replace(p, token.size(), v);
    }
    return text;
}

// Reads the registry JSON (our own data: errors name the field, nothing here is untrusted input).
class Reader {
public:
    Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
        if (!j_.is_object()) throw Error(where_, "must be an object");
    }
    std::string path(std::string_view k) const { return where_ + "." + std::string(k); }
    const json* find(std::string_view k) const {
        const auto it = j_.find(std::string(k));
        return it == j_.end() || it->is_null() ? nullptr : &*it;
    }
    std::string str(std::string_view k, std::string fallback = "") const {
        const json* v = find(k);
        if (!v) return fallback;
        if (!v->is_string()) throw Error(path(k), "must be a string");
        return v->get<std::string>();
    }
    bool boolean(std::string_view k, bool fallback) const {
        const json* v = find(k);
        if (!v) return fallback;
        if (!v->is_boolean()) throw Error(path(k), "must be true or false");
        return v->get<bool>();
    }
    std::optional<bool> opt_bool(std::string_view k) const {
        const json* v = find(k);
        if (!v) return std::nullopt;
        return boolean(k, false);
    }
    int integer(std::string_view k, int fallback) const {
        const json* v = find(k);
        if (!v) return fallback;
        if (!v->is_number_integer()) throw Error(path(k), "must be an integer");
        return v->get<int>();
    }
    std::vector<std::string> strings(std::string_view k) const {
        std::vector<std::string> out;
        const json* v = find(k);
        if (!v) return out;
        if (!v->is_array()) throw Error(path(k), "must be a list of strings");
        for (const json& e : *v) {
            if (!e.is_string()) throw Error(path(k), "must be a list of strings");
            out.push_back(e.get<std::string>());
        }
        return out;
    }
    template <typename T>
    std::vector<T> numbers(std::string_view k) const {
        std::vector<T> out;
        const json* v = find(k);
        if (!v) return out;
        if (!v->is_array()) throw Error(path(k), "must be a list of integers");
        for (const json& e : *v) {
            if (!e.is_number_integer()) throw Error(path(k), "must be a list of integers");
            out.push_back(e.get<T>());
        }
        return out;
    }
    Reader sub(std::string_view k) const {
        const json* v = find(k);
        static const json empty = json::object();
        return Reader(v ? *v : empty, path(k));
    }
    const json& raw() const { return j_; }

private:
    const json& j_;
    std::string where_;
};

RuleConditions conditions(const Reader& r) {
    RuleConditions c;
    c.platforms = r.strings("platforms");
    c.min_capability = r.integer("min_capability", 0);
    c.max_capability = r.integer("max_capability", 1 << 20);
    c.bits = r.numbers<int>("bits");
    c.group_sizes = r.numbers<std::int64_t>("group_sizes");
    c.symmetric = r.opt_bool("symmetric");
    c.zero_point = r.opt_bool("zero_point");
    c.block = r.opt_bool("block");
    c.checkpoint_format_not = r.strings("checkpoint_format_not");
    for (const std::string& a : r.strings("quant_algo")) c.quant_algo.push_back(a);
    c.n_multiple = r.integer("n_multiple", 0);
    c.k_multiple = r.integer("k_multiple", 0);
    return c;
}

KernelClass parse_class(const std::string& s, const std::string& field) {
    if (s == "fused") return KernelClass::Fused;
    if (s == "native") return KernelClass::Native;
    if (s == "generic") return KernelClass::Generic;
    if (s == "unknown") return KernelClass::Unknown;
    throw Error(field, "must be fused, native, generic or unknown, got '" + s + "'");
}

EngineSnapshot parse_snapshot(const Reader& r, const std::string& engine, const std::string& engine_name) {
    EngineSnapshot s;
    s.engine = engine;
    s.engine_name = engine_name;
    s.id = r.str("id");
    if (s.id.empty()) throw Error(r.path("id"), "missing");
    s.repository = r.str("repository");
    s.commit = r.str("commit");
    s.date = r.str("date");
    s.version = r.str("version");
    s.complete = r.boolean("complete", false);
    s.reference = r.str("reference");
    s.notes = r.strings("notes");
    const Reader methods = r.sub("methods");
    s.methods = methods.strings("names");
    s.cuda_only_methods = methods.strings("cuda_only");
    s.methods_file = methods.str("file");
    const Reader order = r.sub("override_order");
    s.override_order = order.strings("names");
    s.override_file = order.str("file");
    if (const json* conv = r.find("conversions")) {
        for (std::size_t i = 0; i < conv->size(); ++i) {
            const Reader c((*conv)[i], r.path("conversions") + "[" + std::to_string(i) + "]");
            s.conversions.push_back({c.str("from"), c.str("to"), conditions(c), c.boolean("verified", true), c.str("note"), c.str("file")});
        }
    }
    const Reader cap = r.sub("min_capability");
    if (const json* v = cap.find("values")) {
        for (auto it = v->begin(); it != v->end(); ++it) {
            if (!it->is_number_integer()) throw Error(cap.path("values") + "." + it.key(), "must be an integer");
            s.min_capability[it.key()] = it->get<int>();
        }
    }
    s.capability_message = cap.str("message");
    s.capability_file = cap.str("file");
    if (const json* ks = r.find("kernels")) {
        for (std::size_t i = 0; i < ks->size(); ++i) {
            const std::string where = r.path("kernels") + "[" + std::to_string(i) + "]";
            const Reader k((*ks)[i], where);
            KernelRule rule;
            rule.method = k.str("method");
            rule.scheme = k.str("scheme");
            rule.when = conditions(k);
            rule.kernel = k.str("kernel");
            rule.kernel_class = parse_class(k.str("class", "unknown"), where + ".class");
            rule.verified = k.boolean("verified", true);
            rule.note = k.str("note");
            rule.file = k.str("file");
            s.kernels.push_back(std::move(rule));
        }
    }
    const Reader opt = r.sub("optimized");
    if (opt.find("names")) s.optimized = opt.strings("names");
    s.optimized_warning = opt.str("warning");
    s.optimized_file = opt.str("file");
    s.optimized_note = opt.str("note");
    if (const json* ex = opt.find("exemptions")) {
        for (std::size_t i = 0; i < ex->size(); ++i) {
            const Reader e((*ex)[i], opt.path("exemptions") + "[" + std::to_string(i) + "]");
            s.optimized_exemptions.push_back({e.strings("methods"), e.integer("min_capability", 0), e.integer("max_capability", 1 << 20)});
        }
    }
    const Reader kv = r.sub("kv_cache_dtypes");
    s.kv_cache_dtypes = kv.strings("names");
    s.kv_cache_file = kv.str("file");
    if (const json* f = kv.find("formats")) {
        for (auto it = f->begin(); it != f->end(); ++it) s.kv_cache_formats[it.key()] = kv.sub("formats").strings(it.key());
    }
    if (const json* rs = r.find("refusals")) {
        for (std::size_t i = 0; i < rs->size(); ++i) {
            const Reader f((*rs)[i], r.path("refusals") + "[" + std::to_string(i) + "]");
            RefusalRule rule;
            rule.kind = f.str("kind");
            rule.method = f.str("method");
            rule.methods = f.strings("methods");
            rule.types = f.strings("types");
            rule.num_bits = f.numbers<int>("num_bits");
            rule.strategies = f.strings("strategies");
            rule.symmetric_required = f.boolean("symmetric", false);
            rule.message = f.str("message");
            rule.file = f.str("file");
            s.refusals.push_back(std::move(rule));
        }
    }
    const Reader compat = r.sub("compatible_methods");
    if (const json* v = compat.find("values"))
        for (auto it = v->begin(); it != v->end(); ++it) s.compatible_methods[it.key()] = compat.sub("values").strings(it.key());
    s.requantization_methods = r.sub("requantization").strings("names");
    if (const json* m = r.find("messages"))
        for (auto it = m->begin(); it != m->end(); ++it)
            if (it->is_string()) s.messages[it.key()] = it->get<std::string>();
    if (s.complete && s.methods.empty()) throw Error(r.path("methods"), "a complete snapshot lists its method names");
    return s;
}

bool conditions_hold(const RuleConditions& c, const EngineQuery& q, const EngineGpu& gpu) {
    if (!c.platforms.empty() && !contains(c.platforms, gpu.cuda ? "cuda" : "rocm")) return false;
    // Capability ranges are CUDA compute capabilities; they do not apply where it is unknown (ROCm).
    if (gpu.cuda && gpu.capability > 0 && (gpu.capability < c.min_capability || gpu.capability > c.max_capability)) return false;
    if (!c.bits.empty() && std::find(c.bits.begin(), c.bits.end(), q.bits) == c.bits.end()) return false;
    if (!c.group_sizes.empty() && std::find(c.group_sizes.begin(), c.group_sizes.end(), q.group_size) == c.group_sizes.end()) return false;
    if (c.symmetric && *c.symmetric != q.symmetric) return false;
    if (c.zero_point && *c.zero_point != q.zero_point) return false;
    if (c.block && *c.block != q.block) return false;
    if (contains(c.checkpoint_format_not, q.checkpoint_format)) return false;
    if (!c.quant_algo.empty() && !contains(c.quant_algo, q.quant_algo)) return false;
    // Alignment rules apply only when the shape is known.
    if (c.n_multiple > 0 && q.n > 0 && q.n % c.n_multiple != 0) return false;
    if (c.k_multiple > 0 && q.k > 0 && q.k % c.k_multiple != 0) return false;
    return true;
}

std::string capability_text(int cc) { return std::to_string(cc); }

}  // namespace

const char* kernel_class_name(KernelClass k) {
    switch (k) {
        case KernelClass::Fused: return "fused";
        case KernelClass::Native: return "native";
        case KernelClass::Generic: return "generic";
        case KernelClass::Unknown: return "unknown";
    }
    return "unknown";
}

std::string EngineSnapshot::stamp() const {
    std::string s = engine_name + " " + id + " (" + repository;
    if (!commit.empty()) s += "@" + commit;
    if (!version.empty()) s += ", " + version;
    if (!date.empty()) s += ", " + date;
    return s + ")";
}

bool EngineSnapshot::registers(std::string_view method) const { return contains(methods, method); }

const EngineSnapshot* EngineRegistry::find(std::string_view id) const {
    for (const EngineSnapshot& s : snapshots)
        if (s.id == id) return &s;
    return nullptr;
}

const EngineSnapshot* EngineRegistry::latest(std::string_view engine) const {
    const EngineSnapshot* out = nullptr;
    for (const EngineSnapshot& s : snapshots)
        if (s.engine == engine && s.complete) out = &s;
    return out;
}

std::vector<const EngineSnapshot*> EngineRegistry::complete() const {
    std::vector<const EngineSnapshot*> out;
    for (const EngineSnapshot& s : snapshots)
        if (s.complete) out.push_back(&s);
    return out;
}

std::vector<EngineSnapshot> parse_engine_snapshots(std::string_view text, const std::string& source) {
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        throw Error(source, std::string("not valid JSON: ") + e.what());
    }
    const Reader r(root, source);
    const std::string engine = r.str("engine");
    if (engine.empty()) throw Error(r.path("engine"), "missing");
    const std::string name = r.str("engine_name", engine);
    const json* snaps = r.find("snapshots");
    if (!snaps || !snaps->is_array() || snaps->empty()) throw Error(r.path("snapshots"), "must be a non-empty list");
    std::vector<EngineSnapshot> out;
    std::set<std::string> ids;
    for (std::size_t i = 0; i < snaps->size(); ++i) {
        out.push_back(parse_snapshot(Reader((*snaps)[i], r.path("snapshots") + "[" + std::to_string(i) + "]"), engine, name));
        if (!ids.insert(out.back().id).second) throw Error(r.path("snapshots"), "id '" + out.back().id + "' appears twice");
    }
    return out;
}

EngineRegistry load_engine_registry(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") files.push_back(e.path());
    if (ec) throw Error(dir.string(), "cannot list the engine registry: " + ec.message());
    std::sort(files.begin(), files.end());
    EngineRegistry reg;
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        for (EngineSnapshot& s : parse_engine_snapshots(ss.str(), f.string())) reg.snapshots.push_back(std::move(s));
    }
    return reg;
}

const EngineRegistry& builtin_engine_registry() {
    static const EngineRegistry reg = [] {
        EngineRegistry r;
        for (const auto& [name, text] : builtin_engine_registry_texts())
            for (EngineSnapshot& s : parse_engine_snapshots(text, "assets/engines/" + name)) r.snapshots.push_back(std::move(s));
        return r;
    }();
    return reg;
}

EngineGpu engine_gpu(const GpuProfile& gpu) {
    EngineGpu g;
    g.name = gpu.name.empty() ? gpu.id : gpu.name;
    g.cuda = lower(gpu.vendor) != "amd";
    const std::string& cc = gpu.compute_capability;
    if (g.cuda && cc.rfind("sm_", 0) == 0) {
        int v = 0;
        for (std::size_t i = 3; i < cc.size() && std::isdigit(static_cast<unsigned char>(cc[i])) && v < 10000; ++i) v = v * 10 + (cc[i] - '0');
        g.capability = v;
    }
    return g;
}

std::string compressed_tensors_scheme(const EngineQuery& q) {
    if (q.weight_float && q.bits == 4) return q.activation == "fp4" ? "NVFP4" : "NVFP4A16";
    if (q.weight_float && q.bits == 8) return q.activation == "fp8" ? "W8A8-FP8" : "W8A16-FP8";
    if (!q.weight_float && q.bits == 8 && q.activation == "int8") return "W8A8-INT8";
    if (!q.weight_float && q.bits == 4 && q.activation == "fp8") return "W4A8-FP8";
    if (!q.weight_float && q.activation.empty()) return "WNA16";
    return "";
}

std::optional<std::string> kv_cache_refusal(const EngineSnapshot& s, std::string_view kv_format) {
    const auto it = s.kv_cache_formats.find(std::string(kv_format));
    if (it != s.kv_cache_formats.end())
        for (const std::string& name : it->second)
            if (contains(s.kv_cache_dtypes, name)) return std::nullopt;
    std::string choices;
    for (const std::string& c : s.kv_cache_dtypes) choices += (choices.empty() ? "" : ", ") + c;
    return s.id + " offers no --kv-cache-dtype for a " + std::string(kv_format) + " KV cache (choices: " + choices + ")";
}

EngineResolution resolve_engine(const EngineSnapshot& s, const EngineQuery& q, const EngineGpu& gpu) {
    EngineResolution r;
    r.snapshot = &s;
    const std::string declared = lower(q.method);
    r.registered = s.registers(declared);
    if (!r.registered) {
        r.refused = true;
        r.errors.push_back(s.engine_name + " " + s.id + " registers no quantization method '" + declared + "'");
        r.sources.push_back(s.methods_file);
        return r;
    }
    if (!gpu.cuda && contains(s.cuda_only_methods, declared)) {
        r.refused = true;
        r.errors.push_back("'" + declared + "' is registered on CUDA only in " + s.id);
        r.sources.push_back(s.methods_file);
        return r;
    }
    // Overrides: the first conversion whose conditions hold claims the checkpoint.
    r.resolved_method = declared;
    for (const ConversionRule& c : s.conversions) {
        if (c.from != declared || !conditions_hold(c.when, q, gpu)) continue;
        r.resolved_method = c.to;
        r.sources.push_back(c.file);
        if (!c.verified) r.notes.push_back("conversion " + c.from + " -> " + c.to + " is assumed: " + c.note);
        break;
    }
    if (r.resolved_method == "compressed-tensors") r.scheme = compressed_tensors_scheme(q);
    // Capability gate.
    if (gpu.cuda && gpu.capability > 0) {
        for (const std::string& key : {r.resolved_method, r.resolved_method + "/" + r.scheme}) {
            const auto it = s.min_capability.find(key);
            if (it == s.min_capability.end() || gpu.capability >= it->second) continue;
            r.refused = true;
            r.errors.push_back(fill(s.capability_message, {{"method", key}, {"min", capability_text(it->second)}, {"current", capability_text(gpu.capability)}}));
            r.sources.push_back(s.capability_file);
        }
    }
    // Refusals.
    for (const RefusalRule& f : s.refusals) {
        if (f.kind == "kv_cache_scheme" && f.method == declared && q.kv_type) {
            const bool type_ok = f.types.empty() || contains(f.types, *q.kv_type);
            const bool bits_ok = f.num_bits.empty() || std::find(f.num_bits.begin(), f.num_bits.end(), q.kv_num_bits) != f.num_bits.end();
            if (!type_ok || !bits_ok) {
                r.refused = true;
                r.errors.push_back(fill(f.message, {{"num_bits", std::to_string(q.kv_num_bits)}, {"type", *q.kv_type}}));
                r.sources.push_back(f.file);
            } else if (!f.strategies.empty() && !contains(f.strategies, q.kv_strategy)) {
                r.refused = true;
                r.errors.push_back(s.id + " accepts kv_cache_scheme strategy " + [&] {
                    std::string l;
                    for (const std::string& x : f.strategies) l += (l.empty() ? "" : " or ") + x;
                    return l;
                }() + ", not '" + q.kv_strategy + "'");
                r.sources.push_back(f.file);
            } else if (f.symmetric_required && !q.kv_symmetric) {
                r.refused = true;
                r.errors.push_back(s.id + " requires a symmetric kv_cache_scheme");
                r.sources.push_back(f.file);
            }
        } else if (f.kind == "block_static_activation" && f.method == declared && q.block && q.activation_static) {
            r.refused = true;
            r.errors.push_back(f.message);
            r.sources.push_back(f.file);
        } else if (f.kind == "deprecated" && (contains(f.methods, declared) || contains(f.methods, r.resolved_method))) {
            r.refused = true;
            r.errors.push_back(fill(f.message, {{"method", declared}}));
            r.sources.push_back(f.file);
        }
    }
    // Kernel.
    for (const KernelRule& k : s.kernels) {
        if (k.method != r.resolved_method) continue;
        if (!k.scheme.empty() && k.scheme != r.scheme) continue;
        if (!conditions_hold(k.when, q, gpu)) continue;
        r.kernel = k.kernel;
        r.kernel_class = k.kernel_class;
        r.kernel_verified = k.verified;
        if (!k.verified) r.notes.push_back("kernel row assumed: " + k.note);
        r.sources.push_back(k.file);
        break;
    }
    if (r.kernel_class == KernelClass::Generic)
        r.notes.push_back(s.engine_name + " runs '" + r.resolved_method + "' with " + r.kernel +
                             ": a generic kernel, slower than bf16 once the batch is compute-bound");
    // SGLang's optimized list.
    if (s.optimized) {
        bool exempt = false;
        for (const OptimizedExemption& e : s.optimized_exemptions)
            exempt = exempt || (contains(e.methods, r.resolved_method) && gpu.cuda && gpu.capability >= e.min_capability && gpu.capability <= e.max_capability);
        r.optimized = contains(*s.optimized, r.resolved_method);
        if (!*r.optimized && !exempt) {
            r.warnings.push_back(fill(s.optimized_warning, {{"method", r.resolved_method}}));
            r.sources.push_back(s.optimized_file);
        }
    }
    if (contains(s.requantization_methods, r.resolved_method)) r.warnings.push_back("requantization may incur a loss in accuracy");
    // KV-cache dtype.
    if (!q.kv_format.empty()) {
        if (const auto why = kv_cache_refusal(s, q.kv_format)) {
            r.refused = true;
            r.errors.push_back(*why);
            r.sources.push_back(s.kv_cache_file);
        }
    }
    return r;
}

std::optional<EngineQuery> engine_query_for_scheme(const Scheme& scheme, std::int64_t n, std::int64_t k) {
    const TensorQuant& w = scheme.weights;
    if (!w.is_quantized()) return std::nullopt;
    EngineQuery q;
    q.n = n;
    q.k = k;
    q.bits = dtype_bits(w.storage);
    q.weight_float = !dtype_is_integer(w.storage);
    q.symmetric = w.symmetric;
    q.zero_point = !w.symmetric;
    const GroupShape& g = w.scale->group;
    q.group_size = g.is_per_group() ? g.cols : g.is_per_row() ? -1 : 0;
    q.block = g.is_block();
    if (scheme.activations) {
        const DType a = scheme.activations->storage;
        q.activation = a == DType::Int8 ? "int8" : a == DType::Fp4E2M1 ? "fp4" : a == DType::Int4 ? "int4" : "fp8";
        q.activation_static = scheme.activations->scale && scheme.activations->scale->is_static;
    }
    switch (scheme.layout) {
        case CheckpointLayout::AutoAwqGemm:
        case CheckpointLayout::AutoAwqGemv: q.method = "awq"; q.zero_point = true; return q;
        case CheckpointLayout::Gptq: q.method = "gptq"; return q;
        case CheckpointLayout::CompressedTensorsPacked:
        case CheckpointLayout::CompressedTensorsPackedGIdx:
        case CheckpointLayout::UnpackedBytes: q.method = "compressed-tensors"; return q;
        case CheckpointLayout::Bitsandbytes4bit:
        case CheckpointLayout::Bitsandbytes8bit: q.method = "bitsandbytes"; return q;
        case CheckpointLayout::Generic: break;
    }
    if (w.storage == DType::Fp4E2M1) {
        const bool mx = w.scale->dtype == DType::Fp8E8M0;
        q.method = mx ? "mxfp4" : "modelopt";
        if (!mx) q.quant_algo = "NVFP4";
        return q;
    }
    if (q.weight_float) {
        q.method = "fp8";
        return q;
    }
    if (scheme.activations) {
        q.method = "compressed-tensors";  // W8A8-INT8 checkpoints come from llm-compressor
        return q;
    }
    // Weight-only integers in the generic layout: symmetric GPTQ-style, asymmetric AWQ-style.
    q.method = w.symmetric ? "gptq" : "awq";
    return q;
}

KernelQuality engine_kernel_quality(const Scheme& scheme, const GpuProfile& gpu) {
    const EngineSnapshot* s = builtin_engine_registry().latest("vllm");
    const auto q = engine_query_for_scheme(scheme);
    if (!s || !q || !scheme.is_weight_only()) return KernelQuality::Fused;
    const EngineResolution r = resolve_engine(*s, *q, engine_gpu(gpu));
    return r.kernel_class == KernelClass::Generic ? KernelQuality::Generic : KernelQuality::Fused;
}

std::vector<std::string> engine_plan_warnings(const std::vector<Scheme>& schemes, const GpuProfile& gpu, KernelQuality kernel, const KvFormat& kv) {
    std::vector<std::string> out;
    const EngineRegistry& reg = builtin_engine_registry();
    const EngineGpu target = engine_gpu(gpu);
    const std::string gpu_name = gpu.id.empty() ? target.name : gpu.id;
    const std::string kv_name = kv_format_name(kv);
    std::set<std::string> seen;
    const auto add = [&](const std::string& w) {
        if (seen.insert(w).second) out.push_back(w);
    };
    if (kernel == KernelQuality::Generic) {
        std::string forced;
        if (const EngineSnapshot* a = reg.find("vllm-A"); a && a->messages.count("forced_gptq"))
            forced = "; vLLM logs \"" + a->messages.at("forced_gptq") + "\" when gptq is forced [" + a->stamp() + "]";
        add("--kernel generic: weight-only schemes are priced as dequantize-then-GEMM, the path engines take when no Marlin-class kernel "
            "applies (a forced --quantization gptq, an unsupported group size or bit width, a GPU below the Marlin minimum); at large batch "
            "it runs slower than bf16" + forced);
    }
    for (const char* engine : {"vllm", "sglang"}) {
        const EngineSnapshot* s = reg.latest(engine);
        if (!s) continue;
        if (const auto why = kv_cache_refusal(*s, kv_name)) add("--kv " + kv_name + ": " + *why + " [" + s->stamp() + ", " + s->kv_cache_file + "]");
        for (const Scheme& scheme : schemes) {
            const auto q = engine_query_for_scheme(scheme);
            if (!q) continue;
            const EngineResolution r = resolve_engine(*s, *q, target);
            const std::string who = scheme_name(scheme) + " (declared " + q->method + ") on " + gpu_name + ": " + s->engine_name + " " + s->id;
            for (const std::string& e : r.errors) add(who + " refuses it: " + e + " [" + s->stamp() + "]");
            for (const std::string& w : r.warnings)
                add(who + " logs \"" + w + "\" [" + s->stamp() + (s->optimized_file.empty() ? "" : ", " + s->optimized_file) + "]");
            if (!r.refused && r.kernel_class == KernelClass::Generic && kernel == KernelQuality::Fused && scheme.is_weight_only())
                add(who + " resolves the generic kernel " + r.kernel + " (" + r.resolved_method + "); priced as fused here, rerun with --kernel generic to price it");
        }
    }
    return out;
}

}  // namespace quantplan
