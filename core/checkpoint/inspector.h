#pragma once
// The checkpoint inspector: what a checkpoint declares (config.json, quantization_config) against
// what it holds (safetensors headers), tensor by tensor, role by role and in total.
//
// read_checkpoint() does the I/O: the small JSON files and each *.safetensors header (never a
// payload). inspect_checkpoint() is pure: it predicts every tensor from the architecture and the
// quantization config with core's byte functions (quantized_tensor_bytes, unquantized_bytes, so
// the inspector and the planner never disagree), maps each stored tensor (qweight, scales,
// weight_packed, weight_scale_inv, ...) back to the logical tensor it belongs to, and names every
// difference larger than the checkpoint's header bytes (seed 003: "if your prediction misses the
// file size by more than a header, something is not what the config says it is").
// docs/inspector.md documents the report and its JSON keys.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/checkpoint/quant_config.h"
#include "core/checkpoint/safetensors.h"
#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/quant_methods/registry.h"
#include "core/scheme/bytes.h"

namespace quantplan {

// Largest config.json (or other small JSON file of a checkpoint) read, bytes.
inline constexpr std::uint64_t kMaxCheckpointConfigBytes = 16u << 20;
// Largest model.safetensors.index.json read, bytes (a 671B model's index is a few MB).
inline constexpr std::uint64_t kMaxIndexBytes = 64u << 20;
// Most *.safetensors files read from one folder.
inline constexpr std::size_t kMaxCheckpointFiles = 100000;
// Most tensors an architecture may declare before the inspector refuses to predict it (DeepSeek-V3,
// 256 experts x 61 layers, has about 48,000): a few bytes of config.json must not cost gigabytes.
inline constexpr std::int64_t kMaxInventoryTensors = 1'000'000;

// One *.safetensors file: its header, or the one error that stopped it.
struct CheckpointFile {
    std::string name;                        // file name inside the checkpoint folder
    std::uint64_t file_bytes = 0;
    std::optional<SafetensorsHeader> header; // absent when `error` is set
    std::string error;
};

// Everything read from disk, uninterpreted.
struct CheckpointInput {
    std::string path;                           // as given
    std::optional<std::string> config_json;     // config.json
    std::optional<std::string> hf_quant_config; // hf_quant_config.json
    std::optional<std::string> quant_config;    // quant_config.json
    std::optional<std::string> quantize_config; // quantize_config.json
    std::optional<std::string> index_json;      // model.safetensors.index.json
    std::vector<CheckpointFile> files;          // sorted by name
    std::vector<std::string> read_errors;       // files that exist but could not be read
};

// Reads `path`: a checkpoint folder, a lone config.json or a lone .safetensors file. Throws Error
// when the path does not exist or is none of these; per-file problems go to read_errors / files.
CheckpointInput read_checkpoint(const std::filesystem::path& path);

// What the inspector needs besides the files.
struct InspectOptions {
    std::optional<GpuProfile> gpu;  // engines' kernel choices are resolved for this GPU
    std::string kv_format;          // quantplan KV format to check the engines against ("" none)
};

// Which part of a quantized linear a stored tensor is.
enum class TensorComponent : std::uint8_t { Payload, Scale, ZeroPoint, Aux, KvScale, Unmatched };

// "payload", "scale", "zero_point", "aux", "kv_scale", "unmatched".
const char* tensor_component_name(TensorComponent c);

// One tensor as the checkpoint stores it.
struct StoredTensor {
    std::string name;
    std::string file;
    SafetensorsDtype dtype = SafetensorsDtype::U8;
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;
    std::string role;                 // tensor_role_name() of its logical tensor, "kv_cache" or "other"
    std::optional<std::size_t> logical;  // index into InspectReport::logical
    TensorComponent component = TensorComponent::Unmatched;
};

// One tensor of the architecture (or one layer's KV-cache scales) with its prediction.
struct LogicalTensor {
    std::string name;                 // e.g. "model.layers.0.self_attn.q_proj.weight"
    std::string module;               // name without ".weight" for linears
    TensorRole role = TensorRole::Norm;
    bool kv_scales = false;           // the k_scale / v_scale pair of one attention layer
    std::int64_t layer = -1;
    std::vector<std::int64_t> shape;
    bool quantized = false;
    std::string scheme;               // scheme name, or the dtype it stays in ("bf16")
    std::string rule;                 // quantization rule that decided it ("" none)
    TensorBytes predicted;
    TensorBytes actual;               // by component, summed over its stored tensors
    std::vector<std::size_t> stored;  // indices into InspectReport::tensors

    // actual - predicted, bytes.
    std::int64_t difference_bytes() const {
        return static_cast<std::int64_t>(actual.total_bytes()) - static_cast<std::int64_t>(predicted.total_bytes());
    }
};

// Predicted and actual bytes of one role.
struct RoleBytes {
    std::string role;                 // tensor_role_name(), "kv_cache", "other"
    std::uint64_t predicted_bytes = 0;
    std::uint64_t actual_bytes = 0;
};

// A difference the report names: larger than the header bytes, or a tensor missing or unexpected.
struct Mismatch {
    std::string level;                // "tensor", "role", "total", "file", "index"
    std::string name;
    std::uint64_t predicted_bytes = 0;
    std::uint64_t actual_bytes = 0;
    std::string detail;               // what differs, in words

    std::int64_t difference_bytes() const { return static_cast<std::int64_t>(actual_bytes) - static_cast<std::int64_t>(predicted_bytes); }
};

// How many modules one rule (or "unquantized") decided, per role.
struct RuleUse {
    std::string rule;                 // rule name, "" for unquantized
    std::string scheme;
    std::string description;
    std::vector<std::pair<std::string, std::int64_t>> roles;  // role name -> count
};

// The whole report.
struct InspectReport {
    std::string path;
    bool has_config = false;
    std::optional<ModelConfig> model;
    DType model_dtype = DType::Bf16;
    QuantizationConfig quantization;
    bool quantization_parsed = false;   // false when the config could not be read
    std::vector<CheckpointFile> files;  // headers as read (errors included)
    std::vector<StoredTensor> tensors;  // every stored tensor, files in order, offsets in order
    std::vector<LogicalTensor> logical; // the architecture's tensors, then KV-scale pairs
    std::vector<RuleUse> rule_uses;
    std::vector<RoleBytes> roles;
    bool compared = false;              // safetensors files were read: actual bytes exist
    std::uint64_t predicted_bytes = 0;  // sum over logical tensors
    std::uint64_t actual_bytes = 0;     // sum over stored tensors
    std::uint64_t header_bytes = 0;     // sum of 8 + n over the files read
    std::uint64_t file_bytes = 0;       // sum of the file sizes read
    std::uint64_t tolerance_bytes = 0;  // = header_bytes: differences up to this are not named
    std::optional<std::uint64_t> index_total_size_bytes;  // model.safetensors.index.json metadata.total_size
    std::vector<Mismatch> mismatches;
    std::vector<std::string> unexpected;  // stored tensors no prediction accounts for
    std::vector<std::string> missing;     // predicted tensors the files do not hold
    std::optional<EngineQuery> engine_query;
    std::string engine_gpu;               // GPU the engines were resolved for
    std::vector<EngineResolution> engines;
    std::vector<std::string> errors;      // one per unreadable file or config: exit status 1
    std::vector<std::string> warnings;    // unknown method, index inconsistencies
    std::vector<std::string> notes;       // what the prediction assumed

    std::int64_t difference_bytes() const { return static_cast<std::int64_t>(actual_bytes) - static_cast<std::int64_t>(predicted_bytes); }
};

// Compares what `input` declares with what it holds. Never throws for bad input: each unreadable
// file or config becomes one entry of `errors` and the rest of the report is still produced.
InspectReport inspect_checkpoint(const CheckpointInput& input, const InspectOptions& options = {});

}  // namespace quantplan
