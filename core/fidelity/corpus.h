#pragma once
// The measurement corpus (assets/measurements/*.json, format in its README.md): published
// measurements as value structs, each value converted to SI units (seconds, bytes, tokens,
// tokens/s). This is the reader at the edge: nothing past it sees the JSON.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quantplan::fidelity {

// What a record measured.
enum class Metric : std::uint8_t {
    DecodeTokensPerS,   // generation speed of one request (definition in Record::speed_counts_prompt)
    OutputTokensPerS,   // a serving benchmark's output throughput
    TpotS,
    ItlS,
    TtftS,
    E2eS,
    PrefillS,
    KvCacheTokens,
    GpuBlocks,
    KvCacheBytes,
    WeightsBytes,
    ActivationPeakBytes,
    NonTorchBytes,
    CudaGraphBytes,
    MaxConcurrency,
    KernelTimeS,
};

// The corpus name of a metric ("decode_tokens_per_s", ...); parse throws Error(field) on others.
const char* metric_name(Metric m);
Metric parse_metric(std::string_view name, const std::string& field);

// The settings a source states for a measured point; absent ones stay unset (never guessed).
struct RecordSetup {
    std::string engine;                     // "vllm", "sglang" (others are kept, never fitted)
    std::string engine_version;
    std::string gpu;                        // bundled GPU id (or the source's lower-case id)
    std::int64_t tp = 1;
    std::string model;                      // bundled model name
    // The architecture a fine-tune was trained from, as the source states it ("llama-3.1-8b" for
    // DeepSeek-R1-Distill-Llama-8B): priced as that bundled model when `model` itself is not bundled.
    std::string base_architecture;
    std::string checkpoint;
    std::string scheme;                     // quantplan scheme name
    std::string quantization;               // the quantization as the source states it ("AWQ", "GPTQ-Int4")
    std::optional<std::int64_t> batch;
    std::optional<std::int64_t> concurrency;
    std::optional<double> request_rate;
    std::optional<std::int64_t> input_tokens;
    std::optional<std::int64_t> output_tokens;
    // The median of a stated input-length distribution (a suite that samples prompts of about
    // one length): priced at it when no fixed input_tokens is stated.
    std::optional<std::int64_t> input_tokens_p50;
    std::optional<std::int64_t> output_tokens_p50;  // the same for output lengths (generation ends at EOS)
    // A serving benchmark over a dataset: its totals, from which mean lengths follow.
    std::optional<std::int64_t> num_prompts;
    std::optional<std::int64_t> total_input_tokens;
    std::optional<std::int64_t> total_output_tokens;
    std::optional<double> gpu_memory_utilization;
    std::optional<double> mem_fraction_static;
    std::optional<std::int64_t> max_model_len;
    std::optional<std::int64_t> max_num_seqs;
    std::optional<std::int64_t> max_num_batched_tokens;
    std::optional<bool> chunked_prefill;
    std::string kv_cache_dtype;             // "auto", "fp8", ...
    std::optional<bool> cuda_graphs;
    std::optional<bool> native_sampler;  // setup.top_k_top_p_sampler: "native" (PyTorch's sort) or "flashinfer", as the log says
    std::string dataset;                    // a serving benchmark's dataset, when named
    std::string kv_transfer_config;         // a KV connector beside the cache (LMCache, ...), as the source names it
    // The engine ran inside the benchmark's process (vLLM's LLM or AsyncLLMEngine, SGLang's Engine):
    // no API server, so no HTTP, tokenizer-process or detokenizer overhead on its TTFT.
    std::optional<bool> in_process;
    // Kernel records (metric kernel_time_s).
    std::string op;                         // "gemm", "generation_attention", "context_attention", "moe"
    std::string kernel_family;              // core/engine KernelFamily name
    std::string gemm_dtype;                 // a kernel table's GEMM operand type ("fp8" per-channel, "fp8_block" 128x128 block scales)
    std::optional<std::int64_t> m, n, k;    // GEMM extents
    std::optional<std::int64_t> kv_len;     // attention: tokens in each sequence's cache
    std::optional<std::int64_t> num_heads, num_kv_heads, head_dim;
    // A fused-MoE call: num_tokens tokens, each routed to topk of num_experts experts of
    // hidden_size -> inter_size (gate and up) -> hidden_size, the experts split over moe_ep_size
    // GPUs and each expert's intermediate over moe_tp_size; `distribution` of the routing.
    std::optional<std::int64_t> num_tokens, hidden_size, inter_size, topk, num_experts, moe_tp_size, moe_ep_size;
    std::string distribution;
};

// One measured point.
struct Record {
    std::string id;                 // unique over the corpus
    std::string file;               // corpus file it came from (its stem names the source family)
    std::string source_key;         // what leave-one-source-out holds out together (file + issue/URL)
    Metric metric = Metric::DecodeTokensPerS;
    std::string stat;               // "mean", "p50", "p99" or "" (a single run)
    // "K" or "V": the record measures that half of a KV pool (SGLang logs "K size" and "V size"
    // apart); empty: the whole of what the metric names.
    std::string component;
    double value = 0;               // in SI units: s, bytes, tokens, tokens/s, blocks, x
    double value_as_published = 0;
    std::string unit;               // as published
    std::string metric_definition;
    // Decode speed that counts prompt plus generated tokens over the request's wall time (Qwen3's
    // page says so); false: generated tokens over the wall time.
    bool speed_counts_prompt = false;
    RecordSetup setup;
};

// The corpus and its identity.
struct Corpus {
    std::vector<Record> records;        // in file order, files sorted by name
    std::vector<std::string> files;     // file names read
    std::string checksum;               // "fnv1a64:<hex>" over each file's name and bytes, in order
};

// Parses one corpus document (`file` names it in errors and records). Throws Error naming the
// JSON path at fault: a missing value, a unit that does not go with the metric, a duplicate id.
std::vector<Record> parse_corpus_file(std::string_view json_text, const std::string& file);

// Reads every *.json directly under `dir` and every file under its subfolders (kernel tables),
// plus `extra_files` (a user corpus, --corpus); ids must be unique over all of them.
Corpus load_corpus(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& extra_files = {});

// FNV-1a 64-bit over `bytes`, continuing from `state` (the corpus checksum chains files).
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state = 0xcbf29ce484222325ull);

}  // namespace quantplan::fidelity
