#pragma once
// A quantization scheme: one point in the design space of seed 000 §4.1, given per tensor role.
//
// The axes: storage format, granularity (group shape), static or dynamic scales, symmetry (with
// zero-point storage), an optional second-level scale (NVFP4, MXFP4), accumulation, and which layer
// kinds the scheme covers. Activations and the KV cache are separate roles: a scheme without an
// activation quantizer keeps 16-bit activations ("a16"); the KV cache format is chosen on its own
// (`KvFormat`), as engines do with --kv-cache-dtype.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"

namespace quantplan {

// How many elements share one scale, as (rows, cols) of the tensor as stored: weights are
// [N output channels, K input channels], activations [T tokens, K]. -1 means the whole extent of
// that dimension. Per-channel weights are (1, -1): one scale per output row. (vLLM's GroupShape
// describes the transposed operand, so its PER_CHANNEL reads (-1, 1).)
struct GroupShape {
    std::int64_t rows = -1;  // rows sharing a scale; -1 = all rows
    std::int64_t cols = -1;  // columns sharing a scale; -1 = all columns

    static constexpr GroupShape per_tensor() { return {-1, -1}; }
    static constexpr GroupShape per_row() { return {1, -1}; }  // per output channel / per token
    static constexpr GroupShape per_group(std::int64_t g) { return {1, g}; }
    static constexpr GroupShape block(std::int64_t r, std::int64_t c) { return {r, c}; }

    bool is_per_tensor() const { return rows == -1 && cols == -1; }
    bool is_per_row() const { return rows == 1 && cols == -1; }
    bool is_per_group() const { return rows == 1 && cols > 0; }
    bool is_block() const { return rows > 1 && cols > 0; }

    // Number of scale groups on a rows x cols tensor, with partial groups at the edges counted
    // (ceil). Precondition: rows, cols > 0.
    std::int64_t group_count(std::int64_t tensor_rows, std::int64_t tensor_cols) const;

    friend bool operator==(const GroupShape&, const GroupShape&) = default;
};

// One scale factor level: its number format, whether it is frozen in the checkpoint (static)
// or computed at run time (dynamic), and its group shape.
struct ScaleDesc {
    DType dtype = DType::Fp16;
    bool is_static = true;
    GroupShape group;

    friend bool operator==(const ScaleDesc&, const ScaleDesc&) = default;
};

// How one tensor role is quantized. `scale` absent means the tensor is stored as is in `storage`.
struct TensorQuant {
    DType storage = DType::Bf16;
    std::optional<ScaleDesc> scale;   // first-level scale
    std::optional<ScaleDesc> scale2;  // second-level scale (NVFP4's fp32 per tensor), if any
    bool symmetric = true;            // false: a zero point per scale group
    DType zero_point_dtype = DType::Int4;  // storage of zero points when asymmetric

    bool is_quantized() const { return scale.has_value(); }
    friend bool operator==(const TensorQuant&, const TensorQuant&) = default;
};

// Which layer kinds a scheme quantizes. Everything not covered stays in the model's dtype.
struct LayerCoverage {
    bool attention = true;     // q/k/v/o projections
    bool mlp = true;           // dense MLP and shared-expert projections
    bool moe_experts = true;   // routed experts
    bool lm_head = false;      // output projection (AWQ/GPTQ leave it off by default)
    bool embeddings = false;   // input embedding table
    bool routers = false;      // MoE router / gate matrices

    friend bool operator==(const LayerCoverage&, const LayerCoverage&) = default;
};

// How an exporter lays a quantized linear out on disk; decides packing and extra tensors
// (see ../shared/reference/checkpoint-formats.md §9 and docs/schemes.md).
enum class CheckpointLayout : std::uint8_t {
    Generic,                  // payload bits packed densely, one scale (and zero) per group
    AutoAwqGemm,              // AutoAWQ GEMM: qweight I32 [K, N/8], qzeros I32 [K/G, N/8], scales F16 [K/G, N]
    Gptq,                     // GPTQ v1: qweight I32 [K*b/32, N], qzeros I32 [g, N*b/32], scales F16, g_idx I32 [K]
    CompressedTensorsPacked,  // compressed-tensors pack-quantized: weight_packed I32 [N, K/(32/b)], weight_shape
    // The layouts below are written by the checkpoint inspector (core/checkpoint/quant_config.cpp).
    AutoAwqGemv,              // AutoAWQ GEMV: qweight I32 [N, K/8], qzeros I32 [N, Z], scales F16 [N, 8Z] (Z padded, reference §1)
    CompressedTensorsPackedGIdx,  // pack-quantized with actorder "group": CompressedTensorsPacked plus weight_g_idx I32 [K]
    UnpackedBytes,            // one value per byte (compressed-tensors naive-quantized, int-quantized below 8 bits)
    Bitsandbytes4bit,         // bnb 4-bit: weight U8 [cdiv(NK,2),1], absmax per block (U8 + nested F32 with double quant), quant_map, quant_state JSON
    Bitsandbytes8bit,         // bnb LLM.int8: weight I8 [N, K], SCB F32 [N], weight_format U8 0-d
};

// Accumulation / matmul input classes a GPU prices separately.
enum class MatmulType : std::uint8_t { Bf16, Fp16, Fp8, Int8, Int4, Fp4 };

// A quantization scheme: weights, activations (none = 16-bit), accumulation, coverage, layout.
struct Scheme {
    TensorQuant weights;
    std::optional<TensorQuant> activations;  // nullopt: activations stay in `activation_dtype`
    DType activation_dtype = DType::Bf16;     // dtype of unquantized activations
    DType accumulation = DType::Fp32;         // accumulator of the matmul (int32 for int8 GEMMs)
    LayerCoverage covers;
    CheckpointLayout layout = CheckpointLayout::Generic;
    // `native`: the checkpoint as its config.json's quantization_config declares it, module by
    // module (scheme_costs resolves it from the model; the other fields are then the declared
    // default rule's, or the model dtype's when nothing is declared).
    bool native = false;

    // True when weights are quantized and activations are not (W4A16, W8A16, ...).
    bool is_weight_only() const { return weights.is_quantized() && !activations.has_value(); }

    // The tensor-core input type the scheme's linears run on.
    MatmulType matmul_type() const;

    friend bool operator==(const Scheme&, const Scheme&) = default;
};

// Parses a scheme name. Grammar (docs/schemes.md):
//   native | bf16 | fp16 | fp32
//   w<B>a<A>[-<format>][-<granularity>][-sym|-asym][-static]
// with <format> int|int8|fp8|fp8e5m2|nvfp4|mxfp4, <granularity> g<N>|block<N>|ch|tensor.
// Throws Error naming the scheme when the name is not in the grammar or the combination is one
// the engines reject (validate_scheme).
Scheme parse_scheme(std::string_view name);

// The canonical name of a scheme (parse_scheme(scheme_name(s)) == s for schemes from the grammar).
std::string scheme_name(const Scheme& scheme);

// The grammar name of what the scheme stores: scheme_name() except that a resolved `native`
// scheme gives its declared scheme's name ("w8a8-fp8-block128" for DeepSeek-V3's FP8).
std::string stored_scheme_name(const Scheme& scheme);

// Throws Error with the reason if `scheme` is a combination no engine runs (e.g. static activation
// scales with 2-D weight blocks, a zero point on a float format, a non-positive group size).
void validate_scheme(const Scheme& scheme);

// Parses a comma-separated list of scheme names.
std::vector<Scheme> parse_scheme_list(std::string_view names);

// The canonical names the documentation lists, in display order.
const std::vector<std::string>& canonical_scheme_names();

// The seed's six serving configurations: bf16, w8a16-int8, w4a16-g128, w4a16-g32, w8a8-int8, w8a8-fp8.
const std::vector<std::string>& default_serving_scheme_names();

// KV-cache storage: bf16, fp16, fp8 (e4m3, per-tensor static scale), fp8_e5m2, int8 and int4
// (per token and head dynamic scales; int4 also a zero point).
struct KvFormat {
    TensorQuant quant;

    friend bool operator==(const KvFormat&, const KvFormat&) = default;
};

// Parses a KV format name ("bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "int8", "int4").
KvFormat parse_kv_format(std::string_view name);

// Whether a KV format name is "auto" (the engines' --kv-cache-dtype default: the model dtype, or
// the format a checkpoint declares where the engine follows it; Workload::kv_auto).
bool kv_name_is_auto(std::string_view name);

// The canonical name of a KV format.
std::string kv_format_name(const KvFormat& kv);

// Bytes one token's K and V take in one layer for `num_kv_heads` heads of `head_dim`, with the
// scales (and zero points) the format stores per token and head; per-tensor scales are not per
// token and are counted by kv_fixed_bytes_per_layer.
std::uint64_t kv_bytes_per_token_per_layer(const KvFormat& kv, std::int64_t num_kv_heads, std::int64_t head_dim);

// Bytes one token's MLA latent takes in one layer: kv_lora_rank + qk_rope_head_dim values (one
// vector, no K/V pair), with the format's per-token scale (vLLM MLAAttentionSpec).
std::uint64_t latent_cache_bytes_per_token_per_layer(const KvFormat& kv, std::int64_t kv_lora_rank, std::int64_t qk_rope_head_dim);

// Bytes a layer's KV cache keeps regardless of length (per-tensor k_scale and v_scale).
std::uint64_t kv_fixed_bytes_per_layer(const KvFormat& kv);

// All KV format names, in display order.
const std::vector<std::string>& kv_format_names();

}  // namespace quantplan
