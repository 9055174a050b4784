#pragma once
// Byte budgets: what each tensor of a checkpoint costs on disk (and in GPU memory) under a scheme.
// Every byte count goes through quantized_tensor_bytes(), the one place that knows packings.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// Bytes of one stored tensor (or of a quantized linear and its companion tensors).
struct TensorBytes {
    std::uint64_t payload_bytes = 0;     // the (packed) values
    std::uint64_t scale_bytes = 0;       // first- and second-level scales
    std::uint64_t zero_point_bytes = 0;  // zero points (asymmetric)
    std::uint64_t aux_bytes = 0;         // g_idx, weight_shape, static activation scales

    std::uint64_t metadata_bytes() const { return scale_bytes + zero_point_bytes + aux_bytes; }
    std::uint64_t total_bytes() const { return payload_bytes + metadata_bytes(); }
    TensorBytes& operator+=(const TensorBytes& o);
};

// Bytes of an N x K linear weight quantized by `scheme` (its weights, static activation scales and
// layout). Partial groups and blocks at the edges are counted (ceil). Preconditions: rows, cols > 0.
TensorBytes quantized_tensor_bytes(const Scheme& scheme, std::int64_t rows, std::int64_t cols);

// Bytes of `elements` values stored unquantized in `dtype`.
std::uint64_t unquantized_bytes(DType dtype, std::int64_t elements);

// Bits per weight of an N x K linear under `scheme`: total bytes x 8 / (N x K).
double effective_bits(const Scheme& scheme, std::int64_t rows, std::int64_t cols);

// True when `scheme` quantizes a tensor of `role`.
bool scheme_covers(const Scheme& scheme, TensorRole role);

// One tensor's budget in a checkpoint.
struct TensorBudget {
    const TensorInfo* tensor = nullptr;  // into the inventory the budget was computed from
    bool quantized = false;
    TensorBytes bytes;
};

// Bytes of one role (attention, mlp, experts, lm_head, embedding, norm, ...).
struct RoleBudget {
    TensorRole role;
    std::int64_t parameters = 0;
    std::uint64_t payload_bytes = 0;      // quantized payload
    std::uint64_t metadata_bytes = 0;     // scales, zero points, auxiliary tensors
    std::uint64_t unquantized_bytes = 0;  // tensors left in the model dtype
    std::uint64_t total_bytes() const { return payload_bytes + metadata_bytes + unquantized_bytes; }
};

// The whole checkpoint under one scheme.
struct CheckpointBudget {
    std::uint64_t checkpoint_bytes = 0;         // sum over tensors, without safetensors headers
    std::uint64_t quantized_payload_bytes = 0;
    std::uint64_t metadata_bytes = 0;
    std::uint64_t unquantized_bytes = 0;
    std::int64_t quantized_parameters = 0;
    std::int64_t total_parameters = 0;
    double effective_bits = 0.0;                // over the quantized tensors (16 for bf16)
    std::uint64_t speculative_bytes = 0;        // of checkpoint_bytes: MTP modules, loaded only for speculative decoding
    std::int64_t speculative_parameters = 0;
    std::uint64_t bf16_bytes = 0;               // the same model in bf16
    double compression_vs_bf16 = 1.0;           // bf16_bytes / checkpoint_bytes
    double naive_bytes = 0.0;                   // bf16_bytes x payload bits / 16: the "4-bit is a quarter" expectation
    std::vector<RoleBudget> by_role;            // roles present in the model, in TensorRole order
    std::vector<TensorBudget> tensors;          // filled when asked for
};

// Prices every tensor of `inventory` under `scheme` (an entry counts TensorInfo::count times, so a
// compressed inventory gives the same budget); `model_dtype` is the dtype of what stays unquantized
// (bf16 for every bundled model). With `per_tensor` the budget lists each entry.
CheckpointBudget checkpoint_budget(const std::vector<TensorInfo>& inventory, const Scheme& scheme,
                                   DType model_dtype = DType::Bf16, bool per_tensor = false);

// The same with a scheme per tensor: `scheme_for(t)` is the scheme tensor t is stored with, or
// nullptr when it stays in `model_dtype` (scheme `native`: the rules of a declared quantization
// config). `reference` gives the payload bits of naive_bytes and the effective bits when nothing
// is quantized.
CheckpointBudget checkpoint_budget(const std::vector<TensorInfo>& inventory,
                                   const std::function<const Scheme*(const TensorInfo&)>& scheme_for, const Scheme& reference,
                                   DType model_dtype, bool per_tensor = false);

}  // namespace quantplan
