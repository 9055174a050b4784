#pragma once
// Reading a serving engine's startup log (vLLM V0 and V1, SGLang) into a value struct: the reader
// at the edge for `quantplan --check` (docs/check.md). Nothing past it sees log text.
//
// Lines are read after removing ANSI colour codes and the prefixes engines and launchers put in
// front of a message: "(EngineCore_0 pid=123)", "(RayWorkerWrapper pid=...)", "(Worker_TP1 pid=...)",
// "INFO 09-04 01:29:25 [gpu_worker.py:276]", "[2025-03-08 12:29:21 TP0]". Where several ranks
// log the same quantity, the first value is kept and the count of ranks is noted.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quantplan::check {

// One quantity as the log printed it, converted to SI (bytes, tokens, blocks, or x).
struct LoggedQuantity {
    double value = 0;          // SI
    std::string as_logged;     // the number and unit as printed ("24.83 GiB")
    std::string line;          // the cleaned line it came from (cut to 300 characters)
};

// What a startup log says about the setup and the memory budget. Absent: the log does not say.
struct StartupLog {
    std::string engine;                            // "vllm" or "sglang"
    std::string version;                           // as logged ("0.10.1.1"), "" when no version line
    std::string engine_generation;                 // "v0" / "v1" for vLLM by the log's wording, "" when unknown
    std::string model;                             // the model argument as logged (a path or a repository id)
    std::optional<std::string> dtype;              // "bfloat16", "float16", "auto"
    std::optional<std::string> quantization;       // "awq", "gptq", "fp8", ... ("None" is absent)
    std::optional<std::string> kv_cache_dtype;     // "auto", "fp8", ...
    std::optional<std::int64_t> max_model_len;
    std::optional<std::int64_t> tensor_parallel;
    std::optional<double> gpu_memory_utilization;  // vLLM
    std::optional<double> mem_fraction_static;     // SGLang
    std::optional<std::int64_t> max_num_seqs;
    std::optional<std::int64_t> max_num_batched_tokens;
    std::optional<bool> enforce_eager;
    std::optional<bool> chunked_prefill;
    std::optional<std::int64_t> block_size_tokens;  // the engine's KV block size, when logged
    // Memory terms per GPU.
    std::optional<LoggedQuantity> total_memory_bytes;     // total_gpu_memory, or T of "Free memory on device (F/T GiB)"
    std::optional<LoggedQuantity> weights_bytes;          // "Model loading took" / "Loading model weights took" / "model weights take"
    std::optional<LoggedQuantity> activation_peak_bytes;  // "PyTorch activation peak memory takes", "... for peak activation"
    std::optional<LoggedQuantity> non_torch_bytes;        // non_torch_memory
    std::optional<LoggedQuantity> cuda_graph_bytes;       // "Graph capturing finished ... took", "... for CUDAGraph memory"
    std::optional<LoggedQuantity> kv_cache_bytes;         // "Available KV cache memory", kv_cache_size, "reserved for KV Cache is", SGLang K + V size
    std::optional<LoggedQuantity> kv_cache_tokens;        // "GPU KV cache size: N tokens", SGLang "#tokens: N", the max-model-len error's (N)
    std::optional<LoggedQuantity> gpu_blocks;             // "# GPU blocks: N" / "# CUDA blocks: N"
    std::optional<LoggedQuantity> max_concurrency;        // "Maximum concurrency for N tokens per request: X x"
    std::optional<std::int64_t> max_concurrency_tokens;   // that line's N
    std::int64_t ranks_seen = 1;                          // distinct rank prefixes logging a KV size
    std::vector<std::string> notes;                       // what the reader noticed (units it assumed, repeated lines)
};

// Reads `text`. Throws Error("--check") when it holds none of the lines a vLLM or SGLang startup log
// has (naming what was expected), or when it is larger than kMaxLogBytes.
StartupLog read_startup_log(std::string_view text, const std::string& source);

// The largest log read (a startup log is kilobytes; a day of serving logs is not needed).
inline constexpr std::size_t kMaxLogBytes = 64u << 20;

// A log line without ANSI codes and the engine's and launcher's prefixes.
std::string clean_log_line(std::string_view line);

}  // namespace quantplan::check
