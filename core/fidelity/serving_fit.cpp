#include "core/fidelity/serving_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/stats.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/engine/step_model.h"
#include "core/fidelity/corpus.h"
#include "core/roofline/roofline.h"
#include "core/serve/capacity.h"

namespace quantplan::fidelity {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxRunLength = 1 << 20;  // tokens of one request's prompt or output
// A stated fixed length whose run's totals differ by more than this share is replayed at the totals'
// mean: 2% is above what a random dataset's re-tokenized prompts move (vLLM's random prompts: 1999249
// tokens for 500 x 4000 asked, -0.04%) and below an answer that stopped early (gpt-oss: -33%).
constexpr double kStatedLengthTolerance = 0.02;

std::optional<double> number_at(const json& s, const char* key) {
    const auto it = s.find(key);
    if (it == s.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<std::int64_t> count_at(const json& s, const char* key, const std::string& where) {
    const std::optional<double> v = number_at(s, key);
    if (!v) return std::nullopt;
    if (*v < 0 || *v > 1e9 || *v != std::floor(*v)) throw Error(where + "." + key, "must be a whole number from 0 to 1e9");
    return static_cast<std::int64_t>(*v);
}

std::string text_at(const json& s, const char* key) {
    const auto it = s.find(key);
    return it != s.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<bool> flag_at(const json& s, const char* key) {
    const auto it = s.find(key);
    return it != s.end() && it->is_boolean() ? std::optional<bool>(it->get<bool>()) : std::nullopt;
}

// Seconds or tokens/s from a published value and its unit.
double si(double value, const std::string& unit, const std::string& where) {
    if (unit == "ms") return value * 1e-3;
    if (unit == "s" || unit == "tok/s" || unit == "tokens/s" || unit == "req/s" || unit == "requests/s") return value;
    if (unit == "us") return value * 1e-6;
    throw Error(where + ".unit", "'" + unit + "' is not ms, s, tok/s or req/s");
}

}  // namespace

std::vector<ServingRunRecord> load_serving_runs(const std::filesystem::path& dir, std::string* checksum) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") files.push_back(e.path());
    if (ec) throw Error(dir.string(), "cannot list the serving runs: " + ec.message());
    std::sort(files.begin(), files.end());
    std::uint64_t sum = fnv1a64("");
    std::vector<ServingRunRecord> out;
    // A lengths CSV under the folder: "input_tokens,output_tokens" a line after a header. A request
    // that streamed no token (output 0: a failed one the client still counted) is left out, as
    // --check leaves it out of a result file's lengths. Read files enter the checksum.
    const auto read_lengths = [&](const std::string& lengths, const std::string& where, std::vector<std::int64_t>& in_lens,
                                  std::vector<std::int64_t>& out_lens) {
        const std::string body = read_text_file(dir / lengths, "lengths file", 16 << 20);
        sum = fnv1a64(lengths, sum);
        sum = fnv1a64(body, sum);
        std::size_t from = 0;
        std::int64_t line_no = 0;
        while (from < body.size()) {
            const std::size_t end = std::min(body.find('\n', from), body.size());
            const std::string line = body.substr(from, end - from);
            from = end + 1;
            ++line_no;
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            long long a = -1, b = -1;
            if (std::sscanf(line.c_str(), "%lld,%lld", &a, &b) != 2) {
                if (line_no == 1) continue;  // the header
                throw Error(where, lengths + ":" + std::to_string(line_no) + ": expects input_tokens,output_tokens");
            }
            if (a < 0 || b < 0 || a > kMaxRunLength || b > kMaxRunLength)
                throw Error(where, lengths + ":" + std::to_string(line_no) + ": a length is 0 to 2^20 tokens");
            if (a < 1 || b < 1) continue;
            in_lens.push_back(a);
            out_lens.push_back(b);
            if (in_lens.size() > 1'000'000) throw Error(where, "more than 1,000,000 requests");
        }
    };
    for (const auto& path : files) {
        const std::string name = path.filename().string();
        const std::string text = read_text_file(path, "serving runs", 64 << 20);
        sum = fnv1a64(name, sum);
        sum = fnv1a64(text, sum);
        const json doc = json::parse(text, nullptr, false);
        if (doc.is_discarded() || !doc.is_object()) throw Error(name, "is not a JSON object");
        if (text_at(doc, "format") != "quantplan-measurements/1") throw Error(name + ".format", "must be quantplan-measurements/1");
        json defaults = json::object();
        if (doc.contains("defaults") && doc["defaults"].is_object() && doc["defaults"].contains("setup") && doc["defaults"]["setup"].is_object())
            defaults = doc["defaults"]["setup"];
        std::string source = name;
        if (doc.contains("source") && doc["source"].is_object())
            if (const std::string repo = text_at(doc["source"], "repository"); !repo.empty()) source = repo;
        if (!doc.contains("records") || !doc["records"].is_array()) throw Error(name + ".records", "must be an array");
        std::map<std::string, std::size_t> by_run;
        for (std::size_t i = 0; i < doc["records"].size(); ++i) {
            const json& r = doc["records"][i];
            const std::string where = name + ".records[" + std::to_string(i) + "]";
            if (!r.is_object()) throw Error(where, "must be an object");
            json s = defaults;
            if (r.contains("setup") && r["setup"].is_object())
                for (const auto& [k, v] : r["setup"].items()) s[k] = v;
            const std::string run = text_at(s, "run");
            if (run.empty()) throw Error(where + ".setup.run", "names the run the record belongs to");
            auto [it, added] = by_run.emplace(run, out.size());
            if (added) {
                ServingRunRecord x;
                x.run = run;
                x.file = name;
                x.source = source;
                x.engine = text_at(s, "engine");
                x.engine_version = text_at(s, "engine_version");
                if (!x.engine_version.empty() && (x.engine_version[0] == 'v' || x.engine_version[0] == 'V')) x.engine_version.erase(0, 1);
                x.vllm_v0 = flag_at(s, "vllm_use_v1").has_value() && !*flag_at(s, "vllm_use_v1");
                x.gpu = text_at(s, "gpu");
                x.model = text_at(s, "model");
                x.scheme = text_at(s, "scheme");
                x.tp = count_at(s, "tp", where).value_or(1);
                x.request_rate = number_at(s, "request_rate");
                x.burstiness = number_at(s, "burstiness");
                x.concurrency = count_at(s, "concurrency", where);
                x.requests = count_at(s, "completed", where).value_or(count_at(s, "num_prompts", where).value_or(0));
                x.input_tokens = count_at(s, "input_tokens", where);
                x.output_tokens = count_at(s, "output_tokens", where);
                x.input_len_spec = text_at(s, "input_len_spec");
                x.output_len_spec = text_at(s, "output_len_spec");
                x.total_input_tokens = count_at(s, "total_input_tokens", where);
                x.total_output_tokens = count_at(s, "total_output_tokens", where);
                x.gpu_memory_utilization = number_at(s, "gpu_memory_utilization");
                x.mem_fraction_static = number_at(s, "mem_fraction_static");
                x.max_model_len = count_at(s, "max_model_len", where);
                x.max_num_seqs = count_at(s, "max_num_seqs", where);
                x.max_num_batched_tokens = count_at(s, "max_num_batched_tokens", where);
                if (!x.max_num_batched_tokens) x.max_num_batched_tokens = count_at(s, "chunked_prefill_size", where);
                x.chunked_prefill = flag_at(s, "chunked_prefill");
                x.kv_cache_dtype = text_at(s, "kv_cache_dtype");
                x.cuda_graphs = flag_at(s, "cuda_graphs");
                x.dataset = text_at(s, "dataset");
                x.gpu_p2p = flag_at(s, "gpu_p2p");
                // The settings that keep a run out of the replay are read strictly: a value of
                // another type would otherwise read as absent and the run replay as plain TP.
                for (const char* key : {"pipeline_parallel", "data_parallel", "num_scheduler_steps"})
                    if (s.contains(key) && !s[key].is_null() && !s[key].is_number())
                        throw Error(where + ".setup." + key, "must be a whole number or null");
                for (const char* key : {"dp_attention", "expert_parallel", "speculative_decoding"})
                    if (s.contains(key) && !s[key].is_null() && !s[key].is_boolean()) throw Error(where + ".setup." + key, "must be true, false or null");
                if (s.contains("not_replayed_because") && !s["not_replayed_because"].is_null() && !s["not_replayed_because"].is_string())
                    throw Error(where + ".setup.not_replayed_because", "must be text or null");
                x.pipeline_parallel = count_at(s, "pipeline_parallel", where);
                x.data_parallel = count_at(s, "data_parallel", where);
                x.num_scheduler_steps = count_at(s, "num_scheduler_steps", where);
                x.dp_attention = flag_at(s, "dp_attention");
                x.expert_parallel = flag_at(s, "expert_parallel");
                x.speculative_decoding = flag_at(s, "speculative_decoding");
                x.not_replayed_because = text_at(s, "not_replayed_because");
                if (const std::string lengths = text_at(s, "lengths_file"); !lengths.empty()) {
                    if (lengths.find("..") != std::string::npos) throw Error(where + ".setup.lengths_file", "must stay inside the folder");
                    read_lengths(lengths, where + ".setup.lengths_file", x.input_lens, x.output_lens);
                } else if (!x.dataset.empty() && x.dataset.find_first_of("/\\.") == std::string::npos) {
                    // No lengths of its own: the dataset's reference sample, when the folder has one.
                    const std::string shape = "lengths/dataset-" + x.dataset + ".csv";
                    if (std::filesystem::is_regular_file(dir / shape)) read_lengths(shape, where + ".setup.dataset", x.shape_input_lens, x.shape_output_lens);
                }
                out.push_back(std::move(x));
            }
            ServingRunRecord& x = out[it->second];
            const std::string metric = text_at(r, "metric");
            std::string stat = text_at(r, "stat");
            const std::optional<double> value = number_at(r, "value");
            if (!value || !(*value > 0)) continue;  // a zero or missing figure is not compared
            const bool latency = metric == "ttft_s" || metric == "tpot_s" || metric == "itl_s" || metric == "e2e_s";
            const bool rate = metric == "requests_per_s" || metric == "output_tokens_per_s" || metric == "total_tokens_per_s";
            if (!latency && !rate) continue;
            if (latency && stat != "mean" && stat != "p50") continue;  // tails stay in the corpus
            if (rate) stat.clear();
            x.figures.push_back({metric, stat, si(*value, text_at(r, "unit"), where), text_at(r, "id")});
        }
    }
    if (checksum) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(sum));
        *checksum = buf;
    }
    return out;
}

std::string serving_group(const engine::EngineProfile& p) {
    if (p.engine == "sglang") return "sglang";
    return p.id.rfind("vllm-v0", 0) == 0 ? "vllm-v0" : "vllm-v1";
}

namespace {

// A run ready to replay.
struct Prepared {
    const ServingRunRecord* rec = nullptr;
    std::string group;
    ModelConfig model;
    GpuProfile gpu;
    engine::EngineSetup setup;
    Workload w;
    SchemeCosts costs;
    Admission admission;
    std::vector<serve::Request> requests;
    std::int64_t closed_loop_users = 0;
    std::string load;
};

// The serving terms as a vector (the search's coordinates).
struct Theta {
    double v[4] = {0, 0, 0, 0};  // host_per_sequence_s, host_per_prefill_sequence_s, frontend_latency_s, frontend_serial_s
};
constexpr double kUpper[4] = {2e-3, 0.02, 0.5, 0.02};
// The coordinates searched (the frontend latency is not: fit_terms says why).
constexpr int kSearched[3] = {0, 1, 3};

engine::ServingTerms terms_of(const Theta& t) {
    engine::ServingTerms s;
    s.host_per_sequence_s = t.v[0];
    s.host_per_prefill_sequence_s = t.v[1];
    s.frontend_latency_s = t.v[2];
    s.frontend_serial_s = t.v[3];
    s.fitted = true;
    return s;
}

std::optional<Prepared> prepare(const ServingRunRecord& r, const ServingFitInputs& in, std::string& why) {
    Prepared p;
    p.rec = &r;
    if (r.engine != "vllm" && r.engine != "sglang") return why = "engine not modelled", std::nullopt;
    if (r.engine_version.empty()) return why = "engine version not stated", std::nullopt;
    if (r.model.empty()) return why = "model not a bundled one", std::nullopt;
    if (r.gpu.empty()) return why = "GPU not stated", std::nullopt;
    if (r.scheme.empty()) return why = "scheme not stated", std::nullopt;
    if (r.figures.empty()) return why = "no figure to compare", std::nullopt;
    if (!r.not_replayed_because.empty()) return why = "set apart by the corpus (setup.not_replayed_because)", std::nullopt;
    // Set-ups the replay does not model are not priced as if they were plain tensor parallelism
    // (GPUStack's gpt-oss-120b at PP 2 on two H100s, replayed on one, came out at TTFT +400%).
    if (r.pipeline_parallel.value_or(1) > 1) return why = "pipeline parallelism (not modelled by the replay)", std::nullopt;
    if (r.data_parallel.value_or(1) > 1 || r.dp_attention.value_or(false))
        return why = "data parallelism or DP attention (not modelled by the replay)", std::nullopt;
    if (r.expert_parallel.value_or(false)) return why = "expert parallelism (not modelled by the replay)", std::nullopt;
    if (r.speculative_decoding.value_or(false)) return why = "speculative decoding (not modelled by the replay)", std::nullopt;
    if (r.requests < 1) return why = "request count not stated", std::nullopt;
    if (r.requests > in.max_requests) return why = "more than " + std::to_string(in.max_requests) + " requests (not replayed)", std::nullopt;
    if (r.total_output_tokens && *r.total_output_tokens > in.max_output_tokens)
        return why = "more than " + std::to_string(in.max_output_tokens) + " output tokens in all (not replayed, for time)", std::nullopt;
    try {
        p.model = resolve_model(r.model, in.models_dir);
    } catch (const Error&) {
        return why = "model not a bundled one", std::nullopt;
    }
    const auto g = std::find_if(in.gpus.begin(), in.gpus.end(), [&](const GpuProfile& x) { return x.id == r.gpu; });
    if (g == in.gpus.end()) return why = "GPU not bundled", std::nullopt;
    p.gpu = *g;
    Scheme scheme;
    try {
        scheme = parse_scheme(r.scheme);
    } catch (const Error&) {
        return why = "scheme not priced", std::nullopt;
    }
    try {
        // VLLM_USE_V1=0 at a V1-era version runs the V0 engine: its profile, at the version stated.
        p.setup = engine::make_engine_setup(*in.catalog, r.vllm_v0 ? "vllm@0.7.3" : r.engine + "@" + r.engine_version, true);
        if (r.vllm_v0) p.setup.choice.version_asked = r.engine_version;
    } catch (const Error&) {
        return why = "engine version not covered by a profile", std::nullopt;
    }
    p.group = serving_group(p.setup.profile);
    if (p.model.num_attention_heads % r.tp != 0) return why = "TP does not divide the heads", std::nullopt;
    // The requests: the file's own lengths, fixed lengths, a stated distribution, the dataset's
    // reference sample scaled to the run's means, or the means.
    std::int64_t mean_in = 0, mean_out = 0;
    if (r.total_input_tokens && r.total_output_tokens && r.requests > 0) {
        mean_in = std::max<std::int64_t>(1, std::llround(static_cast<double>(*r.total_input_tokens) / static_cast<double>(r.requests)));
        mean_out = std::max<std::int64_t>(1, std::llround(static_cast<double>(*r.total_output_tokens) / static_cast<double>(r.requests)));
    }
    std::vector<std::int64_t> in_lens = r.input_lens, out_lens = r.output_lens;
    const bool stated_lengths = r.input_tokens || r.output_tokens || !r.input_len_spec.empty() || !r.output_len_spec.empty();
    if (in_lens.empty() && !stated_lengths && !r.shape_input_lens.empty()) {
        // A dataset's lengths are heavy-tailed (ShareGPT: a median answer under the mean, a few
        // near the client's cap), and a burst's waves, its batch turnover and its tail are theirs;
        // replayed at the mean, every answer would end at once. The reference sample's pairs in
        // order, scaled to this run's means (its tokenizer and its model's answers differ).
        double shape_in = 0, shape_out = 0;
        for (std::size_t i = 0; i < r.shape_input_lens.size(); ++i) {
            shape_in += static_cast<double>(r.shape_input_lens[i]);
            shape_out += static_cast<double>(r.shape_output_lens[i]);
        }
        // A run that states no totals is replayed with the sample's lengths as they are.
        const double scale_in = mean_in > 0 ? static_cast<double>(mean_in) * static_cast<double>(r.shape_input_lens.size()) / shape_in : 1.0;
        const double scale_out = mean_out > 0 ? static_cast<double>(mean_out) * static_cast<double>(r.shape_output_lens.size()) / shape_out : 1.0;
        for (std::int64_t i = 0; i < r.requests; ++i) {
            const std::size_t k = static_cast<std::size_t>(i) % r.shape_input_lens.size();
            in_lens.push_back(std::max<std::int64_t>(1, std::llround(static_cast<double>(r.shape_input_lens[k]) * scale_in)));
            out_lens.push_back(std::max<std::int64_t>(1, std::llround(static_cast<double>(r.shape_output_lens[k]) * scale_out)));
        }
    }
    const std::int64_t n = in_lens.empty() ? r.requests : static_cast<std::int64_t>(in_lens.size());
    // A stated fixed length is what the client asked for; the totals are what ran. Where they
    // differ (answers that stopped at the model's end of text, without ignore_eos: gpt-oss's mean
    // answer of 134 tokens where 200 were asked), the run is replayed at what ran.
    const auto as_ran = [](const std::optional<std::int64_t>& fixed, std::int64_t mean) -> std::optional<std::int64_t> {
        if (fixed && mean > 0 && std::abs(static_cast<double>(mean) / static_cast<double>(*fixed) - 1.0) > kStatedLengthTolerance) return mean;
        return fixed;
    };
    serve::Traffic t;
    t.requests = n;
    t.seed = 1;
    const auto spec = [&](const std::optional<std::int64_t>& fixed, const std::string& text, std::int64_t mean) -> std::optional<serve::LengthSpec> {
        if (fixed && *fixed >= 1) return serve::parse_length_spec(std::to_string(*fixed), "lengths");
        if (!text.empty()) {
            std::string s = text;
            if (s.rfind("uniform:0:", 0) == 0) s = "uniform:1:" + s.substr(10);  // at least one token
            try {
                return serve::parse_length_spec(s, "lengths");
            } catch (const Error&) {
            }
        }
        if (mean >= 1) return serve::parse_length_spec(std::to_string(mean), "lengths");
        return std::nullopt;
    };
    if (in_lens.empty()) {
        const auto a = spec(as_ran(r.input_tokens, mean_in), r.input_len_spec, mean_in), b = spec(as_ran(r.output_tokens, mean_out), r.output_len_spec, mean_out);
        if (!a || !b) return why = "lengths not stated", std::nullopt;
        t.input = *a;
        t.output = *b;
        if (t.input.kind == serve::LengthSpec::Kind::Fixed && t.input.a > static_cast<double>(kMaxRunLength)) return why = "lengths beyond 2^20", std::nullopt;
    }
    if (r.request_rate) {
        t.rate_per_s = *r.request_rate;
        if (r.burstiness && *r.burstiness > 0 && *r.burstiness != 1) t.arrival = serve::parse_arrival("gamma:" + std::to_string(1 / std::sqrt(*r.burstiness)), "burstiness");
    }
    p.requests = serve::make_requests(t, r.request_rate.value_or(0.0));
    for (std::size_t i = 0; i < in_lens.size(); ++i) {
        p.requests[i].input_tokens = std::max<std::int64_t>(1, in_lens[i]);
        p.requests[i].output_tokens = std::max<std::int64_t>(1, out_lens[i]);
    }
    std::int64_t longest = 0;
    for (const serve::Request& q : p.requests) longest = std::max(longest, q.input_tokens + q.output_tokens);
    if (r.concurrency && (!r.request_rate || *r.concurrency < n)) p.closed_loop_users = std::min(*r.concurrency, n);
    if (!r.request_rate && !r.concurrency) p.closed_loop_users = n;  // every request at once
    p.load = r.request_rate ? "rate " + std::to_string(*r.request_rate).substr(0, 5) + (p.closed_loop_users ? ", concurrency " + std::to_string(p.closed_loop_users) : "")
             : r.concurrency ? "concurrency " + std::to_string(p.closed_loop_users)
                             : std::to_string(n) + " at once";
    // The engine as the run set it up, else the version's defaults on this GPU.
    const std::int64_t max_model_len = r.max_model_len.value_or(std::max<std::int64_t>(longest, 1));
    p.setup.profile.defaults = engine::defaults_for_run(p.setup.profile, p.gpu.id, p.gpu.memory_usable_bytes, p.setup.choice.version_asked, max_model_len);
    engine::EngineDefaults& d = p.setup.profile.defaults;
    if (r.chunked_prefill) d.chunked_prefill = *r.chunked_prefill;
    // vLLM V0's multi-step scheduling (2026-12-06): replayed with its windows (serve::EngineLimits::
    // multi_steps) where engine::multi_step_refusal allows it; elsewhere the run is not replayed.
    if (r.num_scheduler_steps && !engine::multi_step_refusal(p.setup.profile, p.setup.choice.version_asked, *r.num_scheduler_steps).empty())
        return why = "multi-step scheduling where the replay has none (not vLLM V0 0.5.5 on, chunked prefill, or above 64 steps)", std::nullopt;
    if (r.cuda_graphs) d.cuda_graphs = *r.cuda_graphs;
    if (r.mem_fraction_static) d.mem_fraction_static = *r.mem_fraction_static;
    p.w.engine.gpu_memory_utilization = r.gpu_memory_utilization.value_or(d.gpu_memory_utilization);
    p.w.engine.max_num_seqs = r.max_num_seqs.value_or(d.max_num_seqs);
    p.w.engine.max_num_batched_tokens = r.max_num_batched_tokens.value_or(d.max_num_batched_tokens);
    p.w.engine.kv_block_tokens = d.block_size_tokens;
    p.w.context_tokens = std::max(max_model_len, longest);
    p.w.tensor_parallel = r.tp;
    p.w.gpu_p2p = r.gpu_p2p;
    p.w.engine.num_scheduler_steps = r.num_scheduler_steps.value_or(1);
    if (!r.kv_cache_dtype.empty() && r.kv_cache_dtype != "auto") {
        try {
            p.w.kv = parse_kv_format(r.kv_cache_dtype.find("fp8") != std::string::npos ? "fp8" : r.kv_cache_dtype);
        } catch (const Error&) {
            return why = "KV-cache dtype not priced", std::nullopt;
        }
    }
    try {
        const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(p.model));
        p.costs = engine::costs_as_served(scheme_costs(p.model, inventory, scheme, p.w.kv, p.gpu), p.model, p.setup.profile);
        p.admission = engine::engine_admission(p.costs, p.model, p.gpu, p.setup, p.w);
    } catch (const Error& e) {
        return why = std::string("not priced: ") + e.what(), std::nullopt;
    }
    if (!p.admission.fits) return why = "does not fit as set up", std::nullopt;
    if (p.admission.kv_cache_tokens < longest + p.w.engine.kv_block_tokens) return why = "its longest request does not fit the predicted KV cache", std::nullopt;
    return p;
}

// A run's predicted figures ("ttft_s:mean", "requests_per_s:", ...) with `terms` (nullopt: off).
std::map<std::string, double> predict(const Prepared& p, const std::optional<engine::ServingTerms>& terms) {
    engine::EngineSetup setup = p.setup;
    setup.profile.serving = terms.value_or(engine::ServingTerms{});
    const serve::EnginePricing pricing = serve::engine_pricing(p.costs, p.model, p.gpu, setup, p.w, p.admission);
    const serve::SimulationResult sim = serve::simulate(p.requests, pricing.limits, pricing.cost, 20'000'000, p.closed_loop_users);
    const serve::ServeStats s = serve::summarize(sim, p.requests, serve::Slo{});
    std::map<std::string, double> out;
    for (const auto& [name, q] : {std::pair{"ttft_s", &s.ttft_s}, std::pair{"tpot_s", &s.tpot_s}, std::pair{"itl_s", &s.itl_s}, std::pair{"e2e_s", &s.e2e_s}}) {
        out[std::string(name) + ":mean"] = q->mean;
        out[std::string(name) + ":p50"] = q->p50;
    }
    out["requests_per_s:"] = s.requests_per_s;
    out["output_tokens_per_s:"] = s.output_tokens_per_s;
    out["total_tokens_per_s:"] = s.input_tokens_per_s + s.output_tokens_per_s;
    return out;
}

// The class a figure's error counts in: TTFT, per-token time, or throughput (E2E is not fitted).
int figure_class(const std::string& figure) {
    if (figure == "ttft_s") return 0;
    if (figure == "tpot_s" || figure == "itl_s") return 1;
    if (figure == "requests_per_s" || figure == "output_tokens_per_s" || figure == "total_tokens_per_s") return 2;
    return -1;
}

// A run's loss: the mean |log(predicted / measured)| of each class, summed over its classes.
double run_loss(const Prepared& p, const std::map<std::string, double>& pred) {
    double sum[3] = {0, 0, 0};
    int count[3] = {0, 0, 0};
    for (const ServingFigure& f : p.rec->figures) {
        const int c = figure_class(f.figure);
        if (c < 0) continue;
        const double v = pred.at(f.figure + ":" + f.stat);
        sum[c] += std::abs(std::log(std::max(v, 1e-12) / f.measured));
        ++count[c];
    }
    double loss = 0;
    for (int c = 0; c < 3; ++c)
        if (count[c] > 0) loss += sum[c] / count[c];
    return loss;
}

// Each run's loss at each set of terms, simulated once. The leave-one-out and leave-one-source-out
// refits start from the full fit with the same brackets, so most of their evaluations repeat, run
// for run, what the full fit or an earlier fold already simulated (the guard took minutes of
// simulated runs without it). A simulation is deterministic, so a cached loss is the loss.
class LossCache {
public:
    double loss(const Prepared& p, const Theta& t) {
        const auto [it, inserted] = losses_.try_emplace(Key{&p, {t.v[0], t.v[1], t.v[2], t.v[3]}}, 0.0);
        if (inserted) it->second = run_loss(p, predict(p, terms_of(t)));
        return it->second;
    }

private:
    using Key = std::pair<const Prepared*, std::array<double, 4>>;
    std::map<Key, double> losses_;
};

double total_loss(const std::vector<const Prepared*>& runs, const Theta& t, LossCache& cache) {
    double loss = 0;
    for (const Prepared* p : runs) loss += cache.loss(*p, t);
    return loss;
}

// The largest value each term may take on `runs`: kUpper, and for the frontend's serial time per
// request frontend_serial_bound_s of those runs (a measured rate above 1 / serial proves the serial
// stage shorter; fitted without the bound, it absorbed TTFT that the queueing model misses and
// capped GPUStack's 239 requests/s burst at 185).
std::array<double, 4> upper_for(const std::vector<const Prepared*>& runs) {
    std::vector<const ServingRunRecord*> records;
    for (const Prepared* p : runs) records.push_back(p->rec);
    return {kUpper[0], kUpper[1], kUpper[2], std::min(kUpper[3], frontend_serial_bound_s(records))};
}

// Coordinate search: each host term in turn by golden section on [0, upper] in the square-root
// scale (small costs resolved as finely as large ones), `sweeps` times, from `start`. The
// frontend latency is not searched: it is a per-request constant that single requests time
// directly, and the step fit has it (ttft_overhead_s); fitted on loaded runs it would absorb
// whatever the queueing model misses and move every lone request's TTFT with it.
Theta fit_terms(const std::vector<const Prepared*>& runs, Theta start, int sweeps, int evals_per_term, LossCache& cache) {
    if (runs.empty()) return start;
    const std::array<double, 4> upper = upper_for(runs);
    for (const int k : kSearched) start.v[k] = std::min(start.v[k], upper[k]);
    Theta best = start;
    double best_loss = total_loss(runs, best, cache);
    const double phi = (std::sqrt(5.0) - 1) / 2;
    for (int s = 0; s < sweeps; ++s)
        for (const int k : kSearched) {
            // A bracket around the current value on later sweeps, the whole range on the first.
            const double cur = std::sqrt(best.v[k] / upper[k]);
            double lo = s == 0 ? 0.0 : std::max(0.0, cur - 0.25), hi = s == 0 ? 1.0 : std::min(1.0, cur + 0.25);
            const auto loss_at = [&](double x) {
                Theta t = best;
                t.v[k] = x * x * upper[k];
                return total_loss(runs, t, cache);
            };
            double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
            double fa = loss_at(a), fb = loss_at(b);
            for (int i = 2; i < evals_per_term; ++i) {
                if (fa < fb) {
                    hi = b, b = a, fb = fa;
                    a = hi - phi * (hi - lo);
                    fa = loss_at(a);
                } else {
                    lo = a, a = b, fa = fb;
                    b = lo + phi * (hi - lo);
                    fb = loss_at(b);
                }
            }
            const double x = fa < fb ? a : b, fx = std::min(fa, fb);
            // The end points too: a term the runs do not ask for stays at 0.
            const double f0 = loss_at(0.0);
            if (f0 <= fx && f0 < best_loss) {
                best.v[k] = 0;
                best_loss = f0;
            } else if (fx < best_loss) {
                best.v[k] = x * x * upper[k];
                best_loss = fx;
            }
        }
    return best;
}



}  // namespace

double frontend_serial_bound_s(const std::vector<const ServingRunRecord*>& runs) {
    double fastest = 0;
    for (const ServingRunRecord* r : runs)
        for (const ServingFigure& f : r->figures)
            if (f.figure == "requests_per_s" && f.measured > 0 && std::isfinite(f.measured)) fastest = std::max(fastest, f.measured);
    return fastest > 0 ? 1.0 / fastest : std::numeric_limits<double>::infinity();
}

ServingFitReport fit_serving(const std::vector<ServingRunRecord>& runs, const ServingFitInputs& in, bool evaluate) {
    if (!in.catalog) throw Error("--fit-serving", "no engine catalog");
    ServingFitReport rep;
    std::vector<Prepared> prepared;
    for (const ServingRunRecord& r : runs) {
        std::string why;
        std::optional<Prepared> p = prepare(r, in, why);
        if (!p) {
            ++rep.skipped[why];
            continue;
        }
        prepared.push_back(std::move(*p));
    }
    rep.runs_used = static_cast<std::int64_t>(prepared.size());
    for (const Prepared& p : prepared) {
        const auto mean = std::find_if(p.rec->figures.begin(), p.rec->figures.end(),
                                       [](const ServingFigure& f) { return f.figure == "ttft_s" && f.stat == "mean"; });
        if (mean == p.rec->figures.end() || p.closed_loop_users < static_cast<std::int64_t>(p.requests.size()) || p.rec->request_rate) continue;
        std::vector<double> lens;
        for (const serve::Request& q : p.requests) lens.push_back(static_cast<double>(q.input_tokens));
        const std::vector<double> floors = serve::first_token_floors_s(lens, p.model, p.costs, p.gpu, p.w.tensor_parallel);
        if (floors.empty()) continue;
        double sum = 0;
        for (const double f : floors) sum += f;
        const double floor_s = sum / static_cast<double>(floors.size());
        if (mean->measured < floor_s) rep.beats_peak.push_back({p.rec->run, p.rec->file, mean->measured, floor_s});
    }
    // The runs each group's terms are fitted on: at most max_fit_runs_per_file of each file, the
    // first in file order (the cap is per file; a source, a repository, may hold many files).
    // Leave-one-source-out holds out a whole source (its repository) below.
    std::map<std::string, std::vector<const Prepared*>> by_group;
    std::set<const Prepared*> in_fit;
    {
        std::map<std::pair<std::string, std::string>, std::int64_t> taken;  // (group, file) -> runs
        for (const Prepared& p : prepared)
            if (taken[{p.group, p.rec->file}]++ < in.max_fit_runs_per_file) {
                by_group[p.group].push_back(&p);
                in_fit.insert(&p);
            }
    }
    // The full fit per group, from the step fit's overhead as the frontend latency.
    LossCache cache;
    std::map<std::string, Theta> full;
    for (const auto& [group, members] : by_group) {
        Theta start;
        start.v[2] = std::min(members.front()->setup.profile.step.ttft_overhead_s, kUpper[2]);
        full[group] = fit_terms(members, start, 2, 8, cache);
    }
    std::map<std::string, std::int64_t> runs_in_group;
    for (const auto& [group, members] : by_group) runs_in_group[group] = static_cast<std::int64_t>(members.size());
    for (const engine::EngineProfile& prof : in.catalog->profiles) {
        const std::string group = serving_group(prof);
        const auto f = full.find(group);
        if (f == full.end()) continue;
        engine::ServingTerms t = terms_of(f->second);
        t.runs = runs_in_group[group];
        t.basis = "fitted on " + std::to_string(t.runs) + " " + group + " serving runs under load (assets/serving-runs/)";
        rep.fit.terms[prof.id] = t;
    }
    rep.fit.runs = rep.runs_used;
    // Predictions: fitted, leave-one-out (the run's group refitted without it, warm-started from the
    // full fit, one sweep), leave-one-source-out (without its source's runs).
    std::map<const Prepared*, std::map<std::string, double>> fitted, loo, loso, unfitted;
    for (const Prepared& p : prepared) {
        fitted[&p] = predict(p, terms_of(full[p.group]));
        engine::ServingTerms off;
        off.frontend_latency_s = p.setup.profile.step.ttft_overhead_s;
        off.fitted = true;
        unfitted[&p] = predict(p, off);
    }
    if (evaluate) {
        for (const Prepared& p : prepared) {
            // A run outside the fit is already held out of it.
            if (!in_fit.count(&p)) {
                loo[&p] = fitted[&p];
                continue;
            }
            std::vector<const Prepared*> rest;
            for (const Prepared* q : by_group[p.group])
                if (q != &p) rest.push_back(q);
            loo[&p] = predict(p, terms_of(fit_terms(rest, full[p.group], 1, 5, cache)));
        }
        std::set<std::pair<std::string, std::string>> folds;  // (source, group)
        for (const Prepared& p : prepared) folds.insert({p.rec->source, p.group});
        for (const auto& [source, group] : folds) {
            std::vector<const Prepared*> rest, held;
            for (const Prepared* q : by_group[group])
                if (q->rec->source != source) rest.push_back(q);
            for (const Prepared& q : prepared)
                if (q.group == group && q.rec->source == source) held.push_back(&q);
            // A source that is all of its group's runs leaves nothing to fit: the terms are off.
            Theta t;
            if (rest.empty()) t.v[2] = std::min(held.front()->setup.profile.step.ttft_overhead_s, kUpper[2]);
            else t = fit_terms(rest, full[group], 1, 5, cache);
            for (const Prepared* q : held) loso[q] = predict(*q, terms_of(t));
        }
    }
    for (const Prepared& p : prepared)
        for (const ServingFigure& f : p.rec->figures) {
            ServingPoint pt;
            pt.run = p.rec->run, pt.file = p.rec->file, pt.engine = p.rec->engine, pt.group = p.group, pt.figure = f.figure, pt.stat = f.stat;
            pt.record_id = f.record_id, pt.gpu = p.rec->gpu, pt.model = p.rec->model, pt.scheme = p.rec->scheme, pt.engine_version = p.rec->engine_version;
            pt.load = p.load;
            pt.in_fit = in_fit.count(&p) > 0;
            const std::string key = f.figure + ":" + f.stat;
            pt.measured = f.measured;
            pt.fitted = fitted[&p].at(key);
            pt.loo = evaluate ? loo[&p].at(key) : pt.fitted;
            pt.loso = evaluate ? loso[&p].at(key) : pt.fitted;
            rep.points.push_back(pt);
            // The baseline (terms off) rides along in `summaries` only.
        }
    // Summaries per engine and figure class, then over every engine.
    const auto summarise = [&](const std::string& engine, const std::string& figure, const std::string& stat) {
        ServingSummary s;
        s.engine = engine;
        s.figure = stat.empty() ? figure : figure + ":" + stat;
        std::vector<double> af, al, ao, sl, so, au, su;
        std::size_t i = 0;
        for (const Prepared& p : prepared)
            for (const ServingFigure& f : p.rec->figures) {
                const ServingPoint& pt = rep.points[i++];
                if (engine != "*" && pt.engine != engine) continue;
                const bool same = figure == "rate" ? figure_class(pt.figure) == 2 : pt.figure == figure;
                if (!same || (!stat.empty() && pt.stat != stat)) continue;
                af.push_back(std::abs(pt.error_fitted()));
                al.push_back(std::abs(pt.error_loo()));
                ao.push_back(std::abs(pt.error_loso()));
                sl.push_back(pt.error_loo());
                so.push_back(pt.error_loso());
                const double u = unfitted[&p].at(f.figure + ":" + f.stat) / f.measured - 1;
                au.push_back(std::abs(u));
                su.push_back(u);
            }
        s.points = static_cast<std::int64_t>(af.size());
        s.median_abs_fitted = median(af), s.median_abs_loo = median(al), s.median_abs_loso = median(ao);
        s.median_signed_loo = median(sl), s.median_signed_loso = median(so);
        s.p90_abs_loo = quantile(al, 0.9), s.p90_abs_loso = quantile(ao, 0.9);
        s.median_abs_unfitted = median(au), s.median_signed_unfitted = median(su);
        return s;
    };
    for (const std::string engine : {"*", "vllm", "sglang"})
        for (const auto& [figure, stat] : {std::pair<std::string, std::string>{"ttft_s", ""}, {"ttft_s", "mean"}, {"ttft_s", "p50"}, {"tpot_s", ""},
                                           {"itl_s", ""}, {"e2e_s", ""}, {"requests_per_s", ""}, {"output_tokens_per_s", ""},
                                           {"total_tokens_per_s", ""}}) {
            ServingSummary s = summarise(engine, figure, stat);
            if (s.points > 0) rep.summaries.push_back(s);
        }
    for (const ServingSummary& s : rep.summaries)
        if (s.engine == "*" && s.figure.find(':') == std::string::npos) rep.fit.medians[s.figure] = {s.median_abs_loo, s.median_abs_loso};
    // Bands: p10-p90 of the leave-one-source-out residuals per engine and figure (and over all).
    for (const std::string engine : {"*", "vllm", "sglang"})
        for (const std::string figure : {"ttft_s", "tpot_s", "itl_s", "e2e_s", "requests_per_s", "output_tokens_per_s"}) {
            std::vector<double> e;
            for (const ServingPoint& pt : rep.points)
                if ((engine == "*" || pt.engine == engine) && pt.figure == figure) e.push_back(pt.error_loso());
            if (static_cast<std::int64_t>(e.size()) < engine::kMinBandPoints) continue;
            engine::ServingBand b;
            b.engine = engine;
            b.figure = figure;
            b.p10 = quantile(e, 0.1);
            b.p90 = quantile(e, 0.9);
            b.points = static_cast<std::int64_t>(e.size());
            b.basis = "leave-one-source-out p10-p90 of " + std::to_string(b.points) + " " + (engine == "*" ? std::string("serving") : engine) + " " +
                      figure + " figures under load";
            rep.fit.bands.push_back(b);
        }
    return rep;
}

}  // namespace quantplan::fidelity
