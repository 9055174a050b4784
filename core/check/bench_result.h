#pragma once
// Reading a serving benchmark's result file into a value struct: the JSON `vllm bench serve
// --save-result` (and benchmarks/benchmark_serving.py) writes, and the JSON line SGLang's
// bench_serving appends to its --output-file. The reader at the edge for `quantplan --check`.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace quantplan::check {

// What a benchmark result says. Latencies in seconds (the files hold milliseconds).
struct BenchResult {
    std::string format;                       // "vllm" (--save-result), "sglang" (bench_serving), "guidellm", "genai-perf"
    std::string engine;                       // "vllm" or "sglang" (by the file's keys and backend; a client of any server: "vllm")
    std::string backend;                      // as written ("vllm", "openai-chat", "sglang", ...)
    std::string model;                        // model_id / model / tokenizer as written (SGLang: server_info.model_path)
    std::string engine_version;               // SGLang: server_info.version; "" when the file does not say
    std::optional<std::int64_t> num_prompts;
    std::optional<std::int64_t> completed;
    std::optional<double> request_rate;       // requests/s; absent for "inf" (all at once)
    std::optional<std::int64_t> max_concurrency;
    std::optional<std::int64_t> tensor_parallel;  // SGLang: server_info.tp_size; absent otherwise
    std::optional<double> duration_s;
    std::optional<double> mean_input_tokens;  // total_input_tokens / completed, or the random input length
    std::optional<double> mean_output_tokens;
    // Each request's prompt and output tokens when the file holds them (vLLM's benchmark_serving.py
    // --save-result writes `input_lens` and `output_lens`); empty otherwise. Same length.
    std::vector<std::int64_t> input_lens, output_lens;
    // "ttft_s_mean", "ttft_s_p50", "ttft_s_p99", "tpot_s_...", "itl_s_...", "e2e_s_..." (seconds),
    // "output_tokens_per_s", "requests_per_s".
    std::map<std::string, double> metrics;
    std::size_t runs_in_file = 1;             // GuideLLM: the benchmarks (load points) the file holds
    std::size_t run_index = 0;                // the one read (0-based)
    std::vector<std::string> notes;           // how the client defines what was read, where it differs from vLLM's
};

// Parses `text` (a JSON object, or JSON lines: the last object is taken). Throws Error("--check")
// when it is JSON but not a benchmark result (naming the keys expected). Reads, besides vLLM's and
// SGLang's results, GuideLLM's benchmarks JSON (0.2 to 0.7: one load point of `benchmarks`, the
// `run_index`-th, 0-based; Error("--bench-index") past the last) and genai-perf's
// profile_export_genai_perf.json (docs/check.md, "Benchmark results").
BenchResult read_bench_result(std::string_view text, const std::string& source, std::size_t run_index = 0);

// True when `text` looks like JSON (its first non-blank character is '{').
bool looks_like_json(std::string_view text);

}  // namespace quantplan::check
