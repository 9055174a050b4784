#include "core/check/bench_result.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/checkpoint/json_guard.h"
#include "core/error.h"

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

}  // namespace

bool looks_like_json(std::string_view t) {
    const std::size_t i = t.find_first_not_of(" \t\r\n");
    return i != std::string_view::npos && t[i] == '{';
}

BenchResult read_bench_result(std::string_view raw, const std::string& source) {
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
                               "output_throughput (vllm bench serve --save-result, sglang.bench_serving --output-file)");
    return r;
}

}  // namespace quantplan::check
