#include "core/check/bench_result.h"

#include <cmath>
#include <initializer_list>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"

namespace quantplan::check {
namespace {

using nlohmann::json;

std::optional<double> num(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    if (!std::isfinite(v)) return std::nullopt;
    return v;
}

std::string text(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json* at_path(const json& j, std::initializer_list<const char*> path) {
    const json* x = &j;
    for (const char* key : path) {
        if (!x->is_object()) return nullptr;
        const auto it = x->find(key);
        if (it == x->end()) return nullptr;
        x = &*it;
    }
    return x;
}

std::optional<double> num_at(const json& j, std::initializer_list<const char*> path) {
    const json* x = at_path(j, path);
    if (!x || !x->is_number()) return std::nullopt;
    const double v = x->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string text_at(const json& j, std::initializer_list<const char*> path) {
    const json* x = at_path(j, path);
    if (x && x->is_string()) return x->get<std::string>();
    if (x && x->is_array() && !x->empty() && (*x)[0].is_string()) return (*x)[0].get<std::string>();
    return {};
}

// GuideLLM's benchmarks JSON (vllm-project/guidellm: benchmark/output.py at v0.2.1 and v0.3.0,
// schemas/generative/report.py at v0.4.0 to v0.7.x): each entry of `benchmarks` is one load point.
BenchResult read_guidellm(const json& j, const std::string& source, std::size_t index) {
    const json& list = j["benchmarks"];
    if (index >= list.size())
        throw Error("--bench-index", source + " holds " + std::to_string(list.size()) + " GuideLLM benchmark(s); pass --bench-index 1 to " +
                                         std::to_string(list.size()));
    const json& b = list[index];
    if (!b.is_object()) throw Error("--check", source + ": GuideLLM benchmark " + std::to_string(index + 1) + " is not an object");
    BenchResult r;
    r.format = "guidellm";
    r.engine = "vllm";
    r.backend = "guidellm";
    r.runs_in_file = list.size();
    r.run_index = index;
    r.model = text_at(j, {"args", "model"});
    if (r.model.empty()) r.model = text_at(b, {"config", "backend", "model"});
    if (r.model.empty()) r.model = text_at(b, {"worker", "backend_model"});
    if (r.model.empty()) r.model = text_at(j, {"config", "spec", "model"});
    // The load: the scheduler strategy (0.4 on: config.strategy; 0.2/0.3: args.strategy).
    const json* strategy = at_path(b, {"config", "strategy"});
    if (!strategy) strategy = at_path(b, {"args", "strategy"});
    const std::string type = strategy ? text_at(*strategy, {"type_"}) : std::string();
    const auto count = [](std::optional<double> v) -> std::optional<std::int64_t> {
        if (!v || *v < 1 || *v > 1e7) return std::nullopt;
        return static_cast<std::int64_t>(*v);
    };
    if (type == "synchronous") r.max_concurrency = 1;
    else if (type == "concurrent") r.max_concurrency = count(num_at(*strategy, {"streams"}));
    else if (type == "throughput") r.max_concurrency = count(num_at(*strategy, {"max_concurrency"}));
    else if (type == "constant" || type == "poisson") {
        if (const auto rate = num_at(*strategy, {"rate"}); rate && *rate > 0) r.request_rate = *rate;
        r.max_concurrency = count(num_at(*strategy, {"max_concurrency"}));
    }
    if (!type.empty()) r.notes.push_back("GuideLLM benchmark " + std::to_string(index + 1) + " of " + std::to_string(list.size()) + ": strategy " + type);
    std::optional<double> done = num_at(b, {"metrics", "request_totals", "successful"});
    if (!done) done = num_at(b, {"request_totals", "successful"});
    if (done && *done >= 0) r.completed = static_cast<std::int64_t>(*done), r.num_prompts = r.completed;
    r.duration_s = num_at(b, {"duration"});
    const json& m = b.contains("metrics") ? b["metrics"] : json::object();
    r.mean_input_tokens = num_at(m, {"prompt_token_count", "successful", "mean"});
    r.mean_output_tokens = num_at(m, {"output_token_count", "successful", "mean"});
    const auto stat = [&](const char* metric, const char* ours, double scale) {
        if (const auto v = num_at(m, {metric, "successful", "mean"})) r.metrics[std::string(ours) + "_mean"] = *v * scale;
        if (const auto v = num_at(m, {metric, "successful", "median"})) r.metrics[std::string(ours) + "_p50"] = *v * scale;
        if (const auto v = num_at(m, {metric, "successful", "percentiles", "p99"})) r.metrics[std::string(ours) + "_p99"] = *v * scale;
    };
    stat("time_to_first_token_ms", "ttft_s", 1e-3);
    stat("inter_token_latency_ms", "tpot_s", 1e-3);
    stat("request_latency", "e2e_s", 1.0);
    if (const auto v = num_at(m, {"requests_per_second", "successful", "mean"})) r.metrics["requests_per_s"] = *v;
    if (const auto v = num_at(m, {"output_tokens_per_second", "successful", "mean"})) r.metrics["output_tokens_per_s"] = *v;
    r.notes.push_back("GuideLLM's inter_token_latency_ms is vLLM's TPOT per request ((last - first token) / (tokens - 1)), but its "
                      "summary weights each request by its tokens - 1; it is read as tpot_s");
    if (r.metrics.empty()) throw Error("--check", source + ": GuideLLM benchmark " + std::to_string(index + 1) + " holds no successful metrics");
    return r;
}

// genai-perf's profile_export_genai_perf.json (triton-inference-server/perf_analyzer genai-perf:
// export_data/json_exporter.py; the flat input_config of 0.0.x, the nested one from PR #308).
BenchResult read_genai_perf(const json& j, const std::string& source) {
    BenchResult r;
    r.format = "genai-perf";
    r.engine = "vllm";
    r.backend = "genai-perf";
    const json& c = j.contains("input_config") && j["input_config"].is_object() ? j["input_config"] : json::object();
    r.model = text_at(c, {"model"});
    if (r.model.empty()) r.model = text_at(c, {"model_names"});
    if (const auto n = num_at(c, {"concurrency"}); n && *n >= 1 && *n <= 1e7) r.max_concurrency = static_cast<std::int64_t>(*n);
    else if (const auto s = num_at(c, {"perf_analyzer", "stimulus", "concurrency"}); s && *s >= 1 && *s <= 1e7) r.max_concurrency = static_cast<std::int64_t>(*s);
    if (const auto rate = num_at(c, {"request_rate"}); rate && *rate > 0) r.request_rate = *rate;
    else if (const auto rate2 = num_at(c, {"perf_analyzer", "stimulus", "request_rate"}); rate2 && *rate2 > 0) r.request_rate = *rate2;
    if (const auto n = num_at(j, {"request_count", "avg"}); n && *n >= 1 && *n <= 1e9) r.completed = static_cast<std::int64_t>(*n), r.num_prompts = r.completed;
    r.mean_input_tokens = num_at(j, {"input_sequence_length", "avg"});
    r.mean_output_tokens = num_at(j, {"output_sequence_length", "avg"});
    const auto scale_of = [&](const json& x) {
        const std::string unit = text_at(x, {"unit"});
        return unit == "s" ? 1.0 : unit == "ns" ? 1e-9 : unit == "us" ? 1e-6 : 1e-3;  // genai-perf writes ms
    };
    const auto stat = [&](const char* metric, const char* ours) {
        const json* x = at_path(j, {metric});
        if (!x || !x->is_object()) return;
        const double scale = scale_of(*x);
        if (const auto v = num_at(*x, {"avg"})) r.metrics[std::string(ours) + "_mean"] = *v * scale;
        if (const auto v = num_at(*x, {"p50"})) r.metrics[std::string(ours) + "_p50"] = *v * scale;
        if (const auto v = num_at(*x, {"p99"})) r.metrics[std::string(ours) + "_p99"] = *v * scale;
    };
    stat("time_to_first_token", "ttft_s");
    stat("inter_token_latency", "tpot_s");
    stat("request_latency", "e2e_s");
    if (const auto v = num_at(j, {"request_throughput", "avg"})) r.metrics["requests_per_s"] = *v;
    if (const auto v = num_at(j, {"output_token_throughput", "avg"})) r.metrics["output_tokens_per_s"] = *v;
    r.notes.push_back("genai-perf counts output and input tokens with its own tokenizer (--tokenizer; Llama-2's by default), not the "
                      "engine's: its sequence lengths, inter_token_latency (vLLM's TPOT per request, (E2E - TTFT) / (tokens - 1)) and token "
                      "throughput follow that count");
    if (r.metrics.empty()) throw Error("--check", source + " is a genai-perf export without metrics (time_to_first_token, request_throughput)");
    return r;
}

}  // namespace

bool looks_like_json(std::string_view t) {
    const std::size_t i = t.find_first_not_of(" \t\r\n");
    return i != std::string_view::npos && t[i] == '{';
}

BenchResult read_bench_result(std::string_view raw, const std::string& source, std::size_t run_index) {
    // SGLang writes "request_rate": Infinity (Python's json module): read it as null, i.e. "inf".
    const std::string cleaned = null_python_literals(raw);
    const std::string_view t = cleaned;
    // JSON lines: SGLang appends one object per run; take the last complete line.
    json j;
    try {
        j = parse_untrusted_json(t, source);
    } catch (const Error&) {
        std::string_view last;
        std::size_t start = 0;
        while (start < t.size()) {
            std::size_t end = t.find('\n', start);
            if (end == std::string_view::npos) end = t.size();
            const std::string_view line = t.substr(start, end - start);
            if (line.find_first_not_of(" \t\r") != std::string_view::npos) last = line;
            start = end + 1;
        }
        j = parse_untrusted_json(last, source);
    }
    if (!j.is_object()) throw Error("--check", source + " is JSON but not a benchmark result object");
    if (const auto b = j.find("benchmarks"); b != j.end() && b->is_array() && !b->empty()) return read_guidellm(j, source, run_index);
    if (j.contains("time_to_first_token") && j["time_to_first_token"].is_object() && (j.contains("input_config") || j.contains("request_throughput")))
        return read_genai_perf(j, source);
    if (run_index > 0) throw Error("--bench-index", source + " holds one run (a vLLM or SGLang result); --bench-index is for GuideLLM's files");
    BenchResult r;
    r.backend = text(j, "backend");
    r.model = text(j, "model_id");
    if (r.model.empty()) r.model = text(j, "model");
    if (r.model.empty()) r.model = text(j, "tokenizer_id");
    if (const auto si = j.find("server_info"); si != j.end() && si->is_object()) {
        if (r.model.empty()) r.model = text(*si, "model_path");
        r.engine_version = text(*si, "version");
        if (const auto tp = num(*si, "tp_size"); tp && *tp >= 1 && *tp <= 64) r.tensor_parallel = static_cast<std::int64_t>(*tp);
    }
    r.engine = j.contains("mean_e2e_latency_ms") || r.backend.find("sglang") != std::string::npos ? "sglang" : "vllm";
    r.format = j.contains("mean_e2e_latency_ms") ? "sglang" : "vllm";
    if (const auto v = num(j, "num_prompts")) r.num_prompts = static_cast<std::int64_t>(*v);
    if (const auto v = num(j, "completed")) r.completed = static_cast<std::int64_t>(*v);
    if (const auto v = num(j, "request_rate"); v && *v > 0) r.request_rate = *v;  // "inf" is a string or absent
    if (const auto v = num(j, "max_concurrency"); v && *v > 0) r.max_concurrency = static_cast<std::int64_t>(*v);
    r.duration_s = num(j, "duration");
    const std::optional<double> done = r.completed ? std::optional<double>(static_cast<double>(*r.completed)) : std::nullopt;
    if (const auto in = num(j, "total_input_tokens"); in && done && *done > 0) r.mean_input_tokens = *in / *done;
    else if (const auto ri = num(j, "random_input_len")) r.mean_input_tokens = *ri;
    if (const auto out = num(j, "total_output_tokens"); out && done && *done > 0) r.mean_output_tokens = *out / *done;
    else if (const auto ro = num(j, "random_output_len")) r.mean_output_tokens = *ro;
    // Per-request lengths: kept only when both arrays are whole (same size, integers of at most 2^24
    // tokens, at most 1,000,000 requests); otherwise the means stand.
    if (const auto il = j.find("input_lens"), ol = j.find("output_lens"); il != j.end() && ol != j.end() && il->is_array() && ol->is_array() &&
                                                                          il->size() == ol->size() && !il->empty() && il->size() <= 1'000'000) {
        std::vector<std::int64_t> in, out;
        bool whole = true;
        for (std::size_t i = 0; i < il->size() && whole; ++i) {
            const nlohmann::json &a = (*il)[i], &b = (*ol)[i];
            whole = a.is_number_integer() && b.is_number_integer() && a.get<std::int64_t>() >= 0 && b.get<std::int64_t>() >= 0 &&
                    a.get<std::int64_t>() <= (1 << 24) && b.get<std::int64_t>() <= (1 << 24);
            if (whole) {
                in.push_back(a.get<std::int64_t>());
                out.push_back(b.get<std::int64_t>());
            }
        }
        if (whole) {
            r.input_lens = std::move(in);
            r.output_lens = std::move(out);
        }
    }
    const struct {
        const char* ours;
        const char* theirs;
    } latency[] = {
        {"ttft_s_mean", "mean_ttft_ms"}, {"ttft_s_p50", "median_ttft_ms"}, {"ttft_s_p99", "p99_ttft_ms"},
        {"tpot_s_mean", "mean_tpot_ms"}, {"tpot_s_p50", "median_tpot_ms"}, {"tpot_s_p99", "p99_tpot_ms"},
        {"itl_s_mean", "mean_itl_ms"},   {"itl_s_p50", "median_itl_ms"},   {"itl_s_p99", "p99_itl_ms"},
        {"e2e_s_mean", "mean_e2el_ms"},  {"e2e_s_p50", "median_e2el_ms"},  {"e2e_s_p99", "p99_e2el_ms"},
        {"e2e_s_mean", "mean_e2e_latency_ms"}, {"e2e_s_p50", "median_e2e_latency_ms"}, {"e2e_s_p99", "p99_e2e_latency_ms"},
    };
    for (const auto& l : latency)
        if (const auto v = num(j, l.theirs)) r.metrics[l.ours] = *v * 1e-3;
    if (const auto v = num(j, "output_throughput")) r.metrics["output_tokens_per_s"] = *v;
    if (const auto v = num(j, "request_throughput")) r.metrics["requests_per_s"] = *v;
    if (r.metrics.empty())
        throw Error("--check", source + " is JSON but not a benchmark result: expected keys such as mean_ttft_ms, mean_tpot_ms, "
                               "output_throughput (vllm bench serve --save-result, sglang.bench_serving --output-file), GuideLLM's benchmarks or "
                               "genai-perf's profile_export_genai_perf.json");
    return r;
}

}  // namespace quantplan::check
