#include "core/scheme/bytes.h"

#include <array>
#include <cassert>

#include "core/base/error.h"

namespace quantplan {
namespace {

std::uint64_t cdiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }
std::uint64_t bytes_of(DType d) { return cdiv(static_cast<std::uint64_t>(dtype_bits(d)), 8); }

// Scale bytes of one scale level on a rows x cols tensor.
std::uint64_t scale_level_bytes(const ScaleDesc& s, std::int64_t rows, std::int64_t cols) {
    return u(s.group.group_count(rows, cols)) * bytes_of(s.dtype);
}

// Scales of static activation quantizers stored in the checkpoint (input_scale, input_global_scale).
std::uint64_t static_activation_scale_bytes(const Scheme& s) {
    if (!s.activations) return 0;
    std::uint64_t b = 0;
    // A static activation scale is per tensor: one number per linear.
    if (s.activations->scale && s.activations->scale->is_static) {
        b += bytes_of(s.activations->scale->dtype);
        // An asymmetric static activation quantizer also stores its zero point (input_zero_point).
        if (!s.activations->symmetric) b += bytes_of(s.activations->zero_point_dtype);
    }
    if (s.activations->scale2 && s.activations->scale2->is_static) b += bytes_of(s.activations->scale2->dtype);
    return b;
}

// bitsandbytes quantizes in second-level blocks of 256 absmax values (double quantization).
constexpr std::uint64_t kBnbNestedBlocksize = 256;
// Characters of the float bitsandbytes writes as nested_offset (Python repr of a float32 mean,
// e.g. 0.012467634677886963): data dependent, so this is an estimate (reference §6: J unverified).
constexpr std::size_t kBnbNestedOffsetReprChars = 20;

// Bytes of bitsandbytes' quant_state.bitsandbytes__<type> tensor: the UTF-8 JSON (json.dumps) of
// the state's non-tensor fields. 82 bytes for nf4, blocksize 64, bfloat16, [4096, 4096].
std::uint64_t bnb_quant_state_bytes(const Scheme& s, std::uint64_t rows, std::uint64_t cols, std::uint64_t blocksize, bool double_quant) {
    const char* dtype = s.activation_dtype == DType::Fp16 ? "float16" : s.activation_dtype == DType::Fp32 ? "float32" : "bfloat16";
    std::string state = "{\"quant_type\": \"nf4\", \"blocksize\": " + std::to_string(blocksize) + ", \"dtype\": \"" + dtype +
                        "\", \"shape\": [" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
    if (double_quant)
        state += ", \"nested_blocksize\": " + std::to_string(kBnbNestedBlocksize) + ", \"nested_dtype\": \"float32\", \"nested_offset\": " +
                 std::string(kBnbNestedOffsetReprChars, '0');
    return state.size() + 1;  // the closing brace
}

}  // namespace

TensorBytes& TensorBytes::operator+=(const TensorBytes& o) {
    payload_bytes += o.payload_bytes;
    scale_bytes += o.scale_bytes;
    zero_point_bytes += o.zero_point_bytes;
    aux_bytes += o.aux_bytes;
    return *this;
}

std::uint64_t unquantized_bytes(DType dtype, std::int64_t elements) {
    return cdiv(u(elements) * static_cast<std::uint64_t>(dtype_bits(dtype)), 8);
}

TensorBytes quantized_tensor_bytes(const Scheme& scheme, std::int64_t rows, std::int64_t cols) {
    assert(rows > 0 && cols > 0);
    const TensorQuant& w = scheme.weights;
    TensorBytes b;
    if (!w.is_quantized()) {
        b.payload_bytes = unquantized_bytes(w.storage, rows * cols);
        return b;
    }
    const std::uint64_t n = u(rows), k = u(cols);
    const std::uint64_t bits = static_cast<std::uint64_t>(dtype_bits(w.storage));
    const ScaleDesc& s = *w.scale;
    const std::uint64_t groups = u(s.group.group_count(rows, cols));
    // Groups along K per output row (the g of checkpoint-formats.md).
    const std::uint64_t g = s.group.cols < 0 ? 1 : cdiv(k, u(s.group.cols));
    const std::uint64_t zero_bits = w.symmetric ? 0 : static_cast<std::uint64_t>(dtype_bits(w.zero_point_dtype));

    switch (scheme.layout) {
        case CheckpointLayout::AutoAwqGemm:
            // qweight I32 [K, N/8] (8 nibbles per word along N); qzeros I32 [K/G, N/8]; scales F16 [K/G, N].
            b.payload_bytes = 4 * k * cdiv(n * bits, 32);
            b.zero_point_bytes = 4 * g * cdiv(n * bits, 32);
            b.scale_bytes = g * n * bytes_of(s.dtype);
            break;
        case CheckpointLayout::Gptq:
            // qweight I32 [K*b/32, N]; qzeros I32 [g, N*b/32] (stored even when symmetric);
            // scales F16 [g, N]; g_idx I32 [K].
            b.payload_bytes = 4 * n * cdiv(k * bits, 32);
            b.zero_point_bytes = 4 * g * cdiv(n * bits, 32);
            b.scale_bytes = g * n * bytes_of(s.dtype);
            b.aux_bytes = 4 * k;
            break;
        case CheckpointLayout::CompressedTensorsPacked: {
            // weight_packed I32 [N, cdiv(K, 32/b)]; weight_scale [N, g]; weight_shape I64 [2];
            // asymmetric: weight_zero_point I32 [cdiv(N, 32/b), g].
            const std::uint64_t per_word = 32 / bits;
            b.payload_bytes = 4 * n * cdiv(k, per_word);
            b.scale_bytes = groups * bytes_of(s.dtype);
            b.zero_point_bytes = w.symmetric ? 0 : 4 * cdiv(n, per_word) * g;
            b.aux_bytes = 16;
            break;
        }
        case CheckpointLayout::AutoAwqGemv: {
            // qweight I32 [N, K/8] (along K); qzeros I32 [N, Z]; scales F16 [N, 8Z] zero-padded, with
            // Z = m * cdiv(cdiv(K/G, 8), m), m = 1 (G >= 128), 2 (G = 64), 4 (G = 32) (AutoAWQ gemv.py).
            const std::uint64_t m = s.group.cols < 0 || s.group.cols >= 128 ? 1 : s.group.cols >= 64 ? 2 : 4;
            const std::uint64_t z = m * cdiv(cdiv(g, 8), m);
            b.payload_bytes = 4 * n * cdiv(k * bits, 32);
            b.zero_point_bytes = 4 * n * z;
            b.scale_bytes = n * 8 * z * bytes_of(s.dtype);
            break;
        }
        case CheckpointLayout::CompressedTensorsPackedGIdx: {
            // As CompressedTensorsPacked, plus weight_g_idx I32 [K] (actorder "group").
            const std::uint64_t per_word = 32 / bits;
            b.payload_bytes = 4 * n * cdiv(k, per_word);
            b.scale_bytes = groups * bytes_of(s.dtype);
            b.zero_point_bytes = w.symmetric ? 0 : 4 * cdiv(n, per_word) * g;
            b.aux_bytes = 16 + 4 * k;
            break;
        }
        case CheckpointLayout::UnpackedBytes:
            // One value per byte (int8 container); zero points, when stored, one byte per group.
            b.payload_bytes = n * k;
            b.scale_bytes = groups * bytes_of(s.dtype);
            b.zero_point_bytes = w.symmetric ? 0 : groups;
            break;
        case CheckpointLayout::Bitsandbytes4bit: {
            // weight U8 [cdiv(NK,2), 1]; absmax per block of B flattened values: F32, or U8 plus
            // nested_absmax F32 [cdiv(cdiv(NK,B),256)] with double quantization (8-bit first-level
            // scale); quant_map F32 [16] (+ nested_quant_map F32 [256]); quant_state JSON.
            const std::uint64_t block = s.group.cols > 0 ? u(s.group.cols) : 64;
            const std::uint64_t blocks = cdiv(n * k, block);
            const bool double_quant = dtype_bits(s.dtype) == 8;
            b.payload_bytes = cdiv(n * k, 2);
            b.scale_bytes = double_quant ? blocks + 4 * cdiv(blocks, kBnbNestedBlocksize) : 4 * blocks;
            b.aux_bytes = 4 * 16 + (double_quant ? 4 * 256 : 0) + bnb_quant_state_bytes(scheme, n, k, block, double_quant);
            return b;  // the second level is counted above, per flattened block
        }
        case CheckpointLayout::Bitsandbytes8bit:
            // weight I8 [N, K]; SCB F32 [N]; weight_format U8 0-d.
            b.payload_bytes = n * k;
            b.scale_bytes = groups * bytes_of(s.dtype);
            b.aux_bytes = 1;
            break;
        case CheckpointLayout::Generic:
            b.payload_bytes = cdiv(n * k * bits, 8);
            b.scale_bytes = groups * bytes_of(s.dtype);
            b.zero_point_bytes = cdiv(groups * zero_bits, 8);
            break;
    }
    if (w.scale2) b.scale_bytes += scale_level_bytes(*w.scale2, rows, cols);
    b.aux_bytes += static_activation_scale_bytes(scheme);
    return b;
}

double effective_bits(const Scheme& scheme, std::int64_t rows, std::int64_t cols) {
    const TensorBytes b = quantized_tensor_bytes(scheme, rows, cols);
    return static_cast<double>(b.total_bytes()) * 8.0 / (static_cast<double>(rows) * static_cast<double>(cols));
}

bool scheme_covers(const Scheme& scheme, TensorRole role) {
    if (!scheme.weights.is_quantized()) return false;
    const LayerCoverage& c = scheme.covers;
    switch (role) {
        case TensorRole::AttentionLinear:
        case TensorRole::MambaLinear: return c.attention;
        case TensorRole::MlpLinear:
        case TensorRole::SharedExpertLinear: return c.mlp;
        case TensorRole::ExpertLinear: return c.moe_experts;
        case TensorRole::LmHead: return c.lm_head;
        case TensorRole::Embedding: return c.embeddings;
        case TensorRole::Router: return c.routers;
        default: return false;
    }
}

CheckpointBudget checkpoint_budget(const std::vector<TensorInfo>& inventory, const Scheme& scheme, DType model_dtype,
                                   bool per_tensor) {
    // A bf16/fp16/fp32 scheme stores everything in its own dtype.
    const DType leftover_dtype = scheme.weights.is_quantized() ? model_dtype : scheme.weights.storage;
    const auto scheme_for = [&](const TensorInfo& t) -> const Scheme* {
        return !t.never_quantized && scheme_covers(scheme, t.role) && t.shape.size() == 2 ? &scheme : nullptr;
    };
    return checkpoint_budget(inventory, scheme_for, scheme, leftover_dtype, per_tensor);
}

CheckpointBudget checkpoint_budget(const std::vector<TensorInfo>& inventory,
                                   const std::function<const Scheme*(const TensorInfo&)>& scheme_for, const Scheme& scheme,
                                   DType leftover_dtype, bool per_tensor) {
    constexpr std::size_t kRoles = kTensorRoleCount;
    std::array<RoleBudget, kRoles> roles{};
    std::array<bool, kRoles> present{};
    CheckpointBudget out;
    std::uint64_t quantized_bytes_sum = 0;  // exact: effective bits are this x 8 / quantized parameters
    for (const TensorInfo& t : inventory) {
        // An entry of a compressed inventory (compress_inventory) stands for `count` equal tensors.
        const auto count = static_cast<std::uint64_t>(t.count);
        const std::size_t r = static_cast<std::size_t>(t.role);
        present[r] = true;
        roles[r].role = t.role;
        const std::int64_t n = t.elements();
        roles[r].parameters += n * t.count;
        out.total_parameters += n * t.count;
        out.bf16_bytes += unquantized_bytes(DType::Bf16, n) * count;
        TensorBudget tb{&t, false, {}};
        if (t.fixed_dtype) {
            tb.bytes.payload_bytes = unquantized_bytes(*t.fixed_dtype, n);
            roles[r].unquantized_bytes += tb.bytes.payload_bytes * count;
        } else if (const Scheme* stored = t.shape.size() == 2 ? scheme_for(t) : nullptr) {
            tb.quantized = true;
            tb.bytes = quantized_tensor_bytes(*stored, t.shape[0], t.shape[1]);
            roles[r].payload_bytes += tb.bytes.payload_bytes * count;
            roles[r].metadata_bytes += tb.bytes.metadata_bytes() * count;
            out.quantized_parameters += n * t.count;
            quantized_bytes_sum += tb.bytes.total_bytes() * count;
        } else {
            tb.bytes.payload_bytes = unquantized_bytes(leftover_dtype, n);
            roles[r].unquantized_bytes += tb.bytes.payload_bytes * count;
        }
        if (t.speculative) {
            out.speculative_bytes += tb.bytes.total_bytes() * count;
            out.speculative_parameters += n * t.count;
        }
        if (per_tensor) out.tensors.push_back(tb);
    }
    for (std::size_t r = 0; r < kRoles; ++r) {
        if (!present[r]) continue;
        out.by_role.push_back(roles[r]);
        out.quantized_payload_bytes += roles[r].payload_bytes;
        out.metadata_bytes += roles[r].metadata_bytes;
        out.unquantized_bytes += roles[r].unquantized_bytes;
    }
    out.checkpoint_bytes = out.quantized_payload_bytes + out.metadata_bytes + out.unquantized_bytes;
    out.effective_bits = out.quantized_parameters > 0 ? static_cast<double>(quantized_bytes_sum) * 8.0 / static_cast<double>(out.quantized_parameters)
                                                      : static_cast<double>(dtype_bits(leftover_dtype));
    out.compression_vs_bf16 = out.checkpoint_bytes > 0 ? static_cast<double>(out.bf16_bytes) / static_cast<double>(out.checkpoint_bytes) : 1.0;
    out.naive_bytes = static_cast<double>(out.bf16_bytes) * static_cast<double>(dtype_bits(scheme.weights.storage)) / 16.0;
    return out;
}

}  // namespace quantplan
