#pragma once
// What vLLM and SGLang do with a quantized checkpoint, as versioned data (assets/engines/*.json,
// compiled into core so that planning needs no files; docs/engines.md describes the format).
//
// Each snapshot is one engine at one commit: the quantization method names it registers, how it
// rewrites a declared method (gptq -> gptq_marlin), the minimum GPU capability of each method, the
// kernel it resolves per GPU architecture (Marlin-class fused, native low-precision tensor cores or
// generic dequantize-then-GEMM), SGLang's "optimized" list and its warning, the KV-cache dtypes it
// offers and the combinations it refuses. resolve_engine() replays an engine's startup decisions
// for one checkpoint on one GPU; engine_plan_warnings() turns them into the planner's warnings.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hardware/gpu.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// How a kernel computes a quantized linear.
enum class KernelClass : std::uint8_t {
    Fused,    // weight-only, dequantized in registers inside the GEMM (Marlin, Machete, AllSpark)
    Native,   // low-precision tensor cores on both operands (CUTLASS FP8/INT8, DeepGEMM, Triton block FP8)
    Generic,  // dequantize, then a 16-bit GEMM (slow path: can run slower than bf16 at large batch)
    Unknown,  // the registry records no kernel for this method on this GPU
};

// "fused", "native", "generic", "unknown".
const char* kernel_class_name(KernelClass k);

// Conditions of a conversion or kernel row; an empty list or nullopt means "any".
struct RuleConditions {
    std::vector<std::string> platforms;   // "cuda", "rocm"
    int min_capability = 0;               // compute capability x10 (sm_90 = 90)
    int max_capability = 1 << 20;
    std::vector<int> bits;
    std::vector<std::int64_t> group_sizes;  // -1 per channel
    std::optional<bool> symmetric;
    std::optional<bool> zero_point;
    std::optional<bool> block;
    std::vector<std::string> checkpoint_format_not;
    std::vector<std::string> quant_algo;  // ModelOpt quant_algo, upper case
    std::int64_t n_multiple = 0;          // output features must be a multiple (0: no condition)
    std::int64_t k_multiple = 0;          // input features must be a multiple
};

// The engine rewrites method `from` into `to` when the conditions hold (override_quantization_method).
struct ConversionRule {
    std::string from;
    std::string to;
    RuleConditions when;
    bool verified = true;
    std::string note;
    std::string file;
};

// The kernel a resolved method runs; the first matching row wins.
struct KernelRule {
    std::string method;   // resolved method name
    std::string scheme;   // compressed-tensors scheme ("W8A8-FP8", "WNA16", ...), "" for any
    RuleConditions when;
    std::string kernel;   // e.g. "Marlin", "Machete", "CUTLASS FP8"
    KernelClass kernel_class = KernelClass::Unknown;
    bool verified = true;
    std::string note;
    std::string file;
};

// A combination the engine refuses at startup (or errors on without a flag).
struct RefusalRule {
    std::string kind;                     // "kv_cache_scheme", "block_static_activation", "deprecated"
    std::string method;                   // the method it applies to ("" for lists in `methods`)
    std::vector<std::string> methods;     // "deprecated": the names
    std::vector<std::string> types;       // "kv_cache_scheme": accepted types
    std::vector<int> num_bits;            // "kv_cache_scheme": accepted bit widths
    std::vector<std::string> strategies;  // "kv_cache_scheme": accepted strategies
    bool symmetric_required = false;
    std::string message;                  // the engine's text, {placeholders} filled in
    std::string file;
};

// SGLang's exemption from the not-optimized warning (MXFP4/MXFP8 on SM100).
struct OptimizedExemption {
    std::vector<std::string> methods;
    int min_capability = 0;
    int max_capability = 1 << 20;
};

// One engine at one commit.
struct EngineSnapshot {
    std::string engine;        // "vllm", "sglang"
    std::string engine_name;   // "vLLM", "SGLang"
    std::string id;            // "vllm-B"
    std::string repository;    // "vllm-project/vllm"
    std::string commit;
    std::string date;          // "2026-05-19" or ""
    std::string version;       // "v0.5.3", "~v0.21-dev (by date, unverified)"
    bool complete = false;     // false: only the notes are known (seed 000's snapshots)
    std::string reference;
    std::vector<std::string> notes;

    std::vector<std::string> methods;          // registered quant_method names
    std::vector<std::string> cuda_only_methods;
    std::string methods_file;
    std::vector<std::string> override_order;
    std::string override_file;
    std::vector<ConversionRule> conversions;
    std::map<std::string, int> min_capability;  // method or "compressed-tensors/<scheme>" -> cc x10
    std::string capability_message;
    std::string capability_file;
    std::vector<KernelRule> kernels;
    std::optional<std::vector<std::string>> optimized;  // nullopt: the snapshot has no optimized list
    std::vector<OptimizedExemption> optimized_exemptions;
    std::string optimized_warning;
    std::string optimized_file;
    std::string optimized_note;
    std::vector<std::string> kv_cache_dtypes;                          // --kv-cache-dtype choices
    std::map<std::string, std::vector<std::string>> kv_cache_formats;  // quantplan KV format -> engine choices giving it
    std::string kv_cache_file;
    std::vector<RefusalRule> refusals;
    std::map<std::string, std::vector<std::string>> compatible_methods;
    std::vector<std::string> requantization_methods;
    std::map<std::string, std::string> messages;

    // "vLLM vllm-B (vllm-project/vllm@9aaf83ef502f, 2026-05-19)"
    std::string stamp() const;
    bool registers(std::string_view method) const;
};

// Every snapshot, in file order (date order within an engine).
struct EngineRegistry {
    std::vector<EngineSnapshot> snapshots;

    // The snapshot with `id`, or nullptr.
    const EngineSnapshot* find(std::string_view id) const;
    // The last complete snapshot of `engine` ("vllm", "sglang"), or nullptr.
    const EngineSnapshot* latest(std::string_view engine) const;
    // The complete snapshots, in order.
    std::vector<const EngineSnapshot*> complete() const;
};

// Parses one registry file (one engine). Throws Error naming the source and field.
std::vector<EngineSnapshot> parse_engine_snapshots(std::string_view json_text, const std::string& source);

// Loads every *.json under `dir` (sorted by name).
EngineRegistry load_engine_registry(const std::filesystem::path& dir);

// The registry compiled from assets/engines/ at build time.
const EngineRegistry& builtin_engine_registry();

// The texts compiled in, by file name ("vllm.json" -> text): tests compare them with the assets.
const std::map<std::string, std::string_view>& builtin_engine_registry_texts();

// The GPU an engine runs on, as the engines see it.
struct EngineGpu {
    std::string name;         // for messages
    bool cuda = true;         // false: ROCm (AMD)
    int capability = 0;       // compute capability x10 (sm_90 -> 90); 0 when unknown (non-CUDA)
};

// Reads "sm_90" / "sm_100" and the vendor of a profile.
EngineGpu engine_gpu(const GpuProfile& gpu);

// A checkpoint (or a planned scheme) as the engines' config classes read it.
struct EngineQuery {
    std::string method;            // declared quant_method, lower case
    int bits = 0;
    std::int64_t group_size = 0;   // -1 per channel, 0 not grouped / unknown
    bool symmetric = true;
    bool zero_point = false;
    bool weight_float = false;
    bool block = false;
    std::string activation;        // "", "int8", "fp8", "fp4"
    bool activation_static = false;
    std::string checkpoint_format;
    std::string quant_algo;        // ModelOpt, upper case
    // compressed-tensors kv_cache_scheme, when declared.
    std::optional<std::string> kv_type;
    int kv_num_bits = 0;
    std::string kv_strategy;
    bool kv_symmetric = true;
    std::string kv_format;         // quantplan KV format asked for (--kv), "" when not asked
    std::int64_t n = 0;            // a representative linear's output features (alignment rules), 0 unknown
    std::int64_t k = 0;            // its input features
};

// The compressed-tensors scheme vLLM would pick for a query ("W8A8-FP8", "WNA16", ...).
std::string compressed_tensors_scheme(const EngineQuery& q);

// What an engine snapshot does with a query on a GPU.
struct EngineResolution {
    const EngineSnapshot* snapshot = nullptr;
    bool registered = false;         // the declared method is a registered name
    std::string resolved_method;     // after conversions ("gptq_marlin")
    std::string scheme;              // compressed-tensors scheme, if any
    std::string kernel;              // "" when unknown
    KernelClass kernel_class = KernelClass::Unknown;
    bool kernel_verified = true;
    std::optional<bool> optimized;   // nullopt: no optimized list in this snapshot
    bool refused = false;            // the engine would not start with it
    std::vector<std::string> errors;    // why it refuses, in the engine's words where known
    std::vector<std::string> warnings;  // what it logs, in its words
    std::vector<std::string> notes;     // quantplan's remarks (generic kernel, assumed registry rows)
    std::vector<std::string> sources;   // files behind each decision
};

// Why `snapshot` cannot serve a KV cache of quantplan format `kv_format` ("bf16", "fp8", "int8"...),
// or nullopt when one of its --kv-cache-dtype choices gives it.
std::optional<std::string> kv_cache_refusal(const EngineSnapshot& snapshot, std::string_view kv_format);

// Replays `snapshot`'s resolution of `query` on `gpu`. Precondition: snapshot.complete.
EngineResolution resolve_engine(const EngineSnapshot& snapshot, const EngineQuery& query, const EngineGpu& gpu);

// The query an engine would see for a checkpoint of `scheme` (awq for asymmetric int4 groups, gptq
// for symmetric weight-only ints, compressed-tensors for W8A8-INT8, fp8, modelopt NVFP4, mxfp4);
// nullopt for unquantized schemes. `n`, `k`: a representative linear (0 unknown).
std::optional<EngineQuery> engine_query_for_scheme(const Scheme& scheme, std::int64_t n = 0, std::int64_t k = 0);

// The kernel quality the latest vLLM snapshot gives a weight-only scheme on `gpu`: Generic when it
// resolves a dequantize-then-GEMM kernel, Fused otherwise (also for W+A schemes).
KernelQuality engine_kernel_quality(const Scheme& scheme, const GpuProfile& gpu);

// The warnings the engines (latest complete snapshot of each) would print for these schemes on
// `gpu` with KV format `kv`, plus one for a generic kernel choice. Each names the scheme, the
// engine snapshot and the file behind it.
std::vector<std::string> engine_plan_warnings(const std::vector<Scheme>& schemes, const GpuProfile& gpu, KernelQuality kernel, const KvFormat& kv);

}  // namespace quantplan
