#include "core/fidelity/corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/text_file.h"

namespace quantplan::fidelity {
namespace {

using nlohmann::json;

constexpr Metric kAllMetrics[] = {Metric::DecodeTokensPerS, Metric::OutputTokensPerS, Metric::TpotS, Metric::ItlS, Metric::TtftS,
                                  Metric::E2eS, Metric::PrefillS, Metric::KvCacheTokens, Metric::GpuBlocks, Metric::KvCacheBytes,
                                  Metric::WeightsBytes, Metric::ActivationPeakBytes, Metric::NonTorchBytes, Metric::CudaGraphBytes,
                                  Metric::MaxConcurrency, Metric::KernelTimeS};

enum class Dimension { Time, Rate, Bytes, Tokens, Blocks, Ratio };

Dimension dimension_of(Metric m) {
    switch (m) {
        case Metric::DecodeTokensPerS:
        case Metric::OutputTokensPerS: return Dimension::Rate;
        case Metric::TpotS:
        case Metric::ItlS:
        case Metric::TtftS:
        case Metric::E2eS:
        case Metric::PrefillS:
        case Metric::KernelTimeS: return Dimension::Time;
        case Metric::KvCacheTokens: return Dimension::Tokens;
        case Metric::GpuBlocks: return Dimension::Blocks;
        case Metric::KvCacheBytes:
        case Metric::WeightsBytes:
        case Metric::ActivationPeakBytes:
        case Metric::NonTorchBytes:
        case Metric::CudaGraphBytes: return Dimension::Bytes;
        case Metric::MaxConcurrency: return Dimension::Ratio;
    }
    return Dimension::Ratio;
}

// The factor from `unit` to SI for `metric`; throws when the unit does not go with it.
double unit_factor(Metric metric, const std::string& unit, const std::string& path) {
    struct Unit {
        const char* name;
        Dimension dim;
        double factor;
    };
    static const Unit units[] = {
        {"tokens/s", Dimension::Rate, 1}, {"tok/s", Dimension::Rate, 1},     {"token/s", Dimension::Rate, 1},
        {"s", Dimension::Time, 1},        {"ms", Dimension::Time, 1e-3},     {"us", Dimension::Time, 1e-6},
        {"bytes", Dimension::Bytes, 1},   {"B", Dimension::Bytes, 1},        {"GiB", Dimension::Bytes, 1073741824.0},
        {"MiB", Dimension::Bytes, 1048576.0}, {"GB", Dimension::Bytes, 1e9}, {"tokens", Dimension::Tokens, 1},
        {"blocks", Dimension::Blocks, 1}, {"x", Dimension::Ratio, 1},
    };
    for (const Unit& u : units)
        if (unit == u.name) {
            if (u.dim != dimension_of(metric)) throw Error(path + ".unit", "'" + unit + "' does not measure " + metric_name(metric));
            return u.factor;
        }
    throw Error(path + ".unit", "unknown unit '" + clip_text(unit, 40) + "'");
}

// A setup value: null or absent is unset; a value of the wrong type is an error naming it.
std::optional<double> opt_number(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) throw Error(path + "." + key, std::string("must be a number or null, got a ") + it->type_name());
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0 || v > 1e15) throw Error(path + "." + key, "must be a finite, non-negative number");
    return v;
}
std::optional<std::int64_t> opt_count(const json& j, const char* key, const std::string& path) {
    const std::optional<double> v = opt_number(j, key, path);
    if (!v) return std::nullopt;
    return static_cast<std::int64_t>(*v);
}
std::optional<bool> opt_flag(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) throw Error(path + "." + key, std::string("must be true, false or null, got a ") + it->type_name());
    return it->get<bool>();
}
std::string opt_text(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return "";
    if (it->is_number()) return it->dump();  // a version written as a number
    if (!it->is_string()) throw Error(path + "." + key, std::string("must be a string or null, got a ") + it->type_name());
    return it->get<std::string>();
}

RecordSetup parse_setup(const json& s, const std::string& path) {
    if (!s.is_object()) throw Error(path, "must be an object");
    RecordSetup r;
    r.engine = opt_text(s, "engine", path);
    for (char& c : r.engine) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.engine_version = opt_text(s, "engine_version", path);
    if (!r.engine_version.empty() && (r.engine_version[0] == 'v' || r.engine_version[0] == 'V')) r.engine_version.erase(0, 1);
    r.gpu = opt_text(s, "gpu", path);
    r.tp = opt_count(s, "tp", path).value_or(1);
    if (r.tp < 1 || r.tp > 64) throw Error(path + ".tp", "must be 1 to 64");
    r.model = opt_text(s, "model", path);
    r.base_architecture = opt_text(s, "base_architecture", path);
    r.checkpoint = opt_text(s, "checkpoint", path);
    r.scheme = opt_text(s, "scheme", path);
    r.quantization = opt_text(s, "quantization_as_stated", path);
    r.batch = opt_count(s, "batch", path);
    r.concurrency = opt_count(s, "concurrency", path);
    r.request_rate = opt_number(s, "request_rate", path);
    r.input_tokens = opt_count(s, "input_tokens", path);
    r.input_tokens_p50 = opt_count(s, "input_tokens_p50", path);
    r.output_tokens_p50 = opt_count(s, "output_tokens_p50", path);
    r.output_tokens = opt_count(s, "output_tokens", path);
    r.num_prompts = opt_count(s, "num_prompts", path);
    r.total_input_tokens = opt_count(s, "total_input_tokens", path);
    r.total_output_tokens = opt_count(s, "total_output_tokens", path);
    r.gpu_memory_utilization = opt_number(s, "gpu_memory_utilization", path);
    r.mem_fraction_static = opt_number(s, "mem_fraction_static", path);
    r.max_model_len = opt_count(s, "max_model_len", path);
    r.max_num_seqs = opt_count(s, "max_num_seqs", path);
    r.max_num_batched_tokens = opt_count(s, "max_num_batched_tokens", path);
    r.chunked_prefill = opt_flag(s, "chunked_prefill", path);
    r.kv_cache_dtype = opt_text(s, "kv_cache_dtype", path);
    r.cuda_graphs = opt_flag(s, "cuda_graphs", path);
    if (const auto eager = opt_flag(s, "enforce_eager", path); eager && !r.cuda_graphs) r.cuda_graphs = !*eager;
    if (const std::string sampler = opt_text(s, "top_k_top_p_sampler", path); !sampler.empty()) {
        if (sampler != "native" && sampler != "flashinfer") throw Error(path + ".top_k_top_p_sampler", "must be \"native\" or \"flashinfer\"");
        r.native_sampler = sampler == "native";
    }
    r.dataset = opt_text(s, "dataset", path);
    r.kv_transfer_config = opt_text(s, "kv_transfer_config", path);
    r.in_process = opt_flag(s, "in_process", path);
    r.op = opt_text(s, "op", path);
    r.kernel_family = opt_text(s, "kernel_family", path);
    if (r.kernel_family.empty()) r.kernel_family = opt_text(s, "family", path);
    r.gemm_dtype = opt_text(s, "gemm_dtype", path);
    r.m = opt_count(s, "m", path);
    r.n = opt_count(s, "n", path);
    r.k = opt_count(s, "k", path);
    r.kv_len = opt_count(s, "kv_len", path);
    r.num_heads = opt_count(s, "num_heads", path);
    if (!r.num_heads) r.num_heads = opt_count(s, "heads", path);
    r.num_kv_heads = opt_count(s, "num_kv_heads", path);
    if (!r.num_kv_heads) r.num_kv_heads = opt_count(s, "kv_heads", path);
    r.head_dim = opt_count(s, "head_dim", path);
    r.num_tokens = opt_count(s, "num_tokens", path);
    r.hidden_size = opt_count(s, "hidden_size", path);
    r.inter_size = opt_count(s, "inter_size", path);
    r.topk = opt_count(s, "topk", path);
    r.num_experts = opt_count(s, "num_experts", path);
    r.moe_tp_size = opt_count(s, "moe_tp_size", path);
    r.moe_ep_size = opt_count(s, "moe_ep_size", path);
    r.distribution = opt_text(s, "distribution", path);
    return r;
}

// `over` merged onto `base` key by key (one level: setup objects are flat).
json merged(const json& base, const json& over) {
    json out = base.is_object() ? base : json::object();
    if (over.is_object())
        for (const auto& [k, v] : over.items()) out[k] = v;
    return out;
}

std::string source_key_of(const std::string& file, const json& source) {
    std::string key = file;
    if (source.is_object()) {
        for (const char* k : {"issue", "pr", "url", "repository"}) {
            const auto it = source.find(k);
            if (it != source.end() && !it->is_null()) {
                key += "#" + (it->is_string() ? it->get<std::string>() : it->dump());
                break;
            }
        }
    }
    return key;
}

}  // namespace

const char* metric_name(Metric m) {
    switch (m) {
        case Metric::DecodeTokensPerS: return "decode_tokens_per_s";
        case Metric::OutputTokensPerS: return "output_tokens_per_s";
        case Metric::TpotS: return "tpot_s";
        case Metric::ItlS: return "itl_s";
        case Metric::TtftS: return "ttft_s";
        case Metric::E2eS: return "e2e_s";
        case Metric::PrefillS: return "prefill_s";
        case Metric::KvCacheTokens: return "kv_cache_tokens";
        case Metric::GpuBlocks: return "gpu_blocks";
        case Metric::KvCacheBytes: return "kv_cache_bytes";
        case Metric::WeightsBytes: return "weights_bytes";
        case Metric::ActivationPeakBytes: return "activation_peak_bytes";
        case Metric::NonTorchBytes: return "non_torch_bytes";
        case Metric::CudaGraphBytes: return "cuda_graph_bytes";
        case Metric::MaxConcurrency: return "max_concurrency";
        case Metric::KernelTimeS: return "kernel_time_s";
    }
    return "?";
}

Metric parse_metric(std::string_view name, const std::string& field) {
    for (Metric m : kAllMetrics)
        if (name == metric_name(m)) return m;
    throw Error(field, "unknown metric '" + clip_text(name, 40) + "'");
}

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state) {
    for (unsigned char c : bytes) {
        state ^= c;
        state *= 0x100000001b3ull;
    }
    return state;
}

std::vector<Record> parse_corpus_file(std::string_view text, const std::string& file) {
    const json j = parse_untrusted_json(text, file);
    if (!j.is_object()) throw Error(file, "a corpus file is a JSON object");
    const auto format = j.find("format");
    if (format == j.end() || *format != "quantplan-measurements/1") throw Error(file + ".format", "expected \"quantplan-measurements/1\"");
    const json no_object = json::object();
    const json& defaults = j.contains("defaults") ? j["defaults"] : no_object;
    const json file_source = j.contains("source") ? j["source"] : json::object();
    const json default_setup = defaults.contains("setup") ? defaults["setup"] : json::object();
    const bool default_counts_prompt = defaults.contains("speed_counts_prompt") && defaults["speed_counts_prompt"] == true;
    const auto records = j.find("records");
    if (records == j.end() || !records->is_array()) throw Error(file + ".records", "must be an array");
    std::vector<Record> out;
    out.reserve(records->size());
    for (std::size_t i = 0; i < records->size(); ++i) {
        const json& r = (*records)[i];
        const std::string path = file + ".records[" + std::to_string(i) + "]";
        if (!r.is_object()) throw Error(path, "must be an object");
        Record rec;
        rec.file = file;
        rec.id = opt_text(r, "id", path);
        if (rec.id.empty()) throw Error(path + ".id", "missing");
        rec.metric = parse_metric(opt_text(r, "metric", path), path + ".metric");
        rec.stat = opt_text(r, "stat", path);
        rec.component = opt_text(r, "component", path);
        if (!rec.component.empty() && rec.component != "K" && rec.component != "V")
            throw Error(path + ".component", "must be \"K\" or \"V\", got '" + clip_text(rec.component, 40) + "'");
        // A value as published may be negative ("Graph capturing ... took -0.41 GiB"): only finite.
        const auto vi = r.find("value");
        if (vi == r.end() || vi->is_null()) throw Error(path + ".value", "missing");
        if (!vi->is_number() || !std::isfinite(vi->get<double>()) || std::abs(vi->get<double>()) > 1e15)
            throw Error(path + ".value", "must be a finite number");
        const std::optional<double> v = vi->get<double>();
        rec.value_as_published = *v;
        rec.unit = opt_text(r, "unit", path);
        rec.value = *v * unit_factor(rec.metric, rec.unit, path);
        rec.metric_definition = opt_text(r, "metric_definition", path);
        rec.speed_counts_prompt = opt_flag(r, "speed_counts_prompt", path).value_or(default_counts_prompt);
        rec.setup = parse_setup(merged(default_setup, r.contains("setup") ? r["setup"] : json::object()), path + ".setup");
        rec.source_key = source_key_of(file, merged(file_source, r.contains("source") ? r["source"] : json::object()));
        out.push_back(std::move(rec));
    }
    return out;
}

Corpus load_corpus(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& extra_files) {
    Corpus c;
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec))
    {
        // speculative/ and disaggregated/ hold corpora in their own formats, read apart
        // (core/fidelity/spec_fit.h; docs/disaggregation.md).
        if (it->is_directory() && it.depth() == 0 &&
            (it->path().filename() == "speculative" || it->path().filename() == "disaggregated")) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
    }
    if (ec) throw Error(dir.string(), "cannot list the corpus: " + ec.message());
    std::sort(files.begin(), files.end());
    files.insert(files.end(), extra_files.begin(), extra_files.end());
    std::uint64_t h = fnv1a64("");
    std::set<std::string> ids;
    for (const auto& f : files) {
        const std::string text = read_text_file(f, "corpus file");
        const std::string name = f.lexically_relative(dir).empty() || f.lexically_relative(dir).string().rfind("..", 0) == 0
                                     ? f.filename().string()
                                     : f.lexically_relative(dir).generic_string();
        h = fnv1a64(name, h);
        h = fnv1a64(text, h);
        for (Record& r : parse_corpus_file(text, name)) {
            if (!ids.insert(r.id).second) throw Error(name, "record id '" + clip_text(r.id, 80) + "' appears twice in the corpus");
            c.records.push_back(std::move(r));
        }
        c.files.push_back(name);
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    c.checksum = std::string("fnv1a64:") + buf;
    return c;
}

}  // namespace quantplan::fidelity
