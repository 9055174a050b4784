#pragma once
// Reading a serving engine's startup log (vLLM V0 and V1, SGLang) into a value struct: the reader
// at the edge for `quantplan --check` (docs/check.md). Nothing past it sees log text.
//
// Lines are read after removing ANSI colour codes and the prefixes engines and launchers put in
// front of a message: "(EngineCore_0 pid=123)", "(RayWorkerWrapper pid=...)", "(Worker_TP1 pid=...)",
// "INFO 09-04 01:29:25 [gpu_worker.py:276]", "[2025-03-08 12:29:21 TP0]". Where several ranks
// log the same quantity, the first value is kept and the count of ranks is noted.
#include <cstdint>
#include <istream>
#include <map>
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

// One setting as the log printed it, in the form it was read from.
struct LoggedSetting {
    std::string value;         // the value text (quotes removed; "True"/"False" for a bare flag)
    std::string form;          // "args: Namespace", "non-default args", "engine config", "ServerArgs", "command line"
    std::string line;          // the cleaned line it came from (cut to 300 characters)
};

// A setting whose logged value lies outside its domain: named, never used.
struct RejectedSetting {
    std::string key;           // canonical name ("tensor_parallel_size")
    std::string value;         // as logged
    std::string domain;        // what the value must be ("an integer from 1 to 1024")
    std::string form;
};

// A GPU name the log prints (an nvidia-smi table, `nvidia-smi -L`, SGLang's check_env, a torch
// warning), as printed; the check matches it against the bundled names.
struct LoggedDeviceName {
    std::string name;          // "NVIDIA H100 80GB HBM3"
    std::string line;
};

// What a startup log says about the setup and the memory budget. Absent: the log does not say.
struct StartupLog {
    std::string engine;                            // "vllm" or "sglang"
    std::string version;                           // as logged ("0.10.1.1"), "" when no version line
    std::string version_basis;                     // "version line", "engine config line", or the package list / image tag it came from
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
    std::optional<std::int64_t> pipeline_parallel;
    std::optional<std::int64_t> data_parallel;
    std::optional<bool> enable_prefix_caching;      // SGLang: not disable_radix_cache
    std::optional<double> cpu_offload_gb;
    // vLLM's kv_cache_memory_bytes: the KV cache per GPU as set, the utilization not consulted.
    std::optional<std::int64_t> kv_cache_memory_bytes;
    std::optional<std::string> speculative;         // the speculative config or algorithm as logged ("None" is absent)
    std::string speculative_method;                 // quantplan's name of it: eagle3, eagle, mtp, ngram, draft ("" unknown)
    std::optional<std::int64_t> speculative_tokens; // K (num_spec_tokens, num_speculative_tokens, SGLang's speculative_num_steps)
    std::optional<std::int64_t> speculative_topk;   // SGLang's speculative_eagle_topk
    // The acceptance the engine measured (its metric lines, docs/speculative.md): the mean
    // acceptance length (tokens per step, the bonus token included) over the lines, vLLM V1's
    // per-position rates averaged, how many lines, and the last one.
    std::optional<double> spec_mean_acceptance_length;
    std::vector<double> spec_per_position;
    std::int64_t spec_metric_lines = 0;
    std::string spec_metric_line;
    // vLLM V1's top-k/top-p sampler as the log names it: true for PyTorch's native implementation
    // ("Falling back to the PyTorch-native implementation", "sampling unavailable"), false for
    // "Using FlashInfer for top-p & top-k sampling"; absent when the log prints neither.
    std::optional<bool> native_sampler;
    // false where vLLM logs "Custom allreduce is disabled because your platform lacks GPU P2P
    // capability" (distributed/device_communicators/custom_all_reduce.py): the TP ranks all-reduce
    // through host memory (Workload::gpu_p2p); absent otherwise.
    std::optional<bool> gpu_p2p;
    // Every setting read, by canonical name (the vLLM name: tensor_parallel_size, max_model_len,
    // gpu_memory_utilization, ...; SGLang's mem_fraction_static), from the most authoritative form
    // that printed it: the engine's own parse (args / non-default args / ServerArgs) over the
    // engine config line over a pasted command line.
    std::map<std::string, LoggedSetting> settings;
    std::vector<RejectedSetting> rejected;          // values outside their domain (not used; the check notes them)
    std::vector<LoggedDeviceName> device_names;     // GPU names as printed, first seen first
    std::string compute_capability;                 // "sm_80" from "Device capability 8.0" / "cuda capability 8.6"; "" when not printed
    // Memory terms per GPU.
    std::optional<LoggedQuantity> total_memory_bytes;     // total_gpu_memory, T of "Free memory on device (F/T GiB)", a CUDA OOM's total capacity
    std::optional<LoggedQuantity> free_memory_at_start_bytes;  // SGLang's "Load weight begin. avail mem" when no total is logged (a lower bound on it)
    std::optional<LoggedQuantity> weights_bytes;          // "Model loading took" / "Loading model weights took" / "model weights take"
    std::optional<LoggedQuantity> activation_peak_bytes;  // "PyTorch activation peak memory takes", "... for peak activation"
    std::optional<LoggedQuantity> non_torch_bytes;        // non_torch_memory
    std::optional<LoggedQuantity> cuda_graph_bytes;       // "Graph capturing finished ... took", "... for CUDAGraph memory"
    std::optional<LoggedQuantity> kv_cache_bytes;         // "Available KV cache memory", kv_cache_size, "reserved for KV Cache is", SGLang K + V size
    std::optional<LoggedQuantity> kv_cache_tokens;        // "GPU KV cache size: N tokens", SGLang "#tokens: N", the max-model-len error's (N)
    std::optional<LoggedQuantity> gpu_blocks;             // "# GPU blocks: N" / "# CUDA blocks: N"
    std::optional<LoggedQuantity> cpu_blocks;             // V0's "# CPU blocks: N" (the swap space over one block's bytes)
    std::optional<double> swap_space_gib;                 // V0's swap_space (--swap-space), when the log prints it
    std::optional<LoggedQuantity> max_concurrency;        // "Maximum concurrency for N tokens per request: X x"
    std::optional<std::int64_t> max_concurrency_tokens;   // that line's N
    std::int64_t ranks_seen = 1;                          // distinct rank prefixes logging a KV size
    std::int64_t servers_seen = 1;                        // distinct server startups (a second is noted, the first is read)
    bool truncated = false;                               // the text ends inside a line or an argument list
    std::vector<std::string> notes;                       // what the reader noticed (units it assumed, repeated lines)
};

// Reads `text`. Throws Error("--check") when it holds none of the lines a vLLM or SGLang startup log
// has (naming what was expected), when it holds binary data (NUL bytes), or when it sets the
// engine up but ends before any memory figure (a truncated log or a start that failed earlier).
StartupLog read_startup_log(std::string_view text, const std::string& source);
// The same from a stream, line by line in bounded memory: a log of any size is read (a line is kept
// to its first kMaxLineBytes; the figures of a startup sit in its first lines, and a server that
// ran for days adds request lines the reader passes over).
StartupLog read_startup_log(std::istream& in, const std::string& source);

// The most of one line kept (the rest of a longer line is skipped).
inline constexpr std::size_t kMaxLineBytes = std::size_t{64} << 10;
// The size above which the app reads a log as a stream rather than whole (it reads any size).
inline constexpr std::size_t kMaxLogBytes = 64u << 20;

// A log line without ANSI codes and the engine's and launcher's prefixes.
std::string clean_log_line(std::string_view line);

}  // namespace quantplan::check
